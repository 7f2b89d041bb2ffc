package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/catalog/catalogtest"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// catalogBenchSizes are the generated catalogs' bundle counts;
// OLM_CMP_BENCH_BUNDLES (comma-separated) replaces them, e.g. 50000.
func catalogBenchSizes() []int {
	if s := os.Getenv("OLM_CMP_BENCH_BUNDLES"); s != "" {
		var out []int
		for _, f := range strings.Split(s, ",") {
			var n int
			fmt.Sscan(f, &n)
			if n > 0 {
				out = append(out, n)
			}
		}
		return out
	}
	return []int{1000, 10000}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// catalogBench is an in-process registry holding a generated vendor-sized
// catalog image and, for a few of its packages, the demo bundle with its
// CSV at the version the catalog chooses.
type catalogBench struct {
	host, catalog string
	pkgs          []string
}

func newCatalogBench(b *testing.B, bundles int) *catalogBench {
	b.Helper()
	host, _ := bundletest.NewRegistry(b)
	dir := b.TempDir()
	if _, err := catalogtest.Generate(dir, catalogtest.Options{Bundles: bundles, ImagePrefix: host + "/vendor"}); err != nil {
		b.Fatal(err)
	}
	bundleDir := filepath.Join(b.TempDir(), "bundle")
	copyTree(b, demoBundle, bundleDir)
	csv := filepath.Join(bundleDir, "manifests", "greeter-operator.clusterserviceversion.yaml")
	data, _ := os.ReadFile(csv)
	newest := catalogtest.Version(39)
	os.WriteFile(csv, []byte(strings.Replace(string(data), "version: 0.2.0", "version: "+newest, 1)), 0o644)
	cb := &catalogBench{host: host, catalog: host + "/vendor/catalog:latest"}
	for i := range 4 {
		pkg := catalogtest.PackageName(i * (bundles / 40) / 4)
		bundletest.PushDir(b, host, "vendor/"+pkg+"-bundle", "v"+newest, bundleDir)
		cb.pkgs = append(cb.pkgs, pkg)
	}
	bundletest.Push(b, host, "vendor/catalog", "latest", bundletest.CatalogImage(b, dir, "/configs"))
	return cb
}

func (cb *catalogBench) request(b *testing.B, pkg string) render.Request {
	src := b.TempDir()
	return render.Request{Spec: spec.Spec{Catalog: cb.catalog, Package: pkg, Namespace: "ns"}, SourceDir: src, RootDir: src}
}

// BenchmarkCatalogRenderCold is the first render from a catalog digest: the
// catalog image pulled and extracted, its index written in one streaming
// pass, the chosen bundle pulled and rendered. Every iteration starts from
// an empty image cache.
func BenchmarkCatalogRenderCold(b *testing.B) {
	for _, n := range catalogBenchSizes() {
		b.Run(fmt.Sprintf("bundles=%d", n), func(b *testing.B) {
			cb := newCatalogBench(b, n)
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				cache, err := os.MkdirTemp("", "olm-cmp-bench-")
				if err != nil {
					b.Fatal(err)
				}
				e := NewEngine(EngineOptions{Loader: &bundle.ImageLoader{CacheDir: cache, Insecure: []string{cb.host}}})
				b.StartTimer()
				start := cpuTime()
				if _, _, err := e.Render(context.Background(), cb.request(b, cb.pkgs[0])); err != nil {
					b.Fatal(err)
				}
				cpu += cpuTime() - start
				b.StopTimer()
				os.RemoveAll(cache)
				b.StartTimer()
			}
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkCatalogRenderWarm is a render from a catalog digest already
// indexed, for another package than the one that built the index: the tag
// resolved, the package's slice read, the bundle (cached) rendered. The
// rendered-output cache is off, so every iteration renders.
func BenchmarkCatalogRenderWarm(b *testing.B) {
	for _, n := range catalogBenchSizes() {
		b.Run(fmt.Sprintf("bundles=%d", n), func(b *testing.B) {
			cb := newCatalogBench(b, n)
			e := NewEngine(EngineOptions{Loader: &bundle.ImageLoader{CacheDir: b.TempDir(), Insecure: []string{cb.host}}, MaxEntries: -1})
			for _, pkg := range cb.pkgs { // index built, every bundle pulled
				if _, _, err := e.Render(context.Background(), cb.request(b, pkg)); err != nil {
					b.Fatal(err)
				}
			}
			reqs := []render.Request{}
			for _, pkg := range cb.pkgs[1:] {
				reqs = append(reqs, cb.request(b, pkg))
			}
			b.ResetTimer()
			start := cpuTime()
			i := 0
			for b.Loop() {
				res, _, err := e.Render(context.Background(), reqs[i%len(reqs)])
				if err != nil || res.Catalog.Version != catalogtest.Version(39) {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64((cpuTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}
