package archive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// ent is one tar entry of a test archive.
type ent struct {
	h    tar.Header
	body string
}

func reg(name, body string) ent { return ent{tar.Header{Name: name, Typeflag: tar.TypeReg}, body} }
func dir(name string) ent       { return ent{h: tar.Header{Name: name, Typeflag: tar.TypeDir}} }
func sym(name, to string) ent {
	return ent{h: tar.Header{Name: name, Typeflag: tar.TypeSymlink, Linkname: to}}
}
func hard(name, to string) ent {
	return ent{h: tar.Header{Name: name, Typeflag: tar.TypeLink, Linkname: to}}
}
func typed(name string, t byte) ent { return ent{h: tar.Header{Name: name, Typeflag: t}} }

// tarOf writes entries as an uncompressed tar; a header's Size is the
// body's unless set.
func tarOf(t testing.TB, ents ...ent) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range ents {
		h := e.h
		if h.Size == 0 && h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if h.Mode == 0 && h.Typeflag != tar.TypeXGlobalHeader {
			h.Mode = 0o644
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// headerOnly is a tar header declaring size bytes, without them.
func headerOnly(t testing.TB, name string, size int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Size: size, Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes() // tw is left unclosed: it would want the body
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func zst(t testing.TB, b []byte) []byte {
	t.Helper()
	zw, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer zw.Close()
	return zw.EncodeAll(b, nil)
}

// The two policies olm-cmp uses, with small limits.
var (
	layerOpts = Options{
		Compression: Detect, Links: NoLinks, Whiteouts: true,
		Select: Select{Top: []string{"manifests", "metadata"}},
		Limits: Limits{MaxBytes: 4096, MaxEntries: 20, MaxFiles: 5},
	}
	repoOpts = Options{
		Compression: Gzip, Links: LinksInside, Root: "the repository",
		Limits: Limits{MaxBytes: 4096, MaxEntries: 20},
	}
)

type policy int

const (
	layer policy = 1 << iota
	repo
	both = layer | repo
)

// tree lists dir: "name" → file content, "name/" → "" for a directory,
// "name" → "-> target" for a symbolic link, with each file's mode bits.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		fi, _ := d.Info()
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			to, _ := os.Readlink(p)
			out[rel] = "-> " + to
		case d.IsDir():
			out[rel+"/"] = ""
		default:
			b, _ := os.ReadFile(p)
			out[rel] = string(b)
			if fi.Mode().Perm() != 0o644 {
				out[rel] += " mode " + fi.Mode().String()
			}
		}
		return nil
	})
	return out
}

