package bundle

import (
	"context"
	"crypto/sha256"
	"path/filepath"
	"testing"
)

func TestParseCache(t *testing.T) {
	cache := NewParseCache(1 << 20)
	l := &ImageLoader{Parsed: cache}
	ctx := context.Background()
	abs, _ := filepath.Abs("testdata/good")
	o := Origin{Ref: "testdata/good", Dir: abs}
	want, err := LoadDir("testdata/good")
	if err != nil {
		t.Fatal(err)
	}
	first, err := l.Load(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	sameBundle(t, first, want)
	if cache.files.Len() != 5 {
		t.Errorf("cache holds %d files, want the 5 manifests", cache.files.Len())
	}
	// Edits of a loaded bundle reach neither the cache nor later loads.
	for _, o := range append(first.Others, first.CRDs...) {
		if err := o.SetName("edited"); err != nil {
			t.Fatal(err)
		}
	}
	second, err := l.Load(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	sameBundle(t, second, want)

	// Files with anchors are parsed every time (a copied alias would share
	// its target with the cache), and still load correctly.
	fsys := fsWith(map[string]string{"manifests/anchors.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: &l {app: x}\n  annotations: *l\n"})
	small := NewParseCache(1 << 20)
	for range 2 {
		b, err := loadFS(fsys, Origin{}, small)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.Others[0].GetAnnotations()["app"]; got != "x" {
			t.Errorf("aliased annotations = %v", b.Others[0].GetAnnotations())
		}
	}
	if small.files.Len() != 1 {
		t.Errorf("cache holds %d files, want only the CSV", small.files.Len())
	}

	// The size bound holds, least recently used out first.
	docA, docB := "apiVersion: v1\nkind: A\n", "apiVersion: v1\nkind: B\n"
	tiny := NewParseCache(int64(len(docA) + len(docB)))
	for _, d := range []string{docA, docB, docA, "apiVersion: v1\nkind: C\n"} {
		if _, err := tiny.parse([]byte(d)); err != nil {
			t.Fatal(err)
		}
	}
	if bound := int64(len(docA) + len(docB)); tiny.files.Bytes() > bound || tiny.files.Len() != 2 {
		t.Errorf("cache holds %d bytes in %d entries, bound %d", tiny.files.Bytes(), tiny.files.Len(), bound)
	}
	if _, ok := tiny.files.Get(sha256.Sum256([]byte(docA))); !ok {
		t.Error("the recently used file was evicted")
	}
}

func BenchmarkLoadDirSailParseCache(b *testing.B) {
	dir := filepath.Join(sharedDir(b), "bundles", "sailoperator-1.30.3")
	l := &ImageLoader{Parsed: NewParseCache(64 << 20)}
	o := Origin{Ref: dir, Dir: dir}
	if _, err := l.Load(context.Background(), o); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := l.Load(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
}
