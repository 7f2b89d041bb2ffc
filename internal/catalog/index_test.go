package catalog

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/olm-cmp/olm-cmp/internal/catalog/catalogtest"
)

// countingFS counts the files opened in it.
type countingFS struct {
	fs.FS
	opens atomic.Int64
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.opens.Add(1)
	return c.FS.Open(name)
}

func chooseIndexed(t *testing.T, fsys fs.FS, index string, q Query) (string, string) {
	t.Helper()
	image, version, err := Choose(context.Background(), Open(fsys, index), q)
	if err != nil {
		t.Fatal(err)
	}
	return image, version
}

// TestIndexAnswersLikeStreaming: every choice of the fixture catalogs is
// the same through the index as through a streaming pass, and once the
// index exists a choice opens no catalog file.
func TestIndexAnswersLikeStreaming(t *testing.T) {
	dirs := []string{testCatalog}
	if shared, err := filepath.Abs("../../../shared/olmv1-testdata/catalogs/test-catalog"); err == nil {
		for _, v := range []string{"v1", "v2"} {
			if d := filepath.Join(shared, v, "configs"); dirExists(d) {
				dirs = append(dirs, d)
			}
		}
	}
	for _, dir := range dirs {
		fsys := &countingFS{FS: os.DirFS(dir)}
		index := filepath.Join(t.TempDir(), "sha256", "abc.index")
		for _, pkg := range []string{"widget", "gadget", "test", "webhook-operator", "nope"} {
			for _, rng := range []string{"", ">=1.0.0 <2", "1.0.0", "<1.0.0"} {
				q := Query{Package: pkg, Range: rng}
				wantImage, wantVersion, wantErr := Choose(context.Background(), os.DirFS(dir), q)
				image, version, err := Choose(context.Background(), Open(fsys, index), q)
				if image != wantImage || version != wantVersion || (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
					t.Errorf("%s %+v: indexed %q %q %v, streamed %q %q %v", dir, q, image, version, err, wantImage, wantVersion, wantErr)
				}
			}
		}
		opened := fsys.opens.Load()
		if _, _, err := Choose(context.Background(), Open(fsys, index), Query{Package: "widget"}); err != nil && !strings.Contains(err.Error(), "not found") {
			t.Fatal(err)
		}
		if n := fsys.opens.Load() - opened; n != 0 {
			t.Errorf("%s: a choice through an existing index opened %d catalog files", dir, n)
		}
	}
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// TestIndexRebuiltWhenDamaged: an index file that is truncated (a pass
// killed half-way, a full disk), has a byte changed, or is not an index at
// all is rebuilt, never trusted: the choice is still right.
func TestIndexRebuiltWhenDamaged(t *testing.T) {
	fsys := os.DirFS(testCatalog)
	q := Query{Package: "widget", Channel: "stable"}
	wantImage, wantVersion := chooseIndexed(t, fsys, filepath.Join(t.TempDir(), "x.index"), q)
	for _, tc := range []struct {
		name   string
		damage func(data []byte) []byte
	}{
		{"half written", func(d []byte) []byte { return d[:len(d)/2] }},
		{"empty", func([]byte) []byte { return nil }},
		{"byte changed in a package's slice", func(d []byte) []byte {
			i := strings.Index(string(d), "widget.v1.2.0")
			d[i+len("widget.v1.")] = '9' // still decodes: only the checksum can tell
			return d
		}},
		{"byte changed in the table", func(d []byte) []byte {
			i := strings.LastIndex(string(d), `"packages"`)
			d[i+2] = 'P'
			return d
		}},
		{"another format", func([]byte) []byte { return []byte("olm-cmp catalog index 0\n" + strings.Repeat("x", 100)) }},
		{"table length beyond the file", func(d []byte) []byte {
			d[len(d)-trailerLen] = 0x7f
			return d
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			index := filepath.Join(t.TempDir(), "x.index")
			chooseIndexed(t, fsys, index, q)
			good, err := os.ReadFile(index)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(index, tc.damage(append([]byte(nil), good...)), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := readIndex(index, "widget", func(*object) error { return nil }); err == nil {
				t.Fatal("the damaged index was read without complaint")
			}
			before := indexPasses.Load()
			image, version := chooseIndexed(t, fsys, index, q)
			if image != wantImage || version != wantVersion {
				t.Errorf("chose %s %s from a damaged index, want %s %s", image, version, wantImage, wantVersion)
			}
			if n := indexPasses.Load() - before; n != 1 {
				t.Errorf("%d index passes, want 1 (rebuilt)", n)
			}
			if got, _ := os.ReadFile(index); string(got) != string(good) {
				t.Error("the rebuilt index differs from the first one")
			}
		})
	}
}

// TestIndexSharedPass: concurrent choices from a catalog with no index yet
// share one pass.
func TestIndexSharedPass(t *testing.T) {
	dir := t.TempDir()
	if _, err := catalogtest.Generate(dir, catalogtest.Options{Bundles: 400}); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(t.TempDir(), "x.index")
	before := indexPasses.Load()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			pkg := catalogtest.PackageName(i)
			_, version, err := Choose(context.Background(), Open(os.DirFS(dir), index), Query{Package: pkg})
			if err != nil || version != catalogtest.Version(39) {
				t.Errorf("%s: %s %v", pkg, version, err)
			}
		})
	}
	wg.Wait()
	if n := indexPasses.Load() - before; n != 1 {
		t.Errorf("%d index passes for 8 concurrent choices, want 1", n)
	}
}

