package cmpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// tinyCatalog is an FBC for package tiny: 1.0.0 is image v1, 2.0.0 image v2.
func tinyCatalog(host, image1 string) string {
	return `{"schema": "olm.package", "name": "tiny"}
{"schema": "olm.channel", "name": "stable", "package": "tiny", "entries": [{"name": "tiny.v1"}, {"name": "tiny.v2", "replaces": "tiny.v1"}]}
{"schema": "olm.bundle", "name": "tiny.v1", "package": "tiny", "image": "` + image1 + `", "properties": [{"type": "olm.package", "value": {"packageName": "tiny", "version": "1.0.0"}}]}
{"schema": "olm.bundle", "name": "tiny.v2", "package": "tiny", "image": "` + host + `/operators/tiny-bundle:v2", "properties": [{"type": "olm.package", "value": {"packageName": "tiny", "version": "2.0.0"}}]}
`
}

// catalogRegistry pushes the tiny bundle as v1 and a variant (2 replicas) as
// v2, and returns the registry host and both digests.
func catalogRegistry(t *testing.T) (host string, reqs *bundletest.Counter, d1, d2 string) {
	t.Helper()
	host, reqs = bundletest.NewRegistry(t)
	src := filepath.Join(repoDir, "bundles/tiny")
	d1 = bundletest.PushDir(t, host, "operators/tiny-bundle", "v1", src)
	v2 := t.TempDir()
	copyTree(t, src, v2)
	csv := filepath.Join(v2, "manifests/tiny-operator.clusterserviceversion.yaml")
	data, _ := os.ReadFile(csv)
	os.WriteFile(csv, []byte(strings.Replace(string(data), "replicas: 1", "replicas: 2", 1)), 0o644)
	d2 = bundletest.PushDir(t, host, "operators/tiny-bundle", "v2", v2)
	return host, reqs, d1, d2
}

func catalogApp(t *testing.T, catalog string) (root, app string) {
	t.Helper()
	root = t.TempDir()
	app = filepath.Join(root, "apps", "cat")
	os.MkdirAll(app, 0o755)
	os.WriteFile(filepath.Join(app, spec.FileName), []byte(`apiVersion: olm-cmp.dev/v1alpha1
kind: OperatorBundle
spec:
  catalog: `+catalog+`
  package: tiny
  version: 1.x
  namespace: tiny-system
`), 0o644)
	return root, app
}

