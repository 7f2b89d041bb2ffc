package catalog

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// Catalog is a file-based catalog opened for choosing. Without an index
// path (a catalog directory from a repository, or an image read without a
// cache) every choice is one streaming pass over the catalog that keeps
// only the package asked for. With one (a catalog image cached by digest,
// bundle.CatalogIndexFile), the first choice writes a per-package index
// there in one streaming pass, and every later choice from the same digest
// reads only its package's slice of it.
//
// Catalog is an fs.FS (the catalog's files), so code handed one as an
// fs.FS (the safety check's upgrade graph, ReadGraph) uses its index too.
type Catalog struct {
	fs.FS
	index string
}

// Open returns the catalog in fsys, indexed at index when it is not empty.
// The index is a cache: a missing, stale-format, half-written or corrupted
// file is rebuilt, never trusted.
func Open(fsys fs.FS, index string) *Catalog {
	if c, ok := fsys.(*Catalog); ok {
		if index == "" {
			return c
		}
		fsys = c.FS
	}
	return &Catalog{FS: fsys, index: index}
}

// read returns the package name of the catalog, validated.
func (c *Catalog) read(ctx context.Context, name string) (*fbcPackage, error) {
	p := newPackage(name)
	add := func(o *object) error { p.add(o); return nil }
	var err error
	if c.index != "" {
		err = c.lookup(ctx, name, add)
	} else {
		err = readAll(ctx, c.FS, name, add)
	}
	if nf := (*notIndexed)(nil); errors.As(err, &nf) {
		return nil, fmt.Errorf("catalog: package %q not found%s", name, packageList(nf.names))
	}
	if err != nil {
		return nil, err
	}
	if !p.found && p.err == nil {
		return nil, fmt.Errorf("catalog: package %q not found%s", name, packageList(streamedNames(ctx, c.FS)))
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// notIndexed is readIndex's answer for a package the index does not hold,
// with the names it does.
type notIndexed struct{ names []string }

func (e *notIndexed) Error() string { return "package not in the index" }

// streamedNames are the packages a catalog read without an index names: a
// second pass, paid only by a package that is not there; nil when the
// catalog cannot be read.
func streamedNames(ctx context.Context, fsys fs.FS) []string {
	var names []string
	err := readAll(ctx, fsys, "", func(o *object) error {
		names = append(names, o.key())
		return nil
	})
	if err != nil {
		return nil
	}
	return names
}

// packageList names the catalog's packages for a package name that is not
// there (a typo, or the wrong catalog); "" when there are none.
func packageList(names []string) string {
	names = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "" })
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	names = slices.Compact(names)
	const shown = 20
	more := ""
	if len(names) > shown {
		names, more = names[:shown], fmt.Sprintf(" (and %d more)", len(names)-shown)
	}
	return "; the catalog's packages: " + echo.Text(strings.Join(names, ", ")) + more
}

// Index file layout (version 2): indexMagic, the package slices (each the
// package's objects as JSON lines, in catalog order), the table (JSON
// indexTable), the table's length (8 bytes, big-endian) and its SHA-256.
// The table holds each slice's SHA-256, checked on every read.
//
// The index keeps what the reader made of the catalog, errors included, so
// a change to what the reader keeps or refuses (read.go) must change the
// version: an index of the old reader would otherwise outlive an upgrade
// (2: the table names its catalog; YAML documents split at line starts
// only; flow-style YAML counted; 3: olm.package's defaultChannel kept).
const indexMagic = "olm-cmp catalog index 3\n"

const (
	trailerLen = 8 + sha256.Size
	// maxIndexObjects bounds the objects one catalog may index (a 50,000
	// bundle catalog has about 52,500); the pass keeps 16 bytes for each.
	maxIndexObjects = 1 << 21
	// maxIndexPackages bounds the packages of one catalog (vendor indexes
	// hold a few hundred): the pass keeps each one's spans and the table an
	// entry each, and a million one-object packages (a 42 MB catalog) made
	// the pass hold 890 MB and a table past maxTableBytes, so every choice
	// rebuilt it.
	maxIndexPackages = 1 << 15
	maxTableBytes    = 64 << 20
	// indexBuildTimeout bounds one shared index pass, which outlives the
	// request that started it, like an image pull.
	indexBuildTimeout = 10 * time.Minute
	// staleTemp is the age after which a temporary file of an index pass
	// is taken as left by a process that died and removed.
	staleTemp = time.Hour
)

type indexTable struct {
	// Catalog is the index file's own name (a cached catalog's digest),
	// so an intact index of another digest copied under this one's name
	// (a restored backup, a hand-made cache) is rebuilt, not trusted.
	Catalog string `json:"catalog"`
	// Err is the catalog's own error (a file that does not parse), kept so
	// later choices fail at once with the same message.
	Err string `json:"err,omitempty"`
	// Data is the size of the slices, between the magic and the table.
	Data     int64                 `json:"data"`
	Packages map[string]indexSlice `json:"packages"`
}

