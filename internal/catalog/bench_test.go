package catalog

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/catalog/catalogtest"
)

// benchSizes are the generated catalogs' bundle counts; OLM_CMP_BENCH_BUNDLES
// (comma-separated) replaces them, e.g. 50000 for a 650 MB catalog.
func benchSizes() []int {
	if s := os.Getenv("OLM_CMP_BENCH_BUNDLES"); s != "" {
		var out []int
		for _, f := range splitComma(s) {
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

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkChooseDir is a choice from a catalog directory (a Git
// repository's catalog: no digest, one streaming pass per choice).
func BenchmarkChooseDir(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("bundles=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			size, err := catalogtest.Generate(dir, catalogtest.Options{Bundles: n})
			if err != nil {
				b.Fatal(err)
			}
			fsys := os.DirFS(dir)
			q := Query{Package: catalogtest.PackageName(n / 80), Range: ">=1.0.0"}
			b.SetBytes(size)
			b.ResetTimer()
			start := cpuTime()
			for b.Loop() {
				if _, _, err := Choose(fsys, q); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-start).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}
