package archive

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"hash"
	"io"
	"path"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Kind is what a kept entry is.
type Kind int

const (
	Dir Kind = iota
	File
	Symlink
	whiteout // removes Name (Extractor only)
	opaque   // empties Name of what earlier archives wrote (Extractor only)
)

// Entry is one kept entry, after every check.
type Entry struct {
	// Name is the entry's name under the destination: clean, relative,
	// slash-separated; "" is the destination itself (a directory).
	Name string
	Kind Kind
	// Linkname is a Symlink's target, as written in the archive.
	Linkname string
	// Size is a File's size.
	Size int64
}

// Walk reads one archive from r to its end with the checks and limits of an
// Extractor, writing nothing, and calls fn with every kept entry in archive
// order (a later entry of a name replaces an earlier one). Whiteouts are not
// applied: Walk is for archives that have none.
func Walk(ctx context.Context, r io.Reader, opts Options, fn func(Entry) error) error {
	if err := opts.check(); err != nil {
		return err
	}
	opts.Whiteouts = false
	w := newWalker(opts)
	return w.walk(ctx, r, nil, func(e Entry, _ io.Reader) error { return fn(e) })
}

// Per-archive allowances for bytes that are not entry content.
const (
	overheadPerEntry = 8 << 10 // headers: a PAX record with long names or xattrs, padding
	overheadFixed    = 1 << 20 // the end-of-archive blocks, a record's padding, one large header
	maxTrailing      = 1 << 20 // after the end of the archive (GNU tar pads to its record size)
)

// walker checks entries against its options and counts them against the
// limits, across every archive it reads.
type walker struct {
	opts    Options
	bytes   int64 // declared sizes, all archives
	entries int   // entries, all archives
	files   int   // kept regular files, all archives
	// links are the symbolic links kept so far (LinksInside), by
	// destination name, to their target.
	links map[string]string
}

func newWalker(opts Options) *walker {
	return &walker{opts: opts, links: map[string]string{}}
}

// walk reads one archive to its end (the decompressed stream too, so gzip's
// checksum is verified and sum sees every byte) and calls fn with each kept
// entry; a File's body is the reader passed with it.
func (w *walker) walk(ctx context.Context, r io.Reader, sum hash.Hash, fn func(Entry, io.Reader) error) error {
	src, closeSrc, err := decompress(r, w.opts.Compression)
	if err != nil {
		return err
	}
	defer closeSrc()
	m := &meter{r: src, ctx: ctx, sum: sum, allow: overheadPerEntry + overheadFixed, phase: LimitOverhead}
	tr := tar.NewReader(m)
	var content int64 // declared sizes, this archive
	last := ""        // the previous entry, for messages
	for n := 1; ; n++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return readError(ctx, err, n == 1, last, w.opts.Compression)
		}
		last = hdr.Name
		if w.entries++; w.entries > w.opts.Limits.MaxEntries {
			return &LimitError{Limit: LimitEntries, Max: int64(w.opts.Limits.MaxEntries)}
		}
		e, keep, err := w.check(hdr)
		if err != nil {
			return err
		}
		size := bodySize(hdr)
		if size > w.opts.Limits.MaxBytes-w.bytes {
			return &LimitError{Limit: LimitBytes, Max: w.opts.Limits.MaxBytes}
		}
		w.bytes += size
		content += size
		m.base, m.allow = content, int64(n+1)*overheadPerEntry+overheadFixed
		if !keep {
			continue // tar.Reader skips the body, counted by m
		}
		if e.Kind == File {
			if w.files++; w.opts.Limits.MaxFiles > 0 && w.files > w.opts.Limits.MaxFiles {
				return &LimitError{Limit: LimitFiles, Max: int64(w.opts.Limits.MaxFiles)}
			}
		}
		if err := fn(e, tr); err != nil {
			return err
		}
	}
	// Read to the end of the decompressed stream: gzip checks its CRC there,
	// and a layer's diffID covers it.
	m.base, m.allow, m.phase = m.n, maxTrailing, LimitTrailing
	if _, err := io.Copy(io.Discard, m); err != nil {
		return readError(ctx, err, false, last, w.opts.Compression)
	}
	return nil
}

// bodySize is the number of bytes hdr's body takes in the stream: tar.Reader
// reads none for links, directories, devices and FIFOs whatever their
// header says.
func bodySize(hdr *tar.Header) int64 {
	switch hdr.Typeflag {
	case tar.TypeLink, tar.TypeSymlink, tar.TypeChar, tar.TypeBlock, tar.TypeDir, tar.TypeFifo:
		return 0
	}
	return hdr.Size
}