type indexSlice struct {
	Off int64  `json:"o"`
	Len int64  `json:"l"`
	Sum string `json:"s"`
}

// errBadIndex marks an index file that is not a complete, intact version 1
// index: it is rebuilt.
var errBadIndex = errors.New("catalog index invalid")

// builds shares one index pass among concurrent choices from a new digest.
var builds singleflight.Group

// indexPasses counts index passes (tests).
var indexPasses atomic.Int64

// lookup passes the objects of package name to fn from the index, building
// it first when it is missing or invalid.
func (c *Catalog) lookup(ctx context.Context, name string, fn func(*object) error) error {
	for attempt := 0; ; attempt++ {
		bad, err := readIndex(c.index, name, fn)
		if err == nil {
			return nil
		}
		var ie *indexIOError
		switch {
		case errors.Is(err, errBadIndex) || errors.Is(err, fs.ErrNotExist):
		case errors.As(err, &ie) || errors.As(err, new(*fs.PathError)):
			return readAll(ctx, c.FS, name, fn) // the cache failed us: read the catalog
		default:
			return err // the catalog's own error, kept in the index
		}
		if attempt > 0 {
			return readAll(ctx, c.FS, name, fn) // written and still unreadable
		}
		if err := c.build(ctx, bad); err != nil {
			if errors.As(err, &ie) {
				return readAll(ctx, c.FS, name, fn)
			}
			return err
		}
	}
}

// build writes the index, one pass shared by every caller waiting for it;
// bad is the invalid index file a caller found (nil when it was missing),
// so a caller that found a file another pass has since replaced does not
// build again. The pass runs detached from the caller that started it
// (bounded by indexBuildTimeout): one caller giving up fails no other, and
// each still returns when its own context ends.
func (c *Catalog) build(ctx context.Context, bad os.FileInfo) error {
	ch := builds.DoChan(c.index, func() (any, error) {
		if fi, err := os.Lstat(c.index); err == nil && (bad == nil || !os.SameFile(fi, bad)) {
			return nil, nil // written while we waited
		}
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), indexBuildTimeout)
		defer cancel()
		return nil, writeIndex(bctx, c.FS, c.index)
	})
	select {
	case r := <-ch:
		return r.Err
	case <-ctx.Done():
		return ctx.Err()
	}
}

type span struct{ off, len int64 }

// writeIndex streams the catalog in fsys once, spooling each package's
// objects to a temporary file (memory holds 16 bytes an object), then
// writes the slices grouped by package into a temporary file renamed to
// path once complete.
func writeIndex(ctx context.Context, fsys fs.FS, path string) error {
	indexPasses.Add(1)
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ioError(err)
	}
	removeStaleTemps(dir)
	spool, err := os.CreateTemp(dir, ".tmp-index-spool-")
	if err != nil {
		return ioError(err)
	}
	defer func() { spool.Close(); os.Remove(spool.Name()) }()
	w := bufio.NewWriterSize(spool, 256<<10)
	spans := map[string][]span{}
	var off int64
	var objects int
	readErr := readAll(ctx, fsys, "", func(o *object) error {
		k := o.key()
		if k == "" {
			return nil
		}
		if objects++; objects > maxIndexObjects {
			return fmt.Errorf("catalog: over %d objects: not a catalog olm-cmp reads", maxIndexObjects)
		}
		if _, ok := spans[k]; !ok && len(spans) >= maxIndexPackages {
			return fmt.Errorf("catalog: over %d packages: not a catalog olm-cmp reads", maxIndexPackages)
		}
		line, err := json.Marshal(o)
		if err != nil {
			return err
		}
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			return ioError(err)
		}
		spans[k] = append(spans[k], span{off, int64(len(line))})
		off += int64(len(line))
		return nil
	})
	t := indexTable{Catalog: filepath.Base(path), Packages: map[string]indexSlice{}}
	if readErr != nil {
		if !persistent(readErr) {
			return readErr
		}
		t.Err, spans = readErr.Error(), nil
	}
	if err := w.Flush(); err != nil {
		return ioError(err)
	}

	out, err := os.CreateTemp(dir, ".tmp-index-")
	if err != nil {
		return ioError(err)
	}
	defer func() { out.Close(); os.Remove(out.Name()) }()
	bw := bufio.NewWriterSize(out, 256<<10)
	bw.WriteString(indexMagic)
	var pos int64
	var buf []byte
	for _, name := range slices.Sorted(maps.Keys(spans)) {
		if err := ctx.Err(); err != nil {
			return err
		}
		h := sha256.New()
		start := pos
		for _, s := range spans[name] {
			buf = slices.Grow(buf[:0], int(s.len))[:s.len]
			if _, err := spool.ReadAt(buf, s.off); err != nil {
				return ioError(err)
			}
			h.Write(buf)
			bw.Write(buf)
			pos += s.len
		}
		t.Packages[name] = indexSlice{Off: start, Len: pos - start, Sum: hex.EncodeToString(h.Sum(nil))}
	}
	t.Data = pos
	table, err := json.Marshal(t)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(table)
	bw.Write(table)
	binary.Write(bw, binary.BigEndian, uint64(len(table)))
	bw.Write(sum[:])
	if err := bw.Flush(); err != nil {
		return ioError(err)
	}
	if err := out.Close(); err != nil {
		return ioError(err)
	}
	if err := os.Rename(out.Name(), path); err != nil {
		return ioError(err)
	}
	return nil
}

