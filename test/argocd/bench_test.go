// Shared by test/argocd (Argo CD v2) and test/argocd-v3 (symlinked there).

package cmptest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// benchBundle is one operator of ../shared/bundles.
type benchBundle struct {
	name, dir, namespace string
}

// BenchmarkWarmRender measures one Application refresh through the
// repo-server's own code path (named plugin: CheckPluginConfiguration, then
// MatchRepository and GenerateManifest, each streaming the repository tarball,
// then parsing the answer) once the caches are warm, for olm-cmp serve
// (native), Argo CD's argocd-cmp-server forking olm-cmp generate (classic),
// and a plugin that does nothing but read the streams and return the same
// manifests (floor: the repo-server side's own cost). The bundle is either an
// image on an in-process registry (what users deploy) or a directory committed
// next to olm-cmp.yaml. Reports p50/p90 per call and, for native, olm-cmp's
// own p50 per RPC from its request log.
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
		// One repository per source: the repo-server streams the whole
		// repository root to the plugin, not just the app directory.
		repos := map[string]string{}
		r := newRepo(b)
		r.file("apps/image/olm-cmp.yaml", olmCmpYAML(bb.name, "bundle: "+pb.Tag, "namespace: "+bb.namespace))
		repos["image"] = r.root
		r = newRepo(b)
		r.file("apps/dir/olm-cmp.yaml", olmCmpYAML(bb.name, "bundle: ./bundle", "namespace: "+bb.namespace))
		r.copyDir(bb.dir, "apps/dir/bundle")
		repos["dir"] = r.root
		for _, source := range []string{"image", "dir"} {
			req := GenRequest{RepoRoot: repos[source], AppPath: "apps/" + source, AppName: bb.name + "-" + source,
				Plugin: &Plugin{Name: pluginCfg.pluginName()}}
			b.Setenv("ARGOCD_PLUGINSOCKFILEPATH", native.socketDir)
			out, _, err := argoGenerate(ctxTimeout(b, 2*time.Minute), req)
			if err != nil {
				b.Fatalf("GenerateManifests (native): %v", err)
			}
			floor := startFloor(b, out)
			for _, mode := range []struct{ name, socketDir string }{{"native", native.socketDir}, {"classic", classic}, {"floor", floor}} {
				b.Run(bb.name+"/"+source+"/"+mode.name, func(b *testing.B) {
					b.Setenv("ARGOCD_PLUGINSOCKFILEPATH", mode.socketDir)
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
					logStart := native.logs.Len()
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
					if mode.name == "native" {
						// olm-cmp's own time per RPC, from its request log.
						// srv-*: the whole call as olm-cmp sees it; work-*: the same
						// minus the wait for the repo-server to tar and compress
						// the repository before it sends the first message.
						for rpc, unit := range map[string]string{"GenerateManifest": "gen", "MatchRepository": "match"} {
							log := native.logs.String()[logStart:]
							if d := serverDurations(log, rpc, req.AppName); len(d) > 0 {
								sort.Float64s(d)
								b.ReportMetric(d[len(d)/2], "srv-"+unit+"-p50-ms")
							}
							if d := serverWork(log, rpc, req.AppName); len(d) > 0 {
								sort.Float64s(d)
								b.ReportMetric(d[len(d)/2], "work-"+unit+"-p50-ms")
							}
						}
					}
				})
			}
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// serverDurations returns duration_ms of olm-cmp serve's request log lines for
// one RPC and app.
func serverDurations(log, rpc, app string) []float64 {
	var out []float64
	for _, e := range serverLog(log, rpc, app) {
		out = append(out, e.Duration)
	}
	return out
}

// serverWork returns duration_ms minus wait_ms (the repo-server preparing
// its tarball) of the same lines.
func serverWork(log, rpc, app string) []float64 {
	var out []float64
	for _, e := range serverLog(log, rpc, app) {
		out = append(out, e.Duration-e.Wait)
	}
	return out
}

type requestLog struct {
	RPC      string  `json:"rpc"`
	App      string  `json:"app"`
	Duration float64 `json:"duration_ms"`
	Wait     float64 `json:"wait_ms"`
}

func serverLog(log, rpc, app string) []requestLog {
	var out []requestLog
	for _, line := range strings.Split(log, "\n") {
		var e requestLog
		if json.Unmarshal([]byte(line), &e) == nil && e.RPC == rpc && e.App == app {
			out = append(out, e)
		}
	}
	return out
}
