package cmpserver

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/engine"
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

	m := engine.NewMetrics()
	loader := &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}, Observer: m}
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
	if heads < 1 || heads > n || metricValue(t, m, engine.MetricResolves, "ok") != float64(heads) {
		t.Errorf("%d HEADs, %v counted", heads, metricValue(t, m, engine.MetricResolves, "ok"))
	}
	t.Logf("100 concurrent calls: %d manifest GET, %d blob GETs, %d tag resolutions (HEAD)", gets, reqs.BlobGets(), heads)
	if got := metricValue(t, m, engine.MetricPulls, "ok"); got != 1 {
		t.Errorf("pull metric = %v", got)
	}
	if !strings.Contains(outs[0], `"kind":"Deployment"`) {
		t.Error("no Deployment rendered")
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
