package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// demoCatalog is an FBC for the demo package: 0.2.0 (the demo CSV's
// version) is image1, 2.0.0 the v2 image (never chosen: its CSV is 0.2.0
// too, and render refuses a CSV that is not the version the catalog promised).
func demoCatalog(host, image1 string) string {
	return `{"schema": "olm.package", "name": "greeter-operator"}
{"schema": "olm.channel", "name": "stable", "package": "greeter-operator", "entries": [{"name": "g.v1"}, {"name": "g.v2", "replaces": "g.v1"}]}
{"schema": "olm.bundle", "name": "g.v1", "package": "greeter-operator", "image": "` + image1 + `", "properties": [{"type": "olm.package", "value": {"packageName": "greeter-operator", "version": "0.2.0"}}]}
{"schema": "olm.bundle", "name": "g.v2", "package": "greeter-operator", "image": "` + host + `/operators/demo-bundle:v2", "properties": [{"type": "olm.package", "value": {"packageName": "greeter-operator", "version": "2.0.0"}}]}
`
}

// catalogRegistry pushes the demo bundle as v1 and a variant (2 replicas)
// as v2, and returns the registry host and both digests.
func catalogRegistry(t *testing.T) (host string, reqs *bundletest.Counter, d1, d2 string) {
	t.Helper()
	host, reqs = bundletest.NewRegistry(t)
	d1 = bundletest.PushDir(t, host, "operators/demo-bundle", "v1", demoBundle)
	v2 := t.TempDir()
	copyTree(t, demoBundle, v2)
	csv := filepath.Join(v2, "manifests/greeter-operator.clusterserviceversion.yaml")
	data, _ := os.ReadFile(csv)
	os.WriteFile(csv, []byte(strings.Replace(string(data), "replicas: 1\n", "replicas: 2\n", 1)), 0o644)
	d2 = bundletest.PushDir(t, host, "operators/demo-bundle", "v2", v2)
	return host, reqs, d1, d2
}

func catalogReq(t *testing.T, catalog string) render.Request {
	src := t.TempDir()
	return render.Request{
		Spec:      spec.Spec{Catalog: catalog, Package: "greeter-operator", Version: "0.x", Namespace: "demo-system"},
		SourceDir: src,
		RootDir:   src,
	}
}

// TestCatalogDirectoryKeyedByChoice: a catalog spec is cached, keyed on the
// bundle the catalog chooses, and rendered again when the catalog chooses
// another one.
func TestCatalogDirectoryKeyedByChoice(t *testing.T) {
	host, _, d1, d2 := catalogRegistry(t)
	req := catalogReq(t, "./catalog")
	os.MkdirAll(filepath.Join(req.SourceDir, "catalog"), 0o755)
	fbc := filepath.Join(req.SourceDir, "catalog", "catalog.json")
	os.WriteFile(fbc, []byte(demoCatalog(host, host+"/operators/demo-bundle:v1")), 0o644)

	m := NewMetrics()
	e := NewEngine(EngineOptions{Loader: &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}, Metrics: m})
	res, info := mustRender(t, e, req)
	if info.Cache != "miss" || info.Digest != d1 || res.Catalog == nil || res.Catalog.Version != "0.2.0" {
		t.Fatalf("first: %+v %+v", info, res.Catalog)
	}
	if _, info := mustRender(t, e, req); info.Cache != "hit" {
		t.Errorf("second: %+v", info)
	}
	// The catalog now maps 0.2.0 to the other image: same spec, new key.
	os.WriteFile(fbc, []byte(demoCatalog(host, host+"/operators/demo-bundle:v2")), 0o644)
	res, info = mustRender(t, e, req)
	if info.Cache != "miss" || info.Digest != d2 || !strings.Contains(strings.Join(res.Manifests, ""), "replicas: 2") {
		t.Errorf("after the catalog changed: %+v", info)
	}
	if got := renders(m, "ok"); got != 2 {
		t.Errorf("%d renders, want 2", got)
	}
	// A range the catalog cannot satisfy is the render's error, uncached.
	req.Spec.Version = "3.x"
	if _, _, err := e.Render(context.Background(), req); err == nil || !strings.Contains(err.Error(), `matches version range "3.x"`) {
		t.Errorf("unsatisfiable range: %v", err)
	}
}