// check validates hdr and returns the entry it is under the destination, or
// keep false for an entry Select skips (or metadata).
func (w *walker) check(hdr *tar.Header) (e Entry, keep bool, err error) {
	if hdr.Typeflag == tar.TypeXGlobalHeader {
		return Entry{}, false, nil // archive metadata (git archive's commit id), not a file
	}
	refuse := func(r error, detail string) (Entry, bool, error) {
		return Entry{}, false, &EntryError{Name: hdr.Name, Reason: r, Detail: detail, root: w.opts.root()}
	}
	name, err := cleanName(hdr.Name)
	if err != nil {
		return refuse(err, "")
	}
	if w.opts.Whiteouts {
		if e, isWhiteout, err := w.whiteout(name); err != nil {
			return refuse(err, "")
		} else if isWhiteout {
			return e, e != Entry{}, nil
		}
	}
	rel, ok := w.opts.Select.dest(name)
	if !ok {
		return Entry{}, false, nil
	}
	if w.opts.Links == LinksInside {
		for p := path.Dir(rel); p != "." && p != ""; p = path.Dir(p) {
			if _, isLink := w.links[p]; isLink {
				return refuse(ErrBelowLink, fmt.Sprintf("%q", p))
			}
		}
		if _, isLink := w.links[rel]; isLink && hdr.Typeflag != tar.TypeSymlink {
			return refuse(ErrReplacesLink, "")
		}
	}
	e = Entry{Name: rel, Size: hdr.Size}
	link := func(r error) (Entry, bool, error) {
		return Entry{}, false, &EntryError{Name: hdr.Name, Link: hdr.Linkname, Reason: r, root: w.opts.root()}
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		e.Kind = Dir
		return e, rel != "", nil
	case tar.TypeReg, tar.TypeRegA: //nolint:staticcheck // TypeRegA is what old tar writers emit
		if rel == "" {
			return refuse(ErrNotDir, "")
		}
		e.Kind = File
		return e, true, nil
	case tar.TypeLink:
		return link(ErrHardLink)
	case tar.TypeSymlink:
		if w.opts.Links == NoLinks {
			return link(ErrLink)
		}
		if rel == "" {
			return refuse(ErrNotDir, "")
		}
		if err := checkLink(rel, hdr.Linkname); err != nil {
			return link(err)
		}
		w.links[rel] = hdr.Linkname
		e.Kind, e.Linkname = Symlink, hdr.Linkname
		return e, true, nil
	default:
		return refuse(ErrType, typeName(hdr.Typeflag))
	}
}

// whiteout recognises an OCI whiteout entry and returns what it removes
// under the destination: the zero Entry when that is nothing Select keeps.
func (w *walker) whiteout(name string) (e Entry, isWhiteout bool, err error) {
	dir, base := path.Split(name)
	dir = strings.TrimSuffix(dir, "/")
	rest, isWhiteout := strings.CutPrefix(base, ".wh.")
	if !isWhiteout {
		return Entry{}, false, nil
	}
	kind, target := whiteout, path.Join(dir, rest)
	switch {
	case rest == ".wh..opq":
		kind, target = opaque, dir
	case strings.HasPrefix(rest, ".wh."):
		return Entry{}, true, nil // other AUFS metadata: nothing to apply
	case rest == "" || rest == "." || rest == "..":
		return Entry{}, true, ErrTraversal
	}
	sel := w.opts.Select
	if sel.covers(target) {
		return Entry{Name: "", Kind: opaque}, true, nil // everything kept goes
	}
	rel, keep := sel.dest(target)
	if !keep {
		return Entry{}, true, nil
	}
	return Entry{Name: rel, Kind: kind}, true, nil
}