// TestIndexKeepsCatalogErrors: a catalog file that does not parse fails
// every choice with the same message, from the index, without a new pass;
// a package's own broken object fails that package only.
func TestIndexKeepsCatalogErrors(t *testing.T) {
	broken := fstest.MapFS{
		"a.json": {Data: []byte(`{"schema": "olm.package", "name": "a"}` + "\n{\"schema\": ")},
	}
	index := filepath.Join(t.TempDir(), "x.index")
	_, _, err1 := Choose(context.Background(), Open(broken, index), Query{Package: "a"})
	before := indexPasses.Load()
	_, _, err2 := Choose(context.Background(), Open(broken, index), Query{Package: "a"})
	if err1 == nil || err2 == nil || err1.Error() != err2.Error() || !strings.Contains(err1.Error(), "a.json: document 2: not valid JSON") {
		t.Errorf("errors %v, then %v", err1, err2)
	}
	if n := indexPasses.Load() - before; n != 0 {
		t.Errorf("%d passes for a catalog already indexed", n)
	}

	mixed := fstest.MapFS{
		"a.json": {Data: []byte(`{"schema": "olm.package", "name": "a"}
{"schema": "olm.bundle", "name": "a.v1", "package": "a", "image": "x/a:1", "properties": [{"type": "olm.package", "value": {"packageName": "a", "version": "one"}}]}
{"schema": "olm.package", "name": "b"}
{"schema": "olm.bundle", "name": "b.v1", "package": "b", "image": "x/b:1", "properties": [{"type": "olm.package", "value": {"packageName": "b", "version": "1.0.0"}}]}
`)},
	}
	index = filepath.Join(t.TempDir(), "y.index")
	if _, _, err := Choose(context.Background(), Open(mixed, index), Query{Package: "a"}); err == nil || !strings.Contains(err.Error(), `a.json: document 2: bundle "a.v1": olm.package version "one"`) {
		t.Errorf("package a: %v", err)
	}
	if image, _ := chooseIndexed(t, mixed, index, Query{Package: "b"}); image != "x/b:1" {
		t.Errorf("package b: %s", image)
	}
}

// TestIndexBuildCancelled: a pass cut short leaves no index behind, and
// the next choice builds it.
func TestIndexBuildCancelled(t *testing.T) {
	index := filepath.Join(t.TempDir(), "x.index")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := writeIndex(ctx, os.DirFS(testCatalog), index); err == nil {
		t.Fatal("a cancelled pass succeeded")
	}
	if _, err := os.Stat(index); !os.IsNotExist(err) {
		t.Errorf("a cancelled pass left %s: %v", index, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(index))
	if len(entries) != 0 {
		t.Errorf("a cancelled pass left %d files", len(entries))
	}
	if _, version := chooseIndexed(t, os.DirFS(testCatalog), index, Query{Package: "widget", Channel: "stable"}); version != "1.2.0" {
		t.Errorf("chose %s", version)
	}
}

// TestIndexUnwritable: when the cache cannot hold the index (a full or
// read-only volume; here its directory is a file), choices read the
// catalog itself instead of failing.
func TestIndexUnwritable(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, version := chooseIndexed(t, os.DirFS(testCatalog), filepath.Join(notDir, "x.index"), Query{Package: "widget", Channel: "stable"})
	if version != "1.2.0" {
		t.Errorf("chose %s, want 1.2.0", version)
	}
}
