package cmpserver

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/archive"
)

// TestEarlyRefusalIsTheCause: a tarball refused by its first entry reports
// that refusal, never "checksum mismatch", although the stream stops being
// read at the refusal and many chunks are still to come. The first chunk
// holds the refused entry, every later chunk is 16 bytes, so the receiver
// always has more to send when the extractor stops.
func TestEarlyRefusalIsTheCause(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	filler := func() ([]tar.Header, map[string]string) {
		var hs []tar.Header
		contents := map[string]string{}
		for i := range 50 {
			n := fmt.Sprintf("f%d", i)
			b := make([]byte, 1024)
			for j := range b {
				b[j] = byte(rnd.Uint32()) // incompressible: a long stream
			}
			hs = append(hs, tar.Header{Name: n, Typeflag: tar.TypeReg})
			contents[n] = string(b)
		}
		return hs, contents
	}
	for _, c := range []struct {
		name  string
		first tar.Header
		want  error
	}{
		{"dot-dot entry", tar.Header{Name: "../escaped.yaml", Typeflag: tar.TypeReg}, archive.ErrTraversal},
		{"escaping link", tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "../../etc"}, archive.ErrLinkLeaves},
		{"size bomb", tar.Header{Name: "big", Typeflag: tar.TypeReg, Size: 10 << 30}, archive.ErrRefused},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			hs, contents := filler()
			var tgz []byte
			if c.first.Size > 0 {
				tgz = bombTgz(t, c.first, hs, contents)
			} else {
				tgz = tgzEntries(t, append([]tar.Header{c.first}, hs...), contents)
			}
			msgs := []any{sum(tgz), tgz[:1024]}
			for b := tgz[1024:]; len(b) > 0; b = b[min(16, len(b)):] {
				msgs = append(msgs, b[:min(16, len(b))])
			}
			if len(msgs) < 1000 {
				t.Fatalf("only %d chunks: the test needs many after the refusal", len(msgs))
			}
			for _, scan := range []bool{false, true} {
				var err error
				if scan {
					_, _, err = scanRepo(context.Background(), &fakeStream{msgs: msgs}, Limits{}, nil)
				} else {
					_, err = receiveRepo(context.Background(), &fakeStream{msgs: msgs}, t.TempDir(), Limits{}, nil)
				}
				if !errors.Is(err, c.want) || strings.Contains(err.Error(), "checksum") {
					t.Errorf("scan=%v: got %v, want %v", scan, err, c.want)
				}
			}
		})
	}
}

// bombTgz is a tar.gz whose first header declares first.Size bytes that never
// follow: the filler entries come instead.
func bombTgz(t *testing.T, first tar.Header, hs []tar.Header, contents map[string]string) []byte {
	t.Helper()
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	first.Mode = 0o644
	if err := tw.WriteHeader(&first); err != nil {
		t.Fatal(err)
	}
	// tw is left unclosed: it would want the declared body.
	tw = tar.NewWriter(&raw)
	for _, h := range hs {
		h.Size, h.Mode = int64(len(contents[h.Name])), 0o644
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(contents[h.Name]))
	}
	tw.Close()
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(raw.Bytes())
	zw.Close()
	return out.Bytes()
}
