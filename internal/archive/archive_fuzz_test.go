package archive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// FuzzArchive feeds arbitrary bytes to both policies, as a stream (Walk) and
// written out (Extractor): whatever the bytes, nothing panics, nothing is
// written beside the destination, and every kept symbolic link resolves
// inside it.
func FuzzArchive(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		limits := Limits{MaxBytes: 1 << 20, MaxEntries: 64}
		for _, opts := range []Options{
			{Compression: Detect, Links: NoLinks, Select: Select{Top: []string{"manifests", "metadata"}}, Whiteouts: true, Limits: limits},
			{Compression: Detect, Links: LinksInside, Limits: limits, Root: "the repository"},
		} {
			_ = Walk(context.Background(), bytes.NewReader(data), opts, func(Entry) error { return nil })

			parent := t.TempDir()
			dst := filepath.Join(parent, "dst")
			if err := os.Mkdir(dst, 0o700); err != nil {
				t.Fatal(err)
			}
			x, err := NewExtractor(dst, opts)
			if err != nil {
				t.Fatal(err)
			}
			_ = x.Extract(context.Background(), bytes.NewReader(data), nil)
			x.Close()
			if entries, _ := os.ReadDir(parent); len(entries) != 1 {
				t.Fatalf("the extraction wrote beside its destination: %v", entries)
			}
			filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.Type()&os.ModeSymlink == 0 {
					return nil
				}
				real, err := filepath.EvalSymlinks(p)
				if err != nil {
					return nil // dangling: refused or removed, never followed
				}
				if rel, err := filepath.Rel(dst, real); err != nil || !filepath.IsLocal(rel) && rel != "." {
					t.Fatalf("link %s leads outside the destination, to %s", p, real)
				}
				return nil
			})
		}
	})
}

// fuzzSeeds are small archives of each kind the walker must refuse or keep.
func fuzzSeeds(f *testing.F) [][]byte {
	tarOf := func(hdrs ...tar.Header) []byte {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		for _, h := range hdrs {
			body := []byte("x")
			if h.Typeflag != tar.TypeReg {
				body = nil
			}
			h.Size = int64(len(body))
			if err := tw.WriteHeader(&h); err != nil {
				f.Fatal(err)
			}
			tw.Write(body)
		}
		tw.Close()
		return b.Bytes()
	}
	gz := func(p []byte) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(p)
		zw.Close()
		return b.Bytes()
	}
	file := func(name string) tar.Header { return tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644} }
	link := func(name, to string, typ byte) tar.Header {
		return tar.Header{Name: name, Linkname: to, Typeflag: typ, Mode: 0o777}
	}
	return [][]byte{
		nil,
		[]byte("not an archive"),
		tarOf(file("manifests/a.yaml"), file("metadata/annotations.yaml")),
		gz(tarOf(file("manifests/a.yaml"))),
		tarOf(file("../escape")),
		tarOf(file("/abs")),
		tarOf(link("manifests/l", "../../etc/passwd", tar.TypeSymlink)),
		tarOf(link("l", "sub", tar.TypeSymlink), file("l/through")),
		tarOf(link("manifests/h", "/etc/passwd", tar.TypeLink)),
		tarOf(file("manifests/a.yaml"), file("manifests/.wh.a.yaml"), file("manifests/.wh..wh..opq")),
	}
}
