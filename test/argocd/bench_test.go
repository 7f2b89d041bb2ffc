// Shared by test/argocd (Argo CD v2) and test/argocd-v3 (symlinked there).

package cmptest

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// benchBundle is one operator of ../shared/bundles.
type benchBundle struct {
	name, dir, namespace string
}

// BenchmarkWarmRender measures one Application refresh through the
// repo-server's own code path (named plugin: CheckPluginConfiguration,
// MatchRepository, GenerateManifest, each with the repository tarball) once
// the caches are warm, for olm-cmp serve (native) and Argo CD's
// argocd-cmp-server forking olm-cmp generate (classic). The bundle is either
// an image on an in-process registry (what users deploy) or a directory
// committed next to olm-cmp.yaml. Reports p50/p90 per call.
func BenchmarkWarmRender(b *testing.B) {
	shared := filepath.Join(repoRoot, "..", "shared", "bundles")
	bundles := []benchBundle{
		{"lws", filepath.Join(shared, "leader-worker-set-1.0.0"), "openshift-lws-operator"},
		{"sail", filepath.Join(shared, "sailoperator-1.30.3"), "sail-operator"},
	}
	for _, bb := range bundles {
		if _, err := os.Stat(bb.dir); err != nil {
			b.Skipf("no %s (../shared missing): %v", bb.dir, err)
		}
	}
	requireBinary(b)
	reg := startRegistry(b)
	native := startNative(b, "--insecure-registry", reg.host)
	classic := startClassic(b, "--insecure-registry", reg.host)

	for _, bb := range bundles {
		pb := pushBundle(b, reg.host, "olm/"+bb.name+"-bundle:v1", bb.dir)
		r := newRepo(b)
		r.file("apps/image/olm-cmp.yaml", olmCmpYAML(bb.name, "bundle: "+pb.Tag, "namespace: "+bb.namespace))
		r.file("apps/dir/olm-cmp.yaml", olmCmpYAML(bb.name, "bundle: ./bundle", "namespace: "+bb.namespace))
		r.copyDir(bb.dir, "apps/dir/bundle")
		for _, source := range []string{"image", "dir"} {
			for _, mode := range []struct{ name, socketDir string }{{"native", native.socketDir}, {"classic", classic}} {
				b.Run(bb.name+"/"+source+"/"+mode.name, func(b *testing.B) {
					b.Setenv("ARGOCD_PLUGINSOCKFILEPATH", mode.socketDir)
					req := GenRequest{RepoRoot: r.root, AppPath: "apps/" + source, AppName: bb.name,
						Plugin: &Plugin{Name: pluginCfg.pluginName()}}
					// Warm up: pull, convert, fill the caches.
					var want int
					for range 3 {
						m, _, err := argoGenerate(ctxTimeout(b, 2*time.Minute), req)
						if err != nil {
							b.Fatalf("GenerateManifests: %v", err)
						}
						want = len(m)
					}
					durs := make([]time.Duration, 0, b.N)
					b.ResetTimer()
					for range b.N {
						ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
						start := time.Now()
						m, _, err := argoGenerate(ctx, req)
						durs = append(durs, time.Since(start))
						cancel()
						if err != nil {
							b.Fatalf("GenerateManifests: %v", err)
						}
						if len(m) != want {
							b.Fatalf("%d manifests, warm-up had %d", len(m), want)
						}
					}
					b.StopTimer()
					sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
					b.ReportMetric(ms(durs[len(durs)/2]), "p50-ms")
					b.ReportMetric(ms(durs[(len(durs)*9)/10]), "p90-ms")
					b.ReportMetric(float64(want), "objects")
				})
			}
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