// TestCatalogImagePinned: a catalog image tag is resolved once per request
// (Resolve's choice is what the render uses), and a moved catalog tag is a
// new key whose result names the new catalog digest.
func TestCatalogImagePinned(t *testing.T) {
	host, reqs, _, d2 := catalogRegistry(t)
	push := func(image1 string, more ...string) string {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(demoCatalog(host, image1)+strings.Join(more, "")), 0o644)
		return bundletest.Push(t, host, "operators/catalog", "latest", bundletest.CatalogImage(t, dir, "/configs"))
	}
	c1 := push(host + "/operators/demo-bundle:v1")
	ref := host + "/operators/catalog:latest"
	req := catalogReq(t, ref)
	m := NewMetrics()
	e := NewEngine(EngineOptions{Loader: &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}, Metrics: m})
	catalogManifests := func() int {
		return reqs.Count(func(r bundletest.Request) bool { return strings.Contains(r.Path, "/operators/catalog/manifests/") })
	}
	reqs.Reset()
	res, info := mustRender(t, e, req)
	if info.Cache != "miss" {
		t.Fatalf("first: %+v", info)
	}
	// One HEAD for the tag, one GET of the manifest to pull it.
	if n := catalogManifests(); n != 2 {
		t.Errorf("first request asked for the catalog manifest %d times, want 2 (resolve, pull)", n)
	}
	if res.Catalog == nil || res.Catalog.Image != host+"/operators/catalog@"+c1 {
		t.Errorf("Catalog = %+v, want the catalog pinned at %s", res.Catalog, c1)
	}
	reqs.Reset()
	if _, info := mustRender(t, e, req); info.Cache != "hit" || catalogManifests() != 1 {
		t.Errorf("second: %+v, %d catalog manifest requests (want 1: the tag moves)", info, catalogManifests())
	}

	// A republished catalog that chooses the same bundle: the output is the
	// same, but the result must name the catalog it came from now.
	c1b := push(host+"/operators/demo-bundle:v1", `{"schema": "olm.package", "name": "other"}`+"\n")
	if res, info := mustRender(t, e, req); info.Cache != "miss" || res.Catalog.Image != host+"/operators/catalog@"+c1b {
		t.Errorf("republished catalog: %+v %+v", info, res.Catalog)
	}

	c2 := push(host + "/operators/demo-bundle:v2")
	if res, info := mustRender(t, e, req); info.Cache != "miss" || info.Digest != d2 || res.Catalog.Image != host+"/operators/catalog@"+c2 {
		t.Errorf("moved catalog tag: %+v %+v", info, res.Catalog)
	}
	if got := renders(m, "ok"); got != 3 {
		t.Errorf("%d renders, want 3", got)
	}
}

// TestCatalogWithoutLoader: a directory catalog with no image loader
// reports that it cannot pull the chosen bundle.
func TestCatalogWithoutLoader(t *testing.T) {
	req := catalogReq(t, "./catalog")
	os.MkdirAll(filepath.Join(req.SourceDir, "catalog"), 0o755)
	os.WriteFile(filepath.Join(req.SourceDir, "catalog", "catalog.json"), []byte(demoCatalog("example.com", "example.com/demo:v1")), 0o644)
	_, _, err := NewEngine(EngineOptions{}).Render(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "no registry access") {
		t.Errorf("got %v", err)
	}
}

// TestCatalogImageIndex: the first render from a catalog image digest
// writes its per-package index beside the cached catalog; a damaged index
// (half-written, here) is rebuilt and the render is still right; a new
// digest of the catalog gets an index of its own.
func TestCatalogImageIndex(t *testing.T) {
	host, _, d1, d2 := catalogRegistry(t)
	push := func(image1 string) string {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(demoCatalog(host, image1)), 0o644)
		return bundletest.Push(t, host, "operators/catalog", "latest", bundletest.CatalogImage(t, dir, "/configs"))
	}
	c1 := push(host + "/operators/demo-bundle:v1")
	cache := t.TempDir()
	e := NewEngine(EngineOptions{Loader: &bundle.ImageLoader{CacheDir: cache, Insecure: []string{host}}, MaxEntries: -1})
	req := catalogReq(t, host+"/operators/catalog:latest")
	index := func(digest string) string {
		return bundle.CatalogIndexFile(filepath.Join(cache, "catalogs", "sha256", strings.TrimPrefix(digest, "sha256:")))
	}
	if _, info := mustRender(t, e, req); info.Digest != d1 {
		t.Fatalf("first: %+v", info)
	}
	data, err := os.ReadFile(index(c1))
	if err != nil {
		t.Fatalf("no index beside the cached catalog: %v", err)
	}
	os.WriteFile(index(c1), data[:len(data)/2], 0o644)
	if _, info := mustRender(t, e, req); info.Digest != d1 {
		t.Errorf("after the index was damaged: %+v", info)
	}
	if again, _ := os.ReadFile(index(c1)); string(again) != string(data) {
		t.Error("the damaged index was not rebuilt")
	}
	c2 := push(host + "/operators/demo-bundle:v2")
	if _, info := mustRender(t, e, req); info.Digest != d2 {
		t.Errorf("new catalog digest: %+v", info)
	}
	if _, err := os.Stat(index(c2)); err != nil {
		t.Errorf("no index for the new digest: %v", err)
	}
}
