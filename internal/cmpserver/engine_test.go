package cmpserver

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/engine"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// TestRegistryConcurrentPullOnce is the acceptance check on a real (in-process)
// registry with the bundle package's ImageLoader: 100 concurrent
// GenerateManifest calls for one bundle image fetch its manifest and blobs
// once and answer identically. Tag resolutions (HEAD) happen per request,
// collapsed while one is in flight: tags move.
func TestRegistryConcurrentPullOnce(t *testing.T) {
	host, reqs := bundletest.NewRegistry(t)
	bundletest.PushDir(t, host, "operators/tiny-bundle", "v1", filepath.Join(repoDir, "bundles/tiny"))
	ref := host + "/operators/tiny-bundle:v1"

	// What one pull costs, measured with a loader of its own.
	reqs.Reset()
	one := &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}
	o, err := one.Resolve(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := one.Load(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	isManifestGet := func(r bundletest.Request) bool {
		return r.Method == http.MethodGet && strings.Contains(r.Path, "/manifests/")
	}
	pullGets, pullBlobs := reqs.Count(isManifestGet), reqs.BlobGets()
	reqs.Reset()

	loader := &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}
	m := engine.NewMetrics()
	ts := startServer(t, engine.NewEngine(engine.EngineOptions{Loader: loader, Metrics: m}), func(o *ServerOptions) { o.Metrics = m })

	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	os.MkdirAll(app, 0o755)
	os.WriteFile(filepath.Join(app, spec.FileName), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: "+ref+"\n  namespace: tiny-system\n"), 0o644)
	tgz := tgzOf(t, dir)

	const n = 100
	var wg sync.WaitGroup
	outs := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "app"})
			errs[i] = err
			if err == nil {
				outs[i] = strings.Join(resp.Manifests, "---\n")
			}
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if outs[i] != outs[0] {
			t.Fatalf("call %d answered differently", i)
		}
	}
	gets := reqs.Count(isManifestGet)
	heads := reqs.Count(func(r bundletest.Request) bool { return r.Method == http.MethodHead })
	if gets != pullGets || reqs.BlobGets() != pullBlobs {
		t.Errorf("registry served %d manifest GETs and %d blob GETs, want one pull's %d and %d", gets, reqs.BlobGets(), pullGets, pullBlobs)
	}
	if heads < 1 || heads > n {
		t.Errorf("%d HEADs", heads)
	}
	t.Logf("100 concurrent calls: %d manifest GET, %d blob GETs, %d tag resolutions (HEAD)", gets, reqs.BlobGets(), heads)
	if got := metricValue(t, m, engine.MetricPulls, "ok"); got != 1 {
		t.Errorf("pull metric = %v", got)
	}
	if !strings.Contains(outs[0], `"kind":"Deployment"`) {
		t.Error("no Deployment rendered")
	}
}

