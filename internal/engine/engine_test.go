package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/engine/enginetest"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// demoBundle is the repository's demo bundle directory.
const demoBundle = "../../examples/demo/bundle"

const demoRef = "example.com/demo-bundle:v1"

var digestA, digestB = "sha256:" + strings.Repeat("a", 64), "sha256:" + strings.Repeat("b", 64)

func newLoader(t *testing.T) *enginetest.Loader {
	t.Helper()
	abs, err := filepath.Abs(demoBundle)
	if err != nil {
		t.Fatal(err)
	}
	return enginetest.NewLoader(demoRef, abs, digestA)
}

// imageReq asks for the demo bundle as the image demoRef, from a source
// directory of its own.
func imageReq(t *testing.T) render.Request {
	return render.Request{
		Spec:      spec.Spec{Bundle: "example.com/demo-bundle", Version: "v1", Namespace: "demo-system"},
		Name:      "demo",
		SourceDir: t.TempDir(),
	}
}

func mustRender(t *testing.T, e *Engine, req render.Request) (*render.Result, Info) {
	t.Helper()
	res, info, err := e.Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res, info
}

func renders(m *Metrics, outcome string) int {
	return int(testutil.ToFloat64(m.renders.WithLabelValues(outcome)))
}

func TestCacheKey(t *testing.T) {
	loader := newLoader(t)
	m := NewMetrics()
	e := NewEngine(EngineOptions{Loader: loader, Metrics: m})
	req := imageReq(t)

	first, info := mustRender(t, e, req)
	if info.Cache != "miss" || info.Digest != digestA {
		t.Fatalf("first: %+v", info)
	}
	if again, info := mustRender(t, e, req); info.Cache != "hit" || again != first {
		t.Fatalf("identical request: %+v, same result %v", info, again == first)
	}
	if loader.Resolves.Load() != 2 {
		t.Errorf("tag resolved %d times, want once per request", loader.Resolves.Load())
	}
	// A moved tag renders again (the digest is part of the key).
	loader.SetDigest(demoRef, digestB)
	if res, info := mustRender(t, e, req); info.Cache != "miss" || res.Origin.Digest != digestB {
		t.Errorf("moved tag: %+v, digest %s", info, res.Origin.Digest)
	}
	// Other cluster APIs render again; the same set in another order does not.
	// (cert-manager.io/v1 served: the demo's Deployment mounts a Secret of a
	// Certificate, and dropping that would fail the render.)
	// (every cluster's own APIs listed: a partial list is refused.)
	base := []string{"rbac.authorization.k8s.io/v1", "apiextensions.k8s.io/v1", "admissionregistration.k8s.io/v1"}
	req.APIVersions = append([]string{"v1", "apps/v1", "cert-manager.io/v1"}, base...)
	mustRender(t, e, req)
	req.APIVersions = append(base, "apps/v1", "cert-manager.io/v1", "v1", "v1")
	if _, info := mustRender(t, e, req); info.Cache != "hit" {
		t.Errorf("APIVersions reordered: %+v", info)
	}
	// A spec change renders again; a list reordered does not (Normalized).
	req.Spec.ImagePullSecrets = []string{"b", "a"}
	mustRender(t, e, req)
	req.Spec.ImagePullSecrets = []string{"a", "b"}
	if _, info := mustRender(t, e, req); info.Cache != "hit" {
		t.Errorf("list reordered: %+v", info)
	}
	// A changed extra manifest renders again.
	os.WriteFile(filepath.Join(req.SourceDir, "extra.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o644)
	if res, info := mustRender(t, e, req); info.Cache != "miss" || !strings.Contains(strings.Join(res.Manifests, ""), "kind: ConfigMap") {
		t.Errorf("extra manifest: %+v", info)
	}
	// Another request directory with the same files is the same key.
	other := req
	other.SourceDir = t.TempDir()
	os.WriteFile(filepath.Join(other.SourceDir, "extra.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o644)
	if _, info := mustRender(t, e, other); info.Cache != "hit" {
		t.Errorf("same files elsewhere: %+v", info)
	}
	if got := renders(m, "ok"); got != 5 {
		t.Errorf("%d renders, want 5", got)
	}
}

// TestDirectoryBundleKeyedByContent: a directory bundle is keyed on the
// bundle package's digest of its files, the one Origin.Digest reports.
func TestDirectoryBundleKeyedByContent(t *testing.T) {
	src := t.TempDir()
	copyTree(t, demoBundle, filepath.Join(src, "bundle"))
	e := NewEngine(EngineOptions{})
	req := render.Request{Spec: spec.Spec{Bundle: "./bundle", Namespace: "demo-system"}, SourceDir: src, RootDir: src}
	res, info := mustRender(t, e, req)
	want, err := bundle.DirDigest(filepath.Join(src, "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Cache != "miss" || info.Digest != want || res.Origin.Digest != want {
		t.Fatalf("%+v, origin digest %s, want %s", info, res.Origin.Digest, want)
	}
	if _, info := mustRender(t, e, req); info.Cache != "hit" {
		t.Errorf("second: %+v", info)
	}
	// Editing the bundle directory is a new key.
	csv := filepath.Join(src, "bundle/manifests/greeter-operator.clusterserviceversion.yaml")
	data, _ := os.ReadFile(csv)
	os.WriteFile(csv, []byte(strings.Replace(string(data), "replicas: 1\n", "replicas: 2\n", 1)), 0o644)
	if res, info := mustRender(t, e, req); info.Cache != "miss" || info.Digest == want || !strings.Contains(strings.Join(res.Manifests, ""), "replicas: 2") {
		t.Errorf("edited bundle: %+v", info)
	}
}

func TestErrorsAreNotCached(t *testing.T) {
	loader := newLoader(t)
	loader.BeforeLoad = func(n int32) error {
		if n == 1 {
			return errors.New("registry unavailable")
		}
		return nil
	}
	m := NewMetrics()
	e := NewEngine(EngineOptions{Loader: loader, Metrics: m})
	req := imageReq(t)
	if _, _, err := e.Render(context.Background(), req); err == nil || !strings.Contains(err.Error(), "registry unavailable") {
		t.Fatalf("want the first error, got %v", err)
	}
	if _, _, err := e.Render(context.Background(), req); err != nil {
		t.Fatalf("error was cached: %v", err)
	}
	if renders(m, "error") != 1 || renders(m, "ok") != 1 {
		t.Errorf("renders: %d ok, %d error", renders(m, "ok"), renders(m, "error"))
	}
}

func TestResolveErrorIsReturned(t *testing.T) {
	loader := newLoader(t)
	e := NewEngine(EngineOptions{Loader: loader})
	req := imageReq(t)
	req.Spec.Version = "v9"
	_, _, err := e.Render(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "MANIFEST_UNKNOWN") || loader.Loads.Load() != 0 {
		t.Errorf("err=%v loads=%d", err, loader.Loads.Load())
	}
}

// TestConcurrentRequestsRenderOnce: identical requests arriving together
// share one load and one render, and get the same result.
func TestConcurrentRequestsRenderOnce(t *testing.T) {
	loader := newLoader(t)
	loader.Delay = 200 * time.Millisecond
	m := NewMetrics()
	e := NewEngine(EngineOptions{Loader: loader, Metrics: m})
	req := imageReq(t)
	const n = 50
	results := make([]*render.Result, n)
	infos := make([]Info, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var err error
			if results[i], infos[i], err = e.Render(context.Background(), req); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	caches := map[string]int{}
	for i := range n {
		if results[i] != results[0] {
			t.Fatalf("request %d got another result", i)
		}
		caches[infos[i].Cache]++
	}
	if loader.Loads.Load() != 1 || renders(m, "ok") != 1 || caches["miss"] != 1 {
		t.Errorf("%d loads, %d renders, %v", loader.Loads.Load(), renders(m, "ok"), caches)
	}
	inflight := testutil.ToFloat64(m.cacheHits.WithLabelValues("inflight"))
	hits := testutil.ToFloat64(m.cacheHits.WithLabelValues("render"))
	if int(inflight) != caches["inflight"] || int(hits) != caches["hit"] || caches["inflight"]+caches["hit"] != n-1 {
		t.Errorf("metrics: %v inflight, %v hits; infos %v", inflight, hits, caches)
	}
}

// TestWaiterOutlivesOwner: when the request that started a render gives up,
// the render goes on for an identical request waiting for it (one load, not
// two), and the owner's Render answers at once, announcing through
// Info.Running that the render still reads its source directory.
func TestWaiterOutlivesOwner(t *testing.T) {
	loader := newLoader(t)
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	loader.BeforeLoad = func(int32) error { started <- struct{}{}; <-release; return nil }
	e := NewEngine(EngineOptions{Loader: loader})
	req := imageReq(t)
	ownerCtx, cancelOwner := context.WithCancel(context.Background())
	type answer struct {
		info Info
		err  error
	}
	owner := make(chan answer, 1)
	go func() { _, info, err := e.Render(ownerCtx, req); owner <- answer{info, err} }()
	<-started
	waiter := make(chan answer, 1)
	go func() { _, info, err := e.Render(context.Background(), req); waiter <- answer{info, err} }()
	waitFor(t, func() bool { return waiters(e) == 2 })
	cancelOwner()
	o := <-owner // answered while the load is still blocked
	var se *StoppedError
	if !errors.As(o.err, &se) || !errors.Is(o.err, context.Canceled) || !strings.Contains(o.err.Error(), "still loading the bundle image") {
		t.Fatalf("owner: %v", o.err)
	}
	if o.info.Running == nil {
		t.Fatal("the owner's source directory is still read, but Info.Running is nil")
	}
	select {
	case <-o.info.Running:
		t.Fatal("Running closed while the render still runs")
	default:
	}
	close(release)
	if w := <-waiter; w.err != nil || w.info.Cache != "inflight" {
		t.Errorf("waiter: %+v", w)
	}
	<-o.info.Running
	if got := loader.Loads.Load(); got != 1 {
		t.Errorf("%d loads, want 1 (the waiter kept the owner's render)", got)
	}
}

// TestRenderStopsWhenEveryWaiterLeft: a shared render whose every waiter
// gave up is cancelled (the loader sees its context end), and each request
// is told, before the render ends, what it was still doing.
func TestRenderStopsWhenEveryWaiterLeft(t *testing.T) {
	loader := newLoader(t)
	loader.Delay = time.Hour // until the context ends
	loadCtx := make(chan context.Context, 1)
	loader.BeforeCtx = func(ctx context.Context) { loadCtx <- ctx }
	e := NewEngine(EngineOptions{Loader: loader})
	req := imageReq(t)
	// The first request's deadline, as a cause, so that it passes only once both wait.
	ctx1, cancel1 := context.WithCancelCause(context.Background())
	defer cancel1(nil)
	ctx2, cancel2 := context.WithCancel(context.Background())
	errs := make(chan error, 2)
	var running []<-chan struct{}
	var mu sync.Mutex
	for _, ctx := range []context.Context{ctx1, ctx2} {
		go func() {
			_, info, err := e.Render(ctx, req)
			mu.Lock()
			if info.Running != nil {
				running = append(running, info.Running)
			}
			mu.Unlock()
			errs <- err
		}()
	}
	lctx := <-loadCtx
	waitFor(t, func() bool { return waiters(e) == 2 })
	cancel1(context.DeadlineExceeded)
	first := <-errs
	if !errors.Is(first, context.DeadlineExceeded) || !strings.Contains(first.Error(), "still loading the bundle image") &&
		!strings.Contains(first.Error(), "still waiting for an identical request's render after") {
		t.Errorf("first: %v", first)
	}
	if lctx.Err() != nil {
		t.Fatal("the render stopped while a request still waited for it")
	}
	cancel2()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Errorf("second: %v", err)
	}
	select {
	case <-lctx.Done():
		if !errors.Is(context.Cause(lctx), errNobodyWaits) {
			t.Errorf("render cancelled with %v", context.Cause(lctx))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the render went on after every request left")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range running {
		<-r
	}
}

// TestAnswerWhileAStepIgnoresItsContext: a step that never checks its
// context (a CPU-bound check) does not hold the answer: Render returns the
// request's error when its context ends, and announces the directory in use.
func TestAnswerWhileAStepIgnoresItsContext(t *testing.T) {
	loader := newLoader(t)
	release := make(chan struct{})
	loader.BeforeLoad = func(int32) error { <-release; return nil }
	defer close(release)
	e := NewEngine(EngineOptions{Loader: loader, MaxEntries: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, info, err := e.Render(ctx, imageReq(t))
	if !errors.Is(err, context.DeadlineExceeded) || info.Running == nil {
		t.Fatalf("err %v, running %v", err, info.Running)
	}
	t.Log(err)
	if want := `resolving spec.bundle "example.com/demo-bundle" took `; !strings.HasPrefix(err.Error(), want) ||
		!strings.Contains(err.Error(), "; still loading the bundle image example.com/demo-bundle@"+digestA+" after ") {
		t.Errorf("message %q", err)
	}
}

// TestPanicReleasesWaiters: a panicking render is its request's
// *PanicError, with the stack for the log, and leaves the key free for
// later requests.
func TestPanicReleasesWaiters(t *testing.T) {
	loader := newLoader(t)
	loader.BeforeLoad = func(n int32) error {
		if n == 1 {
			panic("boom")
		}
		return nil
	}
	e := NewEngine(EngineOptions{Loader: loader})
	req := imageReq(t)
	_, _, err := e.Render(context.Background(), req)
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Value != "boom" || !strings.Contains(string(pe.Stack), "BeforeLoad") && !strings.Contains(string(pe.Stack), "engine_test.go") {
		t.Fatalf("got %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, _, err := e.Render(ctx, req); err != nil {
		t.Fatalf("key stuck after a panic: %v", err)
	}
}

// waiters counts the requests waiting for renders in flight.
func waiters(e *Engine) int {
	e.flights.mu.Lock()
	defer e.flights.mu.Unlock()
	n := 0
	for _, c := range e.flights.calls {
		n += c.waiters
	}
	return n
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
	}
}

// TestCachesBothForms: the JSON the plugin server sends is made once per
// render and cached with the YAML; a hit hands out the same result, and the
// byte budget counts what the entry holds.
func TestCachesBothForms(t *testing.T) {
	e := NewEngine(EngineOptions{Loader: newLoader(t)})
	req := imageReq(t)
	first, _ := mustRender(t, e, req)
	if len(first.JSON) != len(first.Manifests) || len(first.JSON) == 0 || !strings.HasPrefix(first.JSON[0], "{") {
		t.Fatalf("JSON %q", first.JSON)
	}
	var want int64 = 512
	for i := range first.Manifests {
		want += int64(len(first.Manifests[i]) + len(first.JSON[i]))
	}
	for _, w := range first.Warnings {
		want += int64(len(w))
	}
	if n, got := e.Stats(); n != 1 || got != want {
		t.Errorf("cache holds %d bytes in %d entries by its count, want %d in 1", got, n, want)
	}
}

func TestByteBudget(t *testing.T) {
	loader := newLoader(t)
	one, _, err := NewEngine(EngineOptions{Loader: loader, MaxEntries: -1}).Render(context.Background(), imageReq(t))
	if err != nil {
		t.Fatal(err)
	}
	// Room for four results of this size (namespaces of one length render
	// to the same size), and one result is under a quarter of it.
	budget := 4*size(one) + size(one)/2
	e := NewEngine(EngineOptions{Loader: loader, MaxBytes: budget})
	req := imageReq(t)
	for _, ns := range []string{"ns-a", "ns-b", "ns-c", "ns-d", "ns-e"} {
		req.Spec.Namespace = ns
		mustRender(t, e, req)
	}
	if n, b := e.Stats(); b > budget || n != 4 {
		t.Errorf("%d bytes in %d entries, budget %d", b, n, budget)
	}
	// The oldest was evicted, the newest kept.
	req.Spec.Namespace = "ns-e"
	if _, info := mustRender(t, e, req); info.Cache != "hit" {
		t.Errorf("newest: %+v", info)
	}
	req.Spec.Namespace = "ns-a"
	if _, info := mustRender(t, e, req); info.Cache != "miss" {
		t.Errorf("oldest: %+v", info)
	}
}

func TestCacheDisabled(t *testing.T) {
	loader := newLoader(t)
	e := NewEngine(EngineOptions{Loader: loader, MaxEntries: -1})
	req := imageReq(t)
	for range 2 {
		if _, info := mustRender(t, e, req); info.Cache != "off" {
			t.Errorf("%+v", info)
		}
	}
	if loader.Loads.Load() != 2 {
		t.Errorf("%d loads, want 2", loader.Loads.Load())
	}
}

func copyTree(t testing.TB, src, dst string) {
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
