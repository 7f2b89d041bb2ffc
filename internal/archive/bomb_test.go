package archive

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// repeated streams member n times without holding more than one copy: a
// gzip member repeated is one valid multi-member gzip stream, so a 1 KiB
// member decompressing to 1 MiB makes a 10 GiB bomb from 10 MiB of input.
type repeated struct {
	member []byte
	n      int
	off    int
}

func (r *repeated) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	c := copy(p, r.member[r.off:])
	if r.off += c; r.off == len(r.member) {
		r.off, r.n = 0, r.n-1
	}
	return c, nil
}

// TestGzipBombs: 10 GiB of zeros, in three shapes, is refused early with
// memory and disk bounded, under both policies' real default limits
// (256 MiB for bundle layers, 1 GiB for repositories).
func TestGzipBombs(t *testing.T) {
	if testing.Short() {
		t.Skip("decompresses up to 1 GiB")
	}
	const mib = 1 << 20
	zeros := gz(make([]byte, mib))
	entry := gz(append(headerOnly(t, "manifests/zeros", mib), make([]byte, mib)...))
	tenGiB := 10 << 10 // MiB
	for _, c := range []struct {
		name   string
		stream func() io.Reader
		limit  Limit
	}{
		// One entry declaring 10 GiB: refused at its header.
		{"one 10 GiB entry", func() io.Reader {
			return io.MultiReader(bytes.NewReader(gz(headerOnly(t, "manifests/zeros", int64(tenGiB)*mib))), &repeated{member: zeros, n: tenGiB})
		}, LimitBytes},
		// 1 MiB entries: refused at the header that passes the limit.
		{"10240 entries of 1 MiB", func() io.Reader { return &repeated{member: entry, n: tenGiB} }, LimitBytes},
		// No tar at all, only zeros: two zero blocks end the archive, the
		// rest is trailing data.
		{"zeros only", func() io.Reader { return &repeated{member: zeros, n: tenGiB} }, LimitTrailing},
	} {
		for _, p := range []struct {
			name string
			opts Options
		}{
			{"layer", Options{Compression: Detect, Whiteouts: true, Select: Select{Top: []string{"manifests", "metadata"}}, Limits: Limits{MaxBytes: 256 * mib, MaxEntries: 100000, MaxFiles: 10000}}},
			{"repo", Options{Compression: Gzip, Links: LinksInside, Limits: Limits{MaxBytes: 1 << 30, MaxEntries: 200000}}},
		} {
			t.Run(strings.ReplaceAll(c.name, " ", "_")+"/"+p.name, func(t *testing.T) {
				dst := t.TempDir()
				x, err := NewExtractor(dst, p.opts)
				if err != nil {
					t.Fatal(err)
				}
				defer x.Close()
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				start := time.Now()
				err = x.Extract(context.Background(), c.stream(), nil)
				elapsed := time.Since(start)
				runtime.ReadMemStats(&after)
				var le *LimitError
				if !errors.As(err, &le) || le.Limit != c.limit {
					t.Fatalf("got %v, want limit %d", err, c.limit)
				}
				disk := du(t, dst)
				t.Logf("refused in %v: %v; allocated %d KiB, heap peak ≤ %d KiB, process peak RSS %s, %d KiB on disk",
					elapsed.Round(100*time.Microsecond), err, (after.TotalAlloc-before.TotalAlloc)>>10, after.HeapSys>>10, peakRSS(), disk>>10)
				// Generous bounds: the point is "early", not a benchmark.
				if elapsed > 60*time.Second {
					t.Errorf("took %v", elapsed)
				}
				if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64*mib {
					t.Errorf("allocated %d bytes", alloc)
				}
				if disk > 2*mib {
					t.Errorf("wrote %d bytes", disk)
				}
			})
		}
	}
}

func du(t *testing.T, dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// peakRSS is the process's peak resident set (Linux), for the log.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
