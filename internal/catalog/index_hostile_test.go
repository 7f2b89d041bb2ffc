package catalog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func writeOneBundle(t *testing.T, dir, image, version string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	body := `{"schema":"olm.package","name":"p"}
{"schema":"olm.channel","name":"stable","package":"p","entries":[{"name":"p.v` + version + `"}]}
{"schema":"olm.bundle","name":"p.v` + version + `","package":"p","image":"` + image + `","properties":[{"type":"olm.package","value":{"packageName":"p","version":"` + version + `"}}]}
`
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// An intact index of another catalog (another digest's, copied or restored
// from a backup under this digest's name) is not this catalog's: rebuilt,
// never trusted.
func TestIndexOfAnotherCatalogRebuilt(t *testing.T) {
	d := t.TempDir()
	a, b := filepath.Join(d, "sha256-aaaa"), filepath.Join(d, "sha256-bbbb")
	writeOneBundle(t, a, "example.com/a@sha256:1", "1.0.0")
	writeOneBundle(t, b, "example.com/b@sha256:2", "2.0.0")
	if img, _, err := Choose(context.Background(), Open(os.DirFS(a), a+".index"), Query{Package: "p"}); err != nil || img != "example.com/a@sha256:1" {
		t.Fatalf("catalog a chose %q, %v", img, err)
	}
	data, err := os.ReadFile(a + ".index")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b+".index", data, 0o644); err != nil {
		t.Fatal(err)
	}
	img, v, err := Choose(context.Background(), Open(os.DirFS(b), b+".index"), Query{Package: "p"})
	if err != nil || img != "example.com/b@sha256:2" || v != "2.0.0" {
		t.Fatalf("catalog b chose %q %q, %v, want its own bundle 2.0.0", img, v, err)
	}
}

// An index path that is not a regular file (a FIFO, a symbolic link to one)
// would block the open for ever: replaced by a rebuilt index instead.
func TestIndexNotARegularFileRebuilt(t *testing.T) {
	for _, link := range []bool{false, true} {
		d := t.TempDir()
		a := filepath.Join(d, "sha256-aaaa")
		writeOneBundle(t, a, "example.com/a@sha256:1", "1.0.0")
		fifo := a + ".index"
		if link {
			fifo = filepath.Join(d, "fifo")
			if err := os.Symlink(fifo, a+".index"); err != nil {
				t.Fatal(err)
			}
		}
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Skipf("no FIFOs here: %v", err)
		}
		type result struct {
			img string
			err error
		}
		done := make(chan result, 1)
		go func() {
			img, _, err := Choose(context.Background(), Open(os.DirFS(a), a+".index"), Query{Package: "p"})
			done <- result{img, err}
		}()
		select {
		case r := <-done:
			if r.err != nil || r.img != "example.com/a@sha256:1" {
				t.Fatalf("chose %q, %v", r.img, r.err)
			}
		case <-time.After(20 * time.Second):
			// Unblock the open so the test ends; the choice hung.
			if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
				f.Close()
			}
			t.Fatalf("symlink %v: the choice blocked opening a FIFO as its index", link)
		}
		fi, err := os.Lstat(a + ".index")
		if err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("symlink %v: the index is not rebuilt as a regular file: %v, %v", link, fi, err)
		}
	}
}