// TestEngineCatalogDirectoryKeyedByChoice: a catalog spec is cached, keyed
// on the bundle the catalog chooses, and rendered again when the catalog
// chooses another one.
func TestEngineCatalogDirectoryKeyedByChoice(t *testing.T) {
	host, _, d1, d2 := catalogRegistry(t)
	root, app := catalogApp(t, "./catalog")
	os.MkdirAll(filepath.Join(app, "catalog"), 0o755)
	fbc := filepath.Join(app, "catalog", "catalog.json")
	os.WriteFile(fbc, []byte(tinyCatalog(host, host+"/operators/tiny-bundle:v1")), 0o644)

	e, c := newCountingEngine(&bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}})
	req, err := BuildRequest(app, root, &AppEnv{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, info, err := e.RenderInfo(ctx, req)
	if err != nil || info.Cache != "miss" || info.Digest != d1 || res.Catalog == nil || res.Catalog.Version != "1.0.0" {
		t.Fatalf("first: %+v %+v %v", info, res, err)
	}
	if _, info, err := e.RenderInfo(ctx, req); err != nil || info.Cache != "hit" {
		t.Errorf("second: %+v %v", info, err)
	}
	// The catalog now maps 1.0.0 to the other image: same spec, new key.
	os.WriteFile(fbc, []byte(tinyCatalog(host, host+"/operators/tiny-bundle:v2")), 0o644)
	res, info, err = e.RenderInfo(ctx, req)
	if err != nil || info.Cache != "miss" || info.Digest != d2 || !strings.Contains(strings.Join(res.Manifests, ""), "replicas: 2") {
		t.Errorf("after the catalog changed: %+v %v", info, err)
	}
	if c.n.Load() != 2 {
		t.Errorf("%d renders, want 2", c.n.Load())
	}
	// A range the catalog cannot satisfy is the render's error, uncached.
	req.Spec.Version = "3.x"
	if _, _, err := e.RenderInfo(ctx, req); err == nil || !strings.Contains(err.Error(), `matches version range "3.x"`) {
		t.Errorf("unsatisfiable range: %v", err)
	}
}

// TestEngineCatalogImagePinned: a catalog image tag is resolved once per
// request (the key's choice is pinned for the render), and a moved catalog
// tag is a new key whose result names the new catalog digest.
func TestEngineCatalogImagePinned(t *testing.T) {
	host, reqs, _, d2 := catalogRegistry(t)
	push := func(image1 string, more ...string) string {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(tinyCatalog(host, image1)+strings.Join(more, "")), 0o644)
		return bundletest.Push(t, host, "operators/catalog", "latest", bundletest.CatalogImage(t, dir, "/configs"))
	}
	c1 := push(host + "/operators/tiny-bundle:v1")
	ref := host + "/operators/catalog:latest"
	root, app := catalogApp(t, ref)
	e, c := newCountingEngine(&bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}})
	req, err := BuildRequest(app, root, &AppEnv{})
	if err != nil {
		t.Fatal(err)
	}
	catalogManifests := func() int {
		return reqs.Count(func(r bundletest.Request) bool { return strings.Contains(r.Path, "/operators/catalog/manifests/") })
	}
	ctx := context.Background()
	reqs.Reset()
	res, info, err := e.RenderInfo(ctx, req)
	if err != nil || info.Cache != "miss" {
		t.Fatalf("first: %+v %v", info, err)
	}
	// One HEAD for the tag, one GET of the manifest to pull it: the render
	// itself used the key's pinned choice.
	if n := catalogManifests(); n != 2 {
		t.Errorf("first request asked for the catalog manifest %d times, want 2 (resolve, pull)", n)
	}
	if res.Catalog == nil || res.Catalog.Image != host+"/operators/catalog@"+c1 {
		t.Errorf("Catalog = %+v, want the catalog pinned at %s", res.Catalog, c1)
	}
	reqs.Reset()
	if _, info, err := e.RenderInfo(ctx, req); err != nil || info.Cache != "hit" || catalogManifests() != 1 {
		t.Errorf("second: %+v %v, %d catalog manifest requests (want 1: the tag moves)", info, err, catalogManifests())
	}

	// A republished catalog that chooses the same bundle: the output is the
	// same, but the result must name the catalog it came from now.
	c1b := push(host+"/operators/tiny-bundle:v1", `{"schema": "olm.package", "name": "other"}`+"\n")
	res, info, err = e.RenderInfo(ctx, req)
	if err != nil || info.Cache != "miss" || res.Catalog.Image != host+"/operators/catalog@"+c1b {
		t.Errorf("republished catalog: %+v %+v %v", info, res.Catalog, err)
	}

	c2 := push(host + "/operators/tiny-bundle:v2")
	res, info, err = e.RenderInfo(ctx, req)
	if err != nil || info.Cache != "miss" || info.Digest != d2 || res.Catalog.Image != host+"/operators/catalog@"+c2 {
		t.Errorf("moved catalog tag: %+v %+v %v", info, res.Catalog, err)
	}
	if c.n.Load() != 3 {
		t.Errorf("%d renders, want 3", c.n.Load())
	}
}

// TestEngineCatalogWithoutLoader: a directory catalog with no image loader
// is rendered uncached and reports that it cannot pull the chosen bundle.
func TestEngineCatalogWithoutLoader(t *testing.T) {
	root, app := catalogApp(t, "./catalog")
	os.MkdirAll(filepath.Join(app, "catalog"), 0o755)
	os.WriteFile(filepath.Join(app, "catalog", "catalog.json"), []byte(tinyCatalog("example.com", "example.com/tiny:v1")), 0o644)
	e, _ := newCountingEngine(nil)
	req, err := BuildRequest(app, root, &AppEnv{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = e.RenderInfo(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "no registry access") {
		t.Errorf("got %v", err)
	}
}
