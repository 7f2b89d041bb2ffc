package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/engine/enginetest"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// benchBundles are the demo bundle and, when ../shared is there, sail-operator
// (2.9 MB of CRDs).
func benchBundles(b *testing.B) map[string]string {
	out := map[string]string{"demo": demoBundle}
	if sail := "../../../shared/bundles/sailoperator-1.30.3"; dirExists(sail) {
		out["sail"] = sail
	}
	return out
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// BenchmarkRenderHit is a warm request: resolve (a fake registry), key
// (hashing the source files) and a cache hit.
func BenchmarkRenderHit(b *testing.B) {
	for name, dir := range benchBundles(b) {
		b.Run(name, func(b *testing.B) {
			abs, _ := filepath.Abs(dir)
			e := NewEngine(EngineOptions{Loader: enginetest.NewLoader(demoRef, abs, digestA)})
			req := render.Request{Spec: spec.Spec{Bundle: "example.com/demo-bundle", Version: "v1", Namespace: "ns"}, SourceDir: b.TempDir()}
			if _, _, err := e.Render(context.Background(), req); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, info, err := e.Render(context.Background(), req); err != nil || info.Cache != "hit" {
					b.Fatal(info, err)
				}
			}
		})
	}
}

// BenchmarkRenderMiss is a render with the cache off: load (no parse
// cache) and RenderBundle, YAML and JSON.
func BenchmarkRenderMiss(b *testing.B) {
	for name, dir := range benchBundles(b) {
		b.Run(name, func(b *testing.B) {
			abs, _ := filepath.Abs(dir)
			e := NewEngine(EngineOptions{Loader: enginetest.NewLoader(demoRef, abs, digestA), MaxEntries: -1})
			req := render.Request{Spec: spec.Spec{Bundle: "example.com/demo-bundle", Version: "v1", Namespace: "ns"}, SourceDir: b.TempDir()}
			for b.Loop() {
				if _, _, err := e.Render(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