// engineReq is a request for the image app written by writeImageApp.
func engineReq(t *testing.T) render.Request {
	dir := writeImageApp(t)
	app := filepath.Join(dir, "apps", "img")
	req, err := BuildRequest(app, dir, &AppEnv{})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func newCountingEngine(l render.Loader, opts ...func(*engine.EngineOptions)) (*engine.Engine, *countingRenderer) {
	c := &countingRenderer{}
	o := engine.EngineOptions{Loader: l, NewRenderer: func(l render.Loader) engine.Renderer {
		c.inner = &render.Renderer{Loader: l}
		return c
	}}
	for _, f := range opts {
		f(&o)
	}
	return engine.NewEngine(o), c
}

func TestEngineCacheKey(t *testing.T) {
	ctx := context.Background()
	loader := newDirImageLoader(0)
	e, c := newCountingEngine(loader)
	req := engineReq(t)

	render := func() *render.Result {
		t.Helper()
		res, err := e.Render(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := render()
	render()
	if c.n.Load() != 1 {
		t.Fatalf("identical request rendered %d times", c.n.Load())
	}
	if loader.resolves.Load() != 2 {
		t.Errorf("tag resolved %d times, want once per request", loader.resolves.Load())
	}

	// A moved tag renders again (the digest is part of the key).
	loader.setDigest("example.com/tiny-bundle:v1", "sha256:"+strings.Repeat("b", 64))
	if res := render(); c.n.Load() != 2 || res.Origin.Digest == first.Origin.Digest {
		t.Errorf("moved tag: %d renders, digest %s", c.n.Load(), res.Origin.Digest)
	}
	// Other cluster APIs render again; the same set in another order does not.
	req.APIVersions = []string{"v1", "apps/v1"}
	render()
	req.APIVersions = []string{"apps/v1", "v1", "v1"}
	render()
	if c.n.Load() != 3 {
		t.Errorf("APIVersions: %d renders, want 3", c.n.Load())
	}
	// A spec change renders again; a list reordered does not (Normalized).
	req.Spec.ImagePullSecrets = []string{"b", "a"}
	render()
	req.Spec.ImagePullSecrets = []string{"a", "b"}
	render()
	if c.n.Load() != 4 {
		t.Errorf("spec: %d renders, want 4", c.n.Load())
	}
	// A changed extra manifest renders again.
	os.WriteFile(filepath.Join(req.SourceDir, "extra.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o644)
	if res := render(); c.n.Load() != 5 || !strings.Contains(strings.Join(res.Manifests, ""), "kind: ConfigMap") {
		t.Errorf("extra manifest: %d renders", c.n.Load())
	}
}

func TestEngineDirectoryBundleKeyedByContent(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, repoDir, dir)
	e, c := newCountingEngine(nil)
	app := filepath.Join(dir, "apps", "tiny")
	req, err := BuildRequest(app, dir, &AppEnv{})
	if err != nil {
		t.Fatal(err)
	}
	if _, info, err := e.RenderInfo(context.Background(), req); err != nil || info.Cache != "miss" || !strings.HasPrefix(info.Digest, "dir:sha256:") {
		t.Fatalf("%+v %v", info, err)
	}
	if _, info, _ := e.RenderInfo(context.Background(), req); info.Cache != "hit" {
		t.Errorf("second: %+v", info)
	}
	// Editing the bundle directory is a new key.
	csv := filepath.Join(dir, "bundles/tiny/manifests/tiny-operator.clusterserviceversion.yaml")
	data, _ := os.ReadFile(csv)
	os.WriteFile(csv, []byte(strings.Replace(string(data), "replicas: 1", "replicas: 2", 1)), 0o644)
	res, info, err := e.RenderInfo(context.Background(), req)
	if err != nil || info.Cache != "miss" || c.n.Load() != 2 || !strings.Contains(strings.Join(res.Manifests, ""), "replicas: 2") {
		t.Errorf("edited bundle: %+v %v renders=%d", info, err, c.n.Load())
	}
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

type failingOnce struct {
	n   atomic.Int32
	err error
}

func (f *failingOnce) Render(context.Context, render.Request) (*render.Result, error) {
	if f.n.Add(1) == 1 {
		return nil, f.err
	}
	return &render.Result{Manifests: []string{"kind: ConfigMap"}}, nil
}

func TestEngineErrorsAreNotCached(t *testing.T) {
	f := &failingOnce{err: errors.New("registry unavailable")}
	e := engine.NewEngine(engine.EngineOptions{Loader: newDirImageLoader(0), NewRenderer: func(render.Loader) engine.Renderer { return f }})
	req := engineReq(t)
	if _, err := e.Render(context.Background(), req); err == nil {
		t.Fatal("want the first error")
	}
	if _, err := e.Render(context.Background(), req); err != nil {
		t.Fatalf("error was cached: %v", err)
	}
}

func TestEngineResolveErrorIsReturned(t *testing.T) {
	e, c := newCountingEngine(newDirImageLoader(0))
	req := engineReq(t)
	req.Spec.Version = "v9"
	_, err := e.Render(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "MANIFEST_UNKNOWN") || c.n.Load() != 0 {
		t.Errorf("err=%v renders=%d", err, c.n.Load())
	}
}

// TestEngineWaiterOutlivesOwner: when the request that started a render
// gives up, a waiting identical request takes over instead of failing.
func TestEngineWaiterOutlivesOwner(t *testing.T) {
	s := &slowRenderer{delay: 300 * time.Millisecond}
	e := engine.NewEngine(engine.EngineOptions{Loader: newDirImageLoader(0), NewRenderer: func(render.Loader) engine.Renderer { return s }})
	req := engineReq(t)
	ownerCtx, cancelOwner := context.WithCancel(context.Background())
	ownerErr := make(chan error, 1)
	go func() { _, err := e.Render(ownerCtx, req); ownerErr <- err }()
	for s.started.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	waiterErr := make(chan error, 1)
	go func() { _, err := e.Render(context.Background(), req); waiterErr <- err }()
	time.Sleep(20 * time.Millisecond)
	cancelOwner()
	if err := <-ownerErr; !errors.Is(err, context.Canceled) {
		t.Errorf("owner: %v", err)
	}
	if err := <-waiterErr; err != nil {
		t.Errorf("waiter failed with the owner: %v", err)
	}
	if s.started.Load() != 2 {
		t.Errorf("%d renders, want 2 (the waiter took over)", s.started.Load())
	}
}

func TestEngineByteBudget(t *testing.T) {
	big := strings.Repeat("x", 10000)
	var n atomic.Int32
	r := rendererFunc(func(_ context.Context, req render.Request) (*render.Result, error) {
		n.Add(1)
		return &render.Result{Manifests: []string{big}}, nil
	})
	e := engine.NewEngine(engine.EngineOptions{Loader: newDirImageLoader(0), MaxBytes: 45000, NewRenderer: func(render.Loader) engine.Renderer { return r }})
	req := engineReq(t)
	for _, ns := range []string{"a", "b", "c", "d", "e"} {
		req.Spec.Namespace = ns
		if _, err := e.Render(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if n, b := e.Stats(); b > 45000 || n != 4 {
		t.Errorf("%d bytes in %d entries, budget 45000", b, n)
	}
	// The oldest was evicted, the newest kept.
	req.Spec.Namespace = "e"
	e.Render(context.Background(), req)
	req.Spec.Namespace = "a"
	e.Render(context.Background(), req)
	if n.Load() != 6 {
		t.Errorf("%d renders, want 6", n.Load())
	}
}

type rendererFunc func(context.Context, render.Request) (*render.Result, error)

func (f rendererFunc) Render(ctx context.Context, req render.Request) (*render.Result, error) {
	return f(ctx, req)
}

// TestEnginePanicReleasesWaiters: a panicking render fails its request (the
// server recovers it) without leaving the key stuck for later requests.
func TestEnginePanicReleasesWaiters(t *testing.T) {
	var n atomic.Int32
	r := rendererFunc(func(context.Context, render.Request) (*render.Result, error) {
		if n.Add(1) == 1 {
			panic("boom")
		}
		return &render.Result{Manifests: []string{"kind: ConfigMap"}}, nil
	})
	e := engine.NewEngine(engine.EngineOptions{Loader: newDirImageLoader(0), NewRenderer: func(render.Loader) engine.Renderer { return r }})
	req := engineReq(t)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("panic swallowed")
			}
		}()
		e.Render(context.Background(), req)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := e.Render(ctx, req); err != nil {
		t.Fatalf("key stuck after a panic: %v", err)
	}
}

// TestEngineCachesJSON: the JSON the plugin server sends is made once per
// render and cached beside the YAML (which Render still returns, for the
// HTTP render); a hit hands out the same conversion, and the byte budget
// counts what the entry holds: both forms, a manifest kept as YAML once.
func TestEngineCachesJSON(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  port: \"8080\"\n  empty: \"\"\n"
	odd := "odd: yes\n" // YAML 1.1 reads a boolean: stays YAML
	var n atomic.Int32
	r := rendererFunc(func(context.Context, render.Request) (*render.Result, error) {
		n.Add(1)
		return &render.Result{Manifests: []string{cm, odd}, Warnings: []string{"w"}}, nil
	})
	e := engine.NewEngine(engine.EngineOptions{Loader: newDirImageLoader(0), NewRenderer: func(render.Loader) engine.Renderer { return r }})
	req := engineReq(t)
	first, info, err := e.RenderInfo(context.Background(), req)
	if err != nil || info.Cache != "miss" {
		t.Fatalf("%v %+v", err, info)
	}
	wantJSON := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"port":"8080","empty":""}}`
	if len(first.JSON) != 2 || first.JSON[0] != wantJSON || first.JSON[1] != odd || first.KeptYAML != 1 {
		t.Errorf("JSON %q, %d kept", first.JSON, first.KeptYAML)
	}
	want := int64(len(cm) + len(wantJSON) + len(odd) + len("w") + 512)
	if _, got := e.Stats(); got != want {
		t.Errorf("cache holds %d bytes by its count, want %d", got, want)
	}
	again, info, err := e.RenderInfo(context.Background(), req)
	if err != nil || info.Cache != "hit" || again != first {
		t.Errorf("second call: %v %+v, same entry %v", err, info, again == first)
	}
	res, err := e.Render(context.Background(), req)
	if err != nil || len(res.Manifests) != 2 || res.Manifests[0] != cm {
		t.Errorf("Render returns %q, want the YAML", res.Manifests)
	}
	if n.Load() != 1 {
		t.Errorf("%d renders", n.Load())
	}
	e.Purge()
	if _, got := e.Stats(); got != 0 {
		t.Errorf("%d bytes after purge", got)
	}
}
