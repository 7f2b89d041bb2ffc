package versions

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/catalog"
	"github.com/olm-cmp/olm-cmp/internal/catalog/catalogtest"
)

// tenThousand writes one package of 10,000 bundles (a replaces chain, each
// entry's skipRange holding every version below it: the worst case for
// the successor rules) and returns its directory.
func tenThousand(b *testing.B) string {
	dir := b.TempDir()
	if _, err := catalogtest.Generate(dir, catalogtest.Options{Bundles: 10_000, PerPackage: 10_000}); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkReadPackage10000: the 136 MB catalog streamed (a directory, as
// from a repository), and its package read from the index (a catalog
// image cached by digest, after the first read).
func BenchmarkReadPackage10000(b *testing.B) {
	dir := tenThousand(b)
	pkg := catalogtest.PackageName(0)
	b.Run("streamed", func(b *testing.B) {
		for b.Loop() {
			if _, err := ReadPackage(context.Background(), os.DirFS(dir), pkg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("indexed", func(b *testing.B) {
		cat := catalog.Open(os.DirFS(dir), filepath.Join(b.TempDir(), "sha256-x.index"))
		if _, err := ReadPackage(context.Background(), cat, pkg); err != nil { // builds the index
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := ReadPackage(context.Background(), cat, pkg); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkSuccessors10000(b *testing.B) {
	p, err := ReadPackage(context.Background(), os.DirFS(tenThousand(b)), catalogtest.PackageName(0))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("olmv1", func(b *testing.B) {
		for b.Loop() {
			s, err := SuccessorsOLMv1(p, "1.0.0", nil, "")
			if err != nil || len(s) != 9999 {
				b.Fatal(len(s), err)
			}
		}
	})
	b.Run("olmv0", func(b *testing.B) {
		for b.Loop() {
			if _, ok := NextOLMv0(p, "1.0.0", "stable"); !ok {
				b.Fatal("no next")
			}
		}
	})
}
