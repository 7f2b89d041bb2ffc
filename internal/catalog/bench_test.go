package catalog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
				if _, _, err := Choose(context.Background(), fsys, q); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-start).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkChooseSingleFile is a choice from one 31 MiB catalog.json (2,300
// bundles), the shape of a repository catalog that once grew the server by
// about 1 GB: run it alone under /usr/bin/time -v to read the peak RSS.
func BenchmarkChooseSingleFile(b *testing.B) {
	dir := b.TempDir()
	size, err := catalogtest.Generate(dir, catalogtest.Options{Bundles: 2300, SingleFile: true})
	if err != nil {
		b.Fatal(err)
	}
	fsys := os.DirFS(dir)
	q := Query{Package: catalogtest.PackageName(7)}
	b.SetBytes(size)
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := Choose(context.Background(), fsys, q); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIndexBuild is the first choice from a catalog image's digest:
// one streaming pass writing the per-package index.
func BenchmarkIndexBuild(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("bundles=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			size, err := catalogtest.Generate(dir, catalogtest.Options{Bundles: n})
			if err != nil {
				b.Fatal(err)
			}
			fsys := os.DirFS(dir)
			b.SetBytes(size)
			b.ResetTimer()
			var cpu time.Duration
			for b.Loop() {
				index := filepath.Join(b.TempDir(), "x.index")
				start := cpuTime()
				if _, _, err := Choose(context.Background(), Open(fsys, index), Query{Package: catalogtest.PackageName(0)}); err != nil {
					b.Fatal(err)
				}
				cpu += cpuTime() - start
			}
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkChooseIndexed is every later choice from the same digest, for
// any package: the package's slice of the index only.
func BenchmarkChooseIndexed(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("bundles=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			if _, err := catalogtest.Generate(dir, catalogtest.Options{Bundles: n}); err != nil {
				b.Fatal(err)
			}
			index := filepath.Join(b.TempDir(), "x.index")
			cat := Open(os.DirFS(dir), index)
			if _, _, err := Choose(context.Background(), cat, Query{Package: catalogtest.PackageName(0)}); err != nil {
				b.Fatal(err)
			}
			pkgs := n / 40
			b.ResetTimer()
			start := cpuTime()
			i := 0
			for b.Loop() {
				if _, _, err := Choose(context.Background(), cat, Query{Package: catalogtest.PackageName(i % pkgs), Range: ">=1.0.0"}); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64((cpuTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}