// cleanName normalises an entry name ("./manifests//x" → "manifests/x", the
// root "" ) and refuses what could leave the destination: absolute names
// and any `..` component (no honest archive writer emits one, so the whole
// archive is refused rather than the entry skipped).
func cleanName(raw string) (string, error) {
	switch {
	case strings.ContainsRune(raw, 0):
		return "", ErrNUL
	case len(raw) > maxName:
		return "", ErrNameTooLong
	case strings.HasPrefix(raw, "/") || strings.HasPrefix(raw, `\`):
		return "", ErrAbsolute
	}
	for _, part := range strings.Split(raw, "/") {
		if part == ".." {
			return "", ErrTraversal
		}
	}
	n := path.Clean(raw)
	if n == "." {
		return "", nil
	}
	return n, nil
}

// checkLink refuses a symbolic link whose target, resolved lexically from
// the link's directory, leaves the destination: the cheap first line, before
// anything is created. Extractor resolves every link for real once the
// archive is written (a ".." after another link is only seen then).
func checkLink(rel, target string) error {
	switch {
	case target == "":
		return ErrLinkEmpty
	case strings.ContainsRune(target, 0):
		return ErrNUL
	case len(target) > maxName:
		return ErrNameTooLong
	case strings.HasPrefix(target, "/"):
		return ErrLinkAbsolute
	}
	resolved := path.Join(path.Dir(rel), target)
	if resolved == ".." || strings.HasPrefix(resolved, "../") {
		return ErrLinkLeaves
	}
	return nil
}

func typeName(t byte) string {
	names := map[byte]string{
		tar.TypeChar: "character device", tar.TypeBlock: "block device", tar.TypeFifo: "FIFO",
		tar.TypeCont: "contiguous file", tar.TypeGNUSparse: "sparse file",
	}
	if n, ok := names[t]; ok {
		return fmt.Sprintf("%q (%s)", t, n)
	}
	return fmt.Sprintf("%q", t)
}

// readError explains why the stream could not be read; first is true when
// no entry was read yet.
func readError(ctx context.Context, err error, first bool, last string, c Compression) error {
	var le *LimitError
	switch {
	case errors.As(err, &le):
		return le
	case ctx.Err() != nil:
		return ctx.Err()
	case first && (errors.Is(err, tar.ErrHeader) || errors.Is(err, io.ErrUnexpectedEOF)):
		if c == Gzip {
			return fmt.Errorf("%w inside the gzip stream", ErrNotTar)
		}
		return fmt.Errorf("%w (gzip, zstd or uncompressed)", ErrNotTar)
	case first:
		return fmt.Errorf("reading the archive: %w", err)
	}
	return fmt.Errorf("reading the archive after entry %q: %w", last, err)
}

// meter counts the decompressed bytes the tar reader consumes and stops the
// stream once they pass base+allow: tar.Reader reads any number of
// consecutive extension headers inside one Next, so the bound must hold
// within a read.
type meter struct {
	r     io.Reader
	ctx   context.Context
	sum   hash.Hash // receives every byte read, when set
	n     int64
	base  int64 // bytes accounted for otherwise (entry content)
	allow int64 // bytes allowed beyond base
	phase Limit // what allow stands for
}

func (m *meter) Read(p []byte) (int, error) {
	if err := m.ctx.Err(); err != nil {
		return 0, err
	}
	max := m.base + m.allow
	if m.n > max {
		return 0, &LimitError{Limit: m.phase, Max: m.allow}
	}
	// Read at most one byte past max: enough to tell a stream that ends
	// exactly there from one that goes on.
	if left := max - m.n + 1; int64(len(p)) > left {
		p = p[:left]
	}
	n, err := m.r.Read(p)
	m.n += int64(n)
	if m.sum != nil {
		m.sum.Write(p[:n])
	}
	if m.n > max {
		return n, &LimitError{Limit: m.phase, Max: m.allow}
	}
	return n, err
}

// decompress returns the tar stream inside r.
func decompress(r io.Reader, c Compression) (io.Reader, func(), error) {
	br := bufio.NewReader(r)
	if c == Detect {
		magic, _ := br.Peek(4)
		switch {
		case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
			// Single-threaded (no goroutines to leak) and with a bounded
			// window, so a hostile frame cannot claim gigabytes of memory;
			// zstd's own levels stay within 8 MiB, --long within 128 MiB.
			zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(128<<20))
			if err != nil {
				return nil, nil, fmt.Errorf("%w (bad zstd stream: %v)", ErrNotTar, err)
			}
			return zr, zr.Close, nil
		case !bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
			return br, func() {}, nil // an uncompressed tar, or not a tar: the tar reader tells
		}
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		if c == Detect {
			return nil, nil, fmt.Errorf("%w (bad gzip stream: %v)", ErrNotTar, err)
		}
		return nil, nil, fmt.Errorf("%w: %v", ErrNotGzip, err)
	}
	return zr, func() { zr.Close() }, nil
}
