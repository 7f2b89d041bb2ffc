package safefile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStampSeesSameSizeSameTime: a replacement of the same size and
// modification time gets another stamp; an unreadable path gets "".
func TestStampSeesSameSizeSameTime(t *testing.T) {
	f := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(f, []byte("mode: warn"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(f)
	before := Stamp(f)
	if err := os.WriteFile(f, []byte("mode: off "), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(f, fi.ModTime(), fi.ModTime())
	if after := Stamp(f); after == before || after == "" {
		t.Errorf("stamp %q unchanged by a same-size same-mtime rewrite", after)
	}
	if s := Stamp(filepath.Dir(f)); s != "" {
		t.Errorf("a directory: %q", s)
	}
}

// BenchmarkStamp: the cost of a policy file's stamp, paid per request by
// serve's reloader for each file a policy read.
func BenchmarkStamp(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10} {
		f := filepath.Join(b.TempDir(), "p.yaml")
		os.WriteFile(f, []byte(strings.Repeat("x", size)), 0o644)
		// Just written: its change time is recent, so it is hashed.
		b.Run(fmt.Sprintf("recent-%dKiB", size>>10), func(b *testing.B) {
			for b.Loop() {
				Stamp(f)
			}
		})
	}
	// A file changed long ago (this package's source): stat alone.
	b.Run("settled", func(b *testing.B) {
		for b.Loop() {
			Stamp("safefile.go")
		}
	})
}
