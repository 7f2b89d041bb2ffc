package catalog_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/catalog"
	"github.com/olm-cmp/olm-cmp/internal/catalog/catalogtest"
)

// countingFS counts the files opened: a catalog read streams every file.
type countingFS struct {
	fs.FS
	opens atomic.Int64
}

func (c *countingFS) Open(name string) (fs.File, error) {
	if name != "." {
		c.opens.Add(1)
	}
	return c.FS.Open(name)
}

// TestMemoReadsOnce: the four reads of one upgrade run (today's choice,
// the package's contents, the new version's choice, the upgrade graph)
// read a catalog directory once with a Memo, and the shared package is not
// changed by a choice that cuts and sorts its candidates.
func TestMemoReadsOnce(t *testing.T) {
	dir := t.TempDir()
	if _, err := catalogtest.Generate(dir, catalogtest.Options{Bundles: 80, PerPackage: 40, ImagePrefix: "example.com/x"}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pkg := catalogtest.PackageName(1)
	run := func(memo *catalog.Memo) (int64, string) {
		cfs := &countingFS{FS: os.DirFS(dir)}
		open := func() fs.FS { return catalog.Open(cfs, "").Remember(memo, "dir:"+filepath.Clean(dir)) }
		_, v0, err := catalog.Choose(ctx, open(), catalog.Query{Package: pkg, Range: "<=" + catalogtest.Version(3)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := catalog.ReadContents(ctx, open(), pkg); err != nil {
			t.Fatal(err)
		}
		_, v1, err := catalog.Choose(ctx, open(), catalog.Query{Package: pkg})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := catalog.ReadGraph(ctx, open(), pkg, ""); err != nil {
			t.Fatal(err)
		}
		return cfs.opens.Load(), v0 + " " + v1
	}
	without, want := run(nil)
	with, got := run(catalog.NewMemo())
	if without == 0 || with*4 != without {
		t.Errorf("files opened: %d with a memo, %d without; want a quarter", with, without)
	}
	if got != want {
		t.Errorf("with a memo the choices are %q, without %q", got, want)
	}
}
