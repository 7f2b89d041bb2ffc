package upgrade

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/catalog/catalogtest"
)

// BenchmarkUpgradeCatalog10000 is upgrade on a catalog directory of 10,000
// bundles (hack/gencatalog's shape: 250 packages of 40, each a replaces
// chain with skipRanges), from the first version of one package: the
// render of today's version, the package read, the successors, the new
// version's resolve and the safety check (upgrade graph and CRDs). A
// catalog directory is streamed whole on each read (no digest to key an
// index on): the worst case.
func BenchmarkUpgradeCatalog10000(b *testing.B) {
	host, _ := bundletest.NewRegistry(b)
	root := b.TempDir()
	app := filepath.Join(root, "app")
	if _, err := catalogtest.Generate(filepath.Join(app, "catalog"), catalogtest.Options{Bundles: 10000, ImagePrefix: host + "/bench"}); err != nil {
		b.Fatal(err)
	}
	pkg := catalogtest.PackageName(0)
	for _, v := range []string{catalogtest.Version(0), catalogtest.Version(39)} {
		dir := filepath.Join(b.TempDir(), "bundle")
		os.CopyFS(dir, os.DirFS(demoBundle))
		csv := filepath.Join(dir, "manifests", "greeter-operator.clusterserviceversion.yaml")
		data, _ := os.ReadFile(csv)
		out := strings.Replace(strings.Replace(string(data), "name: greeter-operator.v0.2.0", "name: "+pkg+".v"+v, 1), "version: 0.2.0", "version: "+v, 1)
		os.WriteFile(csv, []byte(out), 0o644)
		bundletest.PushDir(b, host, "bench/"+pkg+"-bundle", "v"+v, dir)
	}
	loader := &bundle.ImageLoader{CacheDir: b.TempDir(), Insecure: []string{host}}
	for _, c := range []struct{ name, ref string }{
		{"directory", "./catalog"},
		// An index image, as vendors ship catalogs: pulled once, then read
		// through its per-package index.
		{"image", host + "/bench/catalog:latest"},
	} {
		if c.name == "image" {
			bundletest.Push(b, host, "bench/catalog", "latest", bundletest.CatalogImage(b, filepath.Join(app, "catalog"), "/configs"))
		}
		doc := specDoc("catalog: "+c.ref, "package: "+pkg, "version: "+catalogtest.Version(0))
		os.WriteFile(filepath.Join(app, "olm-cmp.yaml"), []byte(doc), 0o644)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				r := Run(context.Background(), Options{Loader: loader}, []string{app}).Applications[0]
				if r.Status != Available || r.Chosen != catalogtest.Version(39) {
					b.Fatalf("got %+v", r)
				}
			}
		})
	}
}
