package cmpserver

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/engine"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// BenchmarkGenerateManifestWarm measures a warm GenerateManifest through the
// socket with our own client: stream + extract + tag resolution (HEAD on an
// in-process registry) + cache hit. lws and sail need ../shared/bundles.
func BenchmarkGenerateManifestWarm(b *testing.B) {
	cases := []struct{ name, dir, extra string }{
		{"tiny", filepath.Join(repoDir, "bundles/tiny"), ""},
		{"lws", "../../../shared/bundles/leader-worker-set-1.0.0", "  namespace: openshift-lws-operator\n  examples: [LeaderWorkerSetOperator]\n"},
		{"sail", "../../../shared/bundles/sailoperator-1.30.3", "  namespace: sail-operator\n"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if _, err := os.Stat(c.dir); err != nil {
				b.Skip("needs ../shared/bundles")
			}
			host, _ := bundletest.NewRegistry(b)
			bundletest.PushDir(b, host, "bundles/"+c.name, "v1", c.dir)
			ts := startServer(b, engine.NewEngine(engine.EngineOptions{Loader: &bundle.ImageLoader{CacheDir: b.TempDir(), Insecure: []string{host}}}))
			repo := b.TempDir()
			os.MkdirAll(filepath.Join(repo, "app"), 0o755)
			extra := c.extra
			if extra == "" {
				extra = "  namespace: tiny-system\n"
			}
			os.WriteFile(filepath.Join(repo, "app", spec.FileName), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: "+host+"/bundles/"+c.name+":v1\n"+extra), 0o644)
			tgz := tgzOf(b, repo)
			ctx := context.Background()
			cl := call{tgz: tgz, appRelPath: "app"}
			if _, err := ts.generate(ctx, b, cl); err != nil { // cold: pull + render
				b.Fatal(err)
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if _, err := ts.generate(ctx, b, cl); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
