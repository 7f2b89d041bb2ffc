package catalog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"
)

// .indexignore is read whole and every file of the catalog is matched
// against every pattern of its directories: 5,000 files and 5,000 patterns
// cost 3 CPU-s, 100,000 of each (a repository tarball allows them) hours,
// and a 500 MB file as much memory. Its size and pattern count are bounded.
func TestIndexIgnoreBounded(t *testing.T) {
	pkg := `{"schema":"olm.package","name":"p"}`
	for _, c := range []struct{ name, ignore, want string }{
		{"too many patterns", strings.Repeat("*a*b*c*d\n", maxIgnorePatterns+1), "sub/.indexignore: over 1000 patterns"},
		{"too large", "#" + strings.Repeat("x", maxIgnoreBytes) + "\n", "sub/.indexignore: over 65536 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsys := fstest.MapFS{"sub/.indexignore": {Data: []byte(c.ignore)}, "sub/c.json": {Data: []byte(pkg)}}
			_, _, err := Choose(context.Background(), fsys, Query{Package: "p"})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	// Nested directories each with their own: bounded in all.
	nested := fstest.MapFS{"c.json": {Data: []byte(pkg)}}
	dir := ""
	for range 5 {
		dir += "d/"
		nested[dir+".indexignore"] = &fstest.MapFile{Data: []byte(strings.Repeat("*a*b\n", 300))}
	}
	if _, _, err := Choose(context.Background(), nested, Query{Package: "p"}); err == nil || !strings.Contains(err.Error(), "over 1000 patterns in all") {
		t.Fatalf("nested: got %v", err)
	}
	// Up to the bounds, patterns still apply.
	fsys := fstest.MapFS{".indexignore": {Data: []byte(strings.Repeat("nothing-*\n", maxIgnorePatterns-1) + "bad.json\n")},
		"c.json":   {Data: []byte(pkg + "\n" + `{"schema":"olm.bundle","name":"p.v1","package":"p","image":"img","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}`)},
		"bad.json": {Data: []byte("{not json")}}
	if img, _, err := Choose(context.Background(), fsys, Query{Package: "p"}); err != nil || img != "img" {
		t.Fatalf("got %q, %v", img, err)
	}
}

// A FIFO named .indexignore (a repository can hold one) is refused before
// it is opened: opening it would block the render until its deadline.
func TestIndexIgnoreFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, ".indexignore"), 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := Choose(context.Background(), os.DirFS(dir), Query{Package: "p"})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), ".indexignore is not a regular file") {
			t.Fatalf("got %v", err)
		}
	case <-time.After(20 * time.Second):
		if f, err := os.OpenFile(filepath.Join(dir, ".indexignore"), os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("the choice blocked opening a FIFO .indexignore")
	}
}