// TestProtections is the one table of every protection, for both policies:
// image layers (several archives into one destination, whiteouts, no links)
// and repository tarballs (links inside only). A case runs its archives
// through an Extractor and, for repositories, Walk; a refusal must be the
// same from both (except what only real resolution sees), and nothing may
// be written outside the destination.
func TestProtections(t *testing.T) {
	big := strings.Repeat("x", 3000)
	manyPAX := func() []byte {
		// Thousands of PAX headers before one entry: tar.Reader reads them
		// all inside one Next.
		var b bytes.Buffer
		rec := strings.Repeat("x", 400)
		hdr := tarOf(t, ent{h: tar.Header{Name: "manifests/a", Typeflag: tar.TypeReg, PAXRecords: map[string]string{"comment": rec}}})
		pax := hdr[:1024] // one PAX header block and its record block
		for range 3000 {
			b.Write(pax)
		}
		b.Write(hdr)
		return b.Bytes()
	}()
	for _, c := range []struct {
		name     string
		policies policy
		archives [][]ent // one archive per element (image layers in order)
		raw      []byte  // the stream, instead of archives (as is: not compressed)
		opts     func(*Options)
		want     error             // a sentinel (errors.Is), or nil for success
		tree     map[string]string // on success
		walkOK   bool              // Walk accepts it (real resolution only)
	}{
		// Entry names: refused for the whole archive, kept or not.
		{name: "absolute name", policies: both, archives: [][]ent{{reg("/manifests/x", "x")}}, want: ErrAbsolute},
		{name: "absolute name outside the selection", policies: layer, archives: [][]ent{{reg("/etc/x", "x")}}, want: ErrAbsolute},
		{name: "backslash absolute", policies: both, archives: [][]ent{{reg(`\manifests\x`, "x")}}, want: ErrAbsolute},
		{name: "dot-dot", policies: both, archives: [][]ent{{reg("../x", "x")}}, want: ErrTraversal},
		{name: "dot-dot that cleans inside", policies: both, archives: [][]ent{{reg("manifests/../manifests/x", "x")}}, want: ErrTraversal},
		{name: "name too long", policies: both, archives: [][]ent{{reg("manifests/"+strings.Repeat("a", 5000), "x")}}, want: ErrNameTooLong},
		{name: "uncleaned names are cleaned", policies: both, archives: [][]ent{{reg("./manifests//a.yaml", "a")}}, tree: map[string]string{"manifests/": "", "manifests/a.yaml": "a"}},

		// Links.
		{name: "symlink in a layer", policies: layer, archives: [][]ent{{sym("manifests/p.yaml", "x")}}, want: ErrLink},
		{name: "symlinked kept directory", policies: layer, archives: [][]ent{{sym("metadata", "/etc")}}, want: ErrLink},
		{name: "symlink outside the selection is skipped", policies: layer, archives: [][]ent{{sym("bin", "usr/bin"), reg("manifests/a", "a")}}, tree: map[string]string{"manifests/": "", "manifests/a": "a"}},
		{name: "hard link", policies: both, archives: [][]ent{{hard("manifests/h", "/etc/passwd")}}, want: ErrHardLink},
		{name: "symlink inside", policies: repo, archives: [][]ent{{reg("a/f", "f"), sym("b/l", "../a/f")}}, tree: map[string]string{"a/": "", "a/f": "f", "b/": "", "b/l": "-> ../a/f"}},
		{name: "later symlink wins", policies: repo, archives: [][]ent{{reg("f", "f"), reg("g", "g"), sym("l", "f"), sym("l", "g")}}, tree: map[string]string{"f": "f", "g": "g", "l": "-> g"}},
		{name: "dangling symlink removed", policies: repo, archives: [][]ent{{sym("l", "missing")}}, tree: map[string]string{}},
		{name: "empty link target", policies: repo, archives: [][]ent{{sym("l", "")}}, want: ErrLinkEmpty},
		{name: "absolute link target", policies: repo, archives: [][]ent{{sym("l", "/etc/passwd")}}, want: ErrLinkAbsolute},
		{name: "link leaving lexically", policies: repo, archives: [][]ent{{sym("a/l", "../../etc/passwd")}}, want: ErrLinkLeaves},
		{name: "link chain leaving for real", policies: repo, archives: [][]ent{{dir("a/b/c/"), sym("a/b/c/l1", "../.."), sym("a/b/c/l2", "l1/../../..")}}, want: ErrLinkOutside, walkOK: true},
		{name: "link loop", policies: repo, archives: [][]ent{{sym("a", "b"), sym("b", "a")}}, want: ErrLinkLoop, walkOK: true},
		{name: "entry below a symlink", policies: repo, archives: [][]ent{{sym("l", "."), reg("l/x", "x")}}, want: ErrBelowLink},
		{name: "file replacing a symlink", policies: repo, archives: [][]ent{{reg("f", "f"), sym("l", "f"), reg("l", "x")}}, want: ErrReplacesLink},
		{name: "directory replacing a symlink", policies: repo, archives: [][]ent{{dir("d/"), sym("l", "d"), dir("l/")}}, want: ErrReplacesLink},

		// Other types.
		{name: "character device", policies: both, archives: [][]ent{{typed("manifests/c", tar.TypeChar)}}, want: ErrType},
		{name: "block device", policies: both, archives: [][]ent{{typed("manifests/b", tar.TypeBlock)}}, want: ErrType},
		{name: "FIFO", policies: both, archives: [][]ent{{typed("manifests/f", tar.TypeFifo)}}, want: ErrType},
		{name: "device outside the selection is skipped", policies: layer, archives: [][]ent{{typed("dev/null", tar.TypeChar), reg("metadata/a", "a")}}, tree: map[string]string{"metadata/": "", "metadata/a": "a"}},
		{name: "file where the selection needs a directory", policies: layer, opts: func(o *Options) { o.Select = Select{Dir: "configs"} }, archives: [][]ent{{reg("configs", "x")}}, want: ErrNotDir},
		{name: "modes are not taken from the archive", policies: both, archives: [][]ent{{ent{tar.Header{Name: "manifests/s", Typeflag: tar.TypeReg, Mode: 0o4777}, "s"}}}, tree: map[string]string{"manifests/": "", "manifests/s": "s"}},
		{name: "a global header is metadata", policies: both, archives: [][]ent{{ent{h: tar.Header{Typeflag: tar.TypeXGlobalHeader, PAXRecords: map[string]string{"comment": "abc"}}}, reg("manifests/a", "a")}}, tree: map[string]string{"manifests/": "", "manifests/a": "a"}},

		// Limits, counted across the archives of one Extractor.
		{name: "declared size over the byte limit", policies: both, raw: gz(headerOnly(t, "manifests/big", 10<<30)), want: &LimitError{Limit: LimitBytes}},
		{name: "bytes across entries", policies: both, archives: [][]ent{{reg("manifests/a", big), reg("manifests/b", big)}}, want: &LimitError{Limit: LimitBytes}},
		{name: "bytes across layers, skipped content too", policies: layer, archives: [][]ent{{reg("usr/junk", big)}, {reg("usr/junk", big)}}, want: &LimitError{Limit: LimitBytes}},
		{name: "entries", policies: both, archives: [][]ent{func() (es []ent) {
			for i := range 21 {
				es = append(es, dir("manifests/"+strings.Repeat("d", i+1)+"/"))
			}
			return es
		}()}, want: &LimitError{Limit: LimitEntries}},
		{name: "files", policies: layer, archives: [][]ent{{reg("manifests/1", ""), reg("manifests/2", ""), reg("manifests/3", "")}, {reg("manifests/4", ""), reg("manifests/5", ""), reg("manifests/6", "")}}, want: &LimitError{Limit: LimitFiles}},
		{name: "headers beyond their allowance", policies: layer, raw: manyPAX, want: &LimitError{Limit: LimitOverhead}},
		{name: "data after the end of the archive", policies: both, raw: gz(append(tarOf(t, reg("manifests/a", "a")), make([]byte, 2<<20)...)), want: &LimitError{Limit: LimitTrailing}},
		{name: "zeros only", policies: both, raw: gz(make([]byte, 4<<20)), want: &LimitError{Limit: LimitTrailing}},

		// Streams that are not what they claim.
		{name: "not gzip", policies: repo, raw: []byte("this is not a tarball"), want: ErrNotGzip},
		{name: "not a tar", policies: layer, raw: []byte("this is not a tarball"), want: ErrNotTar},
		{name: "gzip of something else", policies: both, raw: gz([]byte(strings.Repeat("not a tar ", 100))), want: ErrNotTar},
		{name: "truncated gzip", policies: both, raw: func() []byte { b := gz(tarOf(t, reg("manifests/a", big))); return b[:len(b)-12] }(), want: io.ErrUnexpectedEOF},
		{name: "corrupted gzip checksum", policies: both, raw: func() []byte { b := gz(tarOf(t, reg("manifests/a", "a"))); b[len(b)-6] ^= 0xff; return b }(), want: gzip.ErrChecksum},
		{name: "uncompressed layer", policies: layer, raw: tarOf(t, reg("manifests/a", "a")), tree: map[string]string{"manifests/": "", "manifests/a": "a"}},
		{name: "zstd layer", policies: layer, raw: zst(t, tarOf(t, reg("manifests/a", "a"))), tree: map[string]string{"manifests/": "", "manifests/a": "a"}},
		{name: "empty layer", policies: layer, raw: []byte{}, tree: map[string]string{}},

		// Whiteouts: applied to earlier layers only.
		{name: "whiteout", policies: layer, archives: [][]ent{{reg("manifests/a", "a"), reg("manifests/b", "b")}, {reg("manifests/.wh.a", "")}},
			tree: map[string]string{"manifests/": "", "manifests/b": "b"}},
		{name: "opaque whiteout keeps the same layer's files", policies: layer, archives: [][]ent{
			{reg("manifests/a", "a"), reg("manifests/sub/b", "b"), reg("metadata/m", "m")},
			{reg("manifests/sub/new", "new"), reg("manifests/.wh..wh..opq", ""), reg("manifests/c", "c")},
		}, tree: map[string]string{"manifests/": "", "manifests/sub/": "", "manifests/sub/new": "new", "manifests/c": "c", "metadata/": "", "metadata/m": "m"}},
		{name: "whiteout of a selected directory's parent", policies: layer, opts: func(o *Options) { o.Select = Select{Dir: "x/configs"} },
			archives: [][]ent{{reg("x/configs/a", "a")}, {reg("x/configs/b", "b"), reg(".wh.x", "")}}, tree: map[string]string{"b": "b"}},
		{name: "later layer replaces a directory with a file", policies: layer, archives: [][]ent{{reg("manifests/d/a", "a")}, {reg("manifests/d", "file")}},
			tree: map[string]string{"manifests/": "", "manifests/d": "file"}},
		{name: "whiteout naming the parent", policies: layer, archives: [][]ent{{reg("manifests/.wh..", "")}}, want: ErrTraversal},
		{name: "whiteouts are files in a repository", policies: repo, archives: [][]ent{{reg(".wh.a", "w")}}, tree: map[string]string{".wh.a": "w"}},
	} {
		for _, p := range []policy{layer, repo} {
			if c.policies&p == 0 {
				continue
			}
			opts := layerOpts
			if p == repo {
				opts = repoOpts
			}
			if c.opts != nil {
				c.opts(&opts)
			}
			t.Run(strings.ReplaceAll(c.name, " ", "_")+map[policy]string{layer: "/layer", repo: "/repo"}[p], func(t *testing.T) {
				streams := [][]byte{c.raw}
				if c.raw == nil {
					streams = nil
					for _, a := range c.archives {
						streams = append(streams, gz(tarOf(t, a...)))
					}
				}
				outside := t.TempDir()
				dst := filepath.Join(outside, "dst")
				os.Mkdir(dst, 0o755)
				x, err := NewExtractor(dst, opts)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range streams {
					if err = x.Extract(context.Background(), bytes.NewReader(s), nil); err != nil {
						break
					}
				}
				x.Close()
				checkErr(t, "Extract", err, c.want)
				if c.want == nil {
					if got := tree(t, dst); !equalMaps(got, c.tree) {
						t.Errorf("extracted %v\nwant %v", got, c.tree)
					}
				}
				if left, _ := os.ReadDir(outside); len(left) != 1 {
					t.Errorf("written beside the destination: %v", left)
				}
				if p == repo && len(streams) == 1 {
					err := Walk(context.Background(), bytes.NewReader(streams[0]), opts, func(Entry) error { return nil })
					want := c.want
					if c.walkOK {
						want = nil
					}
					checkErr(t, "Walk", err, want)
				}
			})
		}
	}
}