// indexIOError is the cache's failure (a full or read-only volume), not the
// catalog's: the choice then reads the catalog itself.
type indexIOError struct{ err error }

func (e *indexIOError) Error() string { return "catalog index: " + e.err.Error() }
func (e *indexIOError) Unwrap() error { return e.err }

func ioError(err error) error { return &indexIOError{err} }

// persistent reports whether err is the catalog's own (its content), which
// the index keeps, rather than the machine's (a cancelled pass, a read
// error), which the next choice retries.
func persistent(err error) bool {
	var pe *fs.PathError
	var ie *indexIOError
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) &&
		!errors.As(err, &pe) && !errors.As(err, &ie)
}

// removeStaleTemps removes the temporary files of index passes that died
// with their process (OOM-killed, evicted) long ago.
func removeStaleTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".tmp-index-") {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleTemp {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// readIndex passes the objects of package name from the index at path to
// fn (none when the catalog has no such package). An index that is not
// whole and intact is errBadIndex, with its FileInfo, found before fn is
// called. The package's slice is read streaming and decoded only up to the
// package's bounds (items, kept bytes), past which the package fails
// anyway: memory follows those bounds, not the slice (a package of a
// million bundles once took 1.2 GB here).
func readIndex(path, name string, fn func(*object) error) (bad os.FileInfo, err error) {
	// Only a regular file is opened: opening a FIFO blocks until a writer
	// comes, and a symbolic link leads elsewhere. Either is replaced by
	// the rebuilt index (the rename replaces the link, not its target).
	lfi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !lfi.Mode().IsRegular() {
		return lfi, fmt.Errorf("%w: not a regular file", errBadIndex)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	invalid := func(why string) (os.FileInfo, error) {
		return fi, fmt.Errorf("%w: %s", errBadIndex, why)
	}
	if !os.SameFile(fi, lfi) {
		return invalid("replaced while opened")
	}
	size := fi.Size()
	if size < int64(len(indexMagic))+trailerLen {
		return invalid("too short")
	}
	head := make([]byte, len(indexMagic))
	if _, err := f.ReadAt(head, 0); err != nil || string(head) != indexMagic {
		return invalid("not a version 2 index")
	}
	var trailer [trailerLen]byte
	if _, err := f.ReadAt(trailer[:], size-trailerLen); err != nil {
		return invalid("no trailer")
	}
	tlen := binary.BigEndian.Uint64(trailer[:8])
	if tlen > maxTableBytes || int64(tlen) > size-trailerLen-int64(len(indexMagic)) {
		return invalid("table length out of range")
	}
	tstart := size - trailerLen - int64(tlen)
	table := make([]byte, tlen)
	if _, err := f.ReadAt(table, tstart); err != nil {
		return invalid("table unreadable")
	}
	if sum := sha256.Sum256(table); !bytes.Equal(sum[:], trailer[8:]) {
		return invalid("table checksum mismatch")
	}
	var t indexTable
	if err := json.Unmarshal(table, &t); err != nil {
		return invalid("table does not decode")
	}
	if t.Data != tstart-int64(len(indexMagic)) {
		return invalid("data size mismatch")
	}
	if t.Catalog != filepath.Base(path) {
		return invalid("another catalog's index")
	}
	if t.Err != "" {
		return nil, errors.New(t.Err)
	}
	s, ok := t.Packages[name]
	if !ok {
		return nil, &notIndexed{names: slices.Collect(maps.Keys(t.Packages))}
	}
	if s.Off < 0 || s.Len < 0 || s.Off+s.Len > t.Data {
		return invalid("slice out of range")
	}
	// One pass over the slice: hashed whole, decoded until the package is
	// past a bound its check refuses (so nothing it would keep is lost),
	// and handed to fn only once the checksum holds. One pass, because a
	// file written in place between two would pass the check and then
	// decode something else.
	h := sha256.New()
	br := bufio.NewReaderSize(io.NewSectionReader(f, int64(len(indexMagic))+s.Off, s.Len), 64<<10)
	var objs []object
	kept, past := 0, false
	for {
		line, err := br.ReadBytes('\n')
		h.Write(line)
		if len(line) > 0 && !past {
			var o object
			if err := json.Unmarshal(line, &o); err != nil {
				return invalid("object does not decode")
			}
			objs = append(objs, o)
			kept += o.size()
			past = len(objs) > maxPackageItems || kept > maxPackageBytes
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return invalid("slice unreadable")
		}
	}
	if hex.EncodeToString(h.Sum(nil)) != s.Sum {
		return invalid("slice checksum mismatch")
	}
	for i := range objs {
		if err := fn(&objs[i]); err != nil {
			return nil, err
		}
	}
	return nil, nil
}