// An index an older reader wrote (another version in its first line) is
// rebuilt: it holds what that reader made of the catalog.
func TestIndexOfAnOlderReaderRebuilt(t *testing.T) {
	d := t.TempDir()
	a := filepath.Join(d, "sha256-aaaa")
	writeOneBundle(t, a, "example.com/a@sha256:1", "1.0.0")
	if _, _, err := Choose(context.Background(), Open(os.DirFS(a), a+".index"), Query{Package: "p"}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(a + ".index")
	if err != nil {
		t.Fatal(err)
	}
	old := append([]byte("olm-cmp catalog index 1\n"), data[len(indexMagic):]...)
	if err := os.WriteFile(a+".index", old, 0o644); err != nil {
		t.Fatal(err)
	}
	before := indexPasses.Load()
	if _, _, err := Choose(context.Background(), Open(os.DirFS(a), a+".index"), Query{Package: "p"}); err != nil {
		t.Fatal(err)
	}
	if n := indexPasses.Load() - before; n != 1 {
		t.Errorf("%d index passes, want the old reader's index rebuilt once", n)
	}
}

// A package past the item bound is not read whole from the index: its
// objects are decoded one at a time and decoding stops past the bound (a
// package of a million bundles once made a choice hold 1.2 GB), and the
// choice fails as the streaming read does.
func TestIndexStopsPastThePackageBound(t *testing.T) {
	d := t.TempDir()
	a := filepath.Join(d, "sha256-aaaa")
	if err := os.MkdirAll(a, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(`{"schema":"olm.package","name":"p"}` + "\n")
	for i := range maxPackageItems + 100 {
		fmt.Fprintf(&b, `{"schema":"olm.channel","name":"c%d","package":"p"}`+"\n", i)
	}
	if err := os.WriteFile(filepath.Join(a, "catalog.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := Choose(context.Background(), Open(os.DirFS(a), a+".index"), Query{Package: "p"})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("has over %d bundles, properties and channel entries", maxPackageItems)) {
		t.Fatalf("got %v, want the package's bound", err)
	}
	n := 0
	if _, err := readIndex(a+".index", "p", func(*object) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n > maxPackageItems+1 {
		t.Errorf("%d objects decoded, want at most %d", n, maxPackageItems+1)
	}
}

// The index pass keeps an entry for each package: a catalog of more
// packages than any vendor's is refused once, and the refusal kept (a
// million one-object packages made the pass hold 890 MB, and its table,
// too large to read back, was rebuilt on every choice).
func TestIndexRefusesTooManyPackages(t *testing.T) {
	d := t.TempDir()
	a := filepath.Join(d, "sha256-aaaa")
	if err := os.MkdirAll(a, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := range maxIndexPackages + 1 {
		fmt.Fprintf(&b, `{"schema":"olm.package","name":"p%d"}`+"\n", i)
	}
	if err := os.WriteFile(filepath.Join(a, "catalog.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("catalog: over %d packages: not a catalog olm-cmp reads", maxIndexPackages)
	for i := range 2 {
		before := indexPasses.Load()
		_, _, err := Choose(context.Background(), Open(os.DirFS(a), a+".index"), Query{Package: "p1"})
		if err == nil || err.Error() != want {
			t.Fatalf("choice %d: got %v, want %q", i, err, want)
		}
		if n, wantPasses := indexPasses.Load()-before, int64(1-i); n != wantPasses {
			t.Errorf("choice %d: %d index passes, want %d", i, n, wantPasses)
		}
	}
}

// An index damaged while choices read it (truncated, rewritten in place,
// removed) never yields a wrong answer or an error: each choice reads one
// consistent view, checked, or rebuilds. Checking the slice and decoding it
// in two passes once let an in-place rewrite between them through.
func TestIndexDamagedWhileChoosing(t *testing.T) {
	d := t.TempDir()
	a := filepath.Join(d, "sha256-aaaa")
	writeOneBundle(t, a, "example.com/a@sha256:1", "1.0.0")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			switch i % 3 {
			case 0:
				os.Truncate(a+".index", 50)
			case 1:
				os.WriteFile(a+".index", []byte("olm-cmp catalog index 3\ngarbage"), 0o644)
			case 2:
				os.Remove(a + ".index")
			}
		}
	}()
	errs := make(chan string, 1000)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				img, v, err := Choose(context.Background(), Open(os.DirFS(a), a+".index"), Query{Package: "p"})
				if err != nil || img != "example.com/a@sha256:1" || v != "1.0.0" {
					select {
					case errs <- img + " " + v + " " + func() string {
						if err != nil {
							return err.Error()
						}
						return ""
					}():
					default:
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	close(errs)
	for e := range errs {
		t.Errorf("a choice from a damaged index: %s", e)
	}
}