func checkErr(t *testing.T, what string, err, want error) {
	t.Helper()
	var wantLimit *LimitError
	switch {
	case want == nil:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case errors.As(want, &wantLimit):
		var le *LimitError
		if !errors.As(err, &le) || le.Limit != wantLimit.Limit || !errors.Is(err, ErrRefused) {
			t.Fatalf("%s: got %v, want limit %d", what, err, wantLimit.Limit)
		}
	case !errors.Is(err, want):
		t.Fatalf("%s: got %v, want %v", what, err, want)
	}
	if err != nil {
		if _, isReason := want.(*reason); isReason && !errors.Is(err, ErrRefused) {
			t.Errorf("%s: %v is not a refusal", what, err)
		}
		if !isRefusal(want) && errors.Is(err, ErrRefused) {
			t.Errorf("%s: %v is a refusal, but the stream was unreadable", what, err)
		}
	}
}

func isRefusal(err error) bool {
	var le *LimitError
	_, isReason := err.(*reason)
	return isReason || errors.As(err, &le)
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestMessages: a refusal names the entry, the link and the fix's context.
func TestMessages(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&EntryError{Name: "../x", Reason: ErrTraversal}, "entry \"../x\": path traversal (`..` in the name)"},
		{&EntryError{Name: "a/l", Link: "../../etc", Reason: ErrLinkLeaves, root: "the repository"}, `entry "a/l" is a link (to "../../etc"): the link leaves the repository`},
		{&EntryError{Name: "l/x", Reason: ErrBelowLink, Detail: `"l"`}, `entry "l/x": it is below the symbolic link "l"`},
		{&LimitError{Limit: LimitBytes, Max: 100}, "the archive expands to more than 100 bytes"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("got %q\nwant %q", got, c.want)
		}
	}
}

// TestDigestSeesEveryByte: the hash passed to Extract covers the whole
// decompressed stream, trailing padding included (an OCI diffID).
func TestDigestSeesEveryByte(t *testing.T) {
	raw := append(tarOf(t, reg("manifests/a", "a")), make([]byte, 8192)...)
	for _, stream := range [][]byte{raw, gz(raw), zst(t, raw)} {
		h := sha256.New()
		x, err := NewExtractor(t.TempDir(), layerOpts)
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Extract(context.Background(), bytes.NewReader(stream), h); err != nil {
			t.Fatal(err)
		}
		x.Close()
		want := sha256.Sum256(raw)
		if got := hex.EncodeToString(h.Sum(nil)); got != hex.EncodeToString(want[:]) {
			t.Errorf("digest %s, want %x", got, want)
		}
	}
}

// TestCancel: a cancelled context stops the walk.
func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Walk(ctx, bytes.NewReader(gz(tarOf(t, reg("a", "a")))), repoOpts, func(Entry) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v", err)
	}
}

// TestCleanName: names no Go tar reader can produce (NUL is refused by
// archive/tar itself) are still refused here, as defence in depth.
func TestCleanName(t *testing.T) {
	for raw, want := range map[string]error{
		"a\x00b": ErrNUL, "/a": ErrAbsolute, `\a`: ErrAbsolute, "a/../b": ErrTraversal, "..": ErrTraversal,
		strings.Repeat("a", maxName+1): ErrNameTooLong,
	} {
		if _, err := cleanName(raw); !errors.Is(err, want) {
			t.Errorf("%q: got %v, want %v", raw, err, want)
		}
	}
	for raw, want := range map[string]string{"./a//b/": "a/b", ".": "", "./": "", "a/./b": "a/b"} {
		if got, err := cleanName(raw); err != nil || got != want {
			t.Errorf("%q: got %q %v, want %q", raw, got, err, want)
		}
	}
	if err := checkLink("a/l", "x\x00"); !errors.Is(err, ErrNUL) {
		t.Errorf("NUL in a link target: %v", err)
	}
}
