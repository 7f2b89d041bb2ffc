package cmpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"path/filepath"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/archive"
	"github.com/olm-cmp/olm-cmp/internal/cmpserver/pluginpb"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/engine"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// Limits bound what one request may make the server receive and write. The
// repository comes from Git and is trusted no further than that.
type Limits struct {
	// MaxCompressed caps the tar.gz as streamed (default 512 MiB).
	MaxCompressed int64
	// MaxExtracted caps the sum of extracted file sizes (default 1 GiB).
	MaxExtracted int64
	// MaxEntries caps the number of tar entries (default 200000).
	MaxEntries int
}

func (l Limits) withDefaults() Limits {
	if l.MaxCompressed <= 0 {
		l.MaxCompressed = 512 << 20
	}
	if l.MaxExtracted <= 0 {
		l.MaxExtracted = 1 << 30
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = 200000
	}
	return l
}

// streamReceiver is the receiving half of the three client-streaming RPCs.
type streamReceiver interface {
	Recv() (*pluginpb.AppStreamRequest, error)
}

// receiveRepo reads the whole stream: the metadata message, then the tar.gz
// chunks, which are hashed and extracted into dir in one pass (no temporary
// tarball on disk). The checksum is compared once the stream ends; on any
// error the caller removes dir, so nothing extracted from an unverified
// stream is ever used.
func receiveRepo(ctx context.Context, stream streamReceiver, dir string, lim Limits, m *engine.Metrics) (*pluginpb.ManifestRequestMetadata, error) {
	lim = lim.withDefaults()
	return receiveStream(ctx, stream, lim, m, func(r io.Reader) error { return extractTgz(ctx, r, dir, lim) })
}

// scanRepo reads the whole stream as receiveRepo does, hashing and checking
// every entry and limit the same way, but writes nothing: it returns the
// index MatchRepository answers from. The index is only valid without error.
func scanRepo(ctx context.Context, stream streamReceiver, lim Limits, m *engine.Metrics) (*pluginpb.ManifestRequestMetadata, *tarIndex, error) {
	lim = lim.withDefaults()
	idx := newTarIndex()
	meta, err := receiveStream(ctx, stream, lim, m, func(r io.Reader) error { return scanTgz(ctx, r, idx, lim) })
	if err != nil {
		return nil, nil, err
	}
	return meta, idx, nil
}

// receiveStream reads the metadata message, then feeds the tar.gz chunks to
// consume while hashing them, and compares the checksum once the stream ends.
func receiveStream(ctx context.Context, stream streamReceiver, lim Limits, m *engine.Metrics, consume func(io.Reader) error) (*pluginpb.ManifestRequestMetadata, error) {
	first, err := stream.Recv()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("the request stream ended before its metadata message: the repo-server sent no repository (retry the refresh; if it persists, check the repo-server's log)")
	}
	if err != nil {
		return nil, fmt.Errorf("receiving the stream header: %w", err)
	}
	meta := first.GetMetadata()
	if meta == nil {
		return nil, errors.New("protocol error: the first stream message must be the metadata")
	}
	if meta.GetSize() > lim.MaxCompressed {
		return nil, fmt.Errorf("the repository tarball is %d bytes, over the %d-byte limit: exclude files with the repo-server's --plugin-tar-exclude or raise --max-tarball-bytes", meta.GetSize(), lim.MaxCompressed)
	}

	pr, pw := io.Pipe()
	extracted := make(chan error, 1)
	go func() {
		err := consume(pr)
		// Unblock the writer whatever happened: on success drain what is
		// left (tar padding, gzip trailer), on failure fail its next Write.
		if err == nil {
			_, err = io.Copy(io.Discard, pr)
		}
		pr.CloseWithError(err)
		extracted <- err
	}()

	h := sha256.New()
	var total int64
	var recvErr error
	for {
		if err := ctx.Err(); err != nil {
			recvErr = err
			break
		}
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			recvErr = fmt.Errorf("receiving the repository tarball: %w", err)
			break
		}
		f := msg.GetFile()
		if f == nil {
			recvErr = errors.New("protocol error: a second metadata message in the stream")
			break
		}
		chunk := f.GetChunk()
		total += int64(len(chunk))
		m.Received(len(chunk))
		if total > lim.MaxCompressed {
			recvErr = fmt.Errorf("the repository tarball exceeds the %d-byte limit: exclude files with the repo-server's --plugin-tar-exclude or raise --max-tarball-bytes", lim.MaxCompressed)
			break
		}
		h.Write(chunk)
		if _, err := pw.Write(chunk); err != nil {
			// The extractor stopped: its error (below) says why.
			break
		}
	}
	if recvErr != nil {
		pw.CloseWithError(recvErr)
	} else {
		pw.Close()
	}
	exErr := <-extracted
	switch {
	case errors.Is(exErr, archive.ErrRefused):
		// The extraction refused what the stream holds: that is the cause.
		// Reading stopped at the refusal, so whether the checksum of what
		// was read matches, or a later receive failed, only depends on how
		// far the chunks had got by then.
		return nil, exErr
	case recvErr != nil:
		return nil, recvErr
	case meta.GetSize() > 0 && total < meta.GetSize():
		// Fewer bytes than announced: the stream was cut, which says more
		// than the checksum mismatch that necessarily follows.
		return nil, fmt.Errorf("the repository tarball ended after %d of the %d bytes its metadata announced (the stream was cut short: retry the refresh)", total, meta.GetSize())
	case hex.EncodeToString(h.Sum(nil)) != strings.ToLower(meta.GetChecksum()):
		// Checked before the extractor's other errors: a corrupted stream
		// makes gzip complain, but the checksum is the real cause.
		return nil, fmt.Errorf("repository tarball checksum mismatch: got sha256 %s, the metadata says %s (the stream was truncated or corrupted)", hex.EncodeToString(h.Sum(nil)), echo.Quote(meta.GetChecksum()))
	case exErr != nil:
		return nil, exErr
	}
	return meta, nil
}

// archiveOptions are the repository's tar.gz rules: everything is kept,
// symbolic links only when they resolve inside the repository.
func (l Limits) archiveOptions() archive.Options {
	return archive.Options{
		Compression: archive.Gzip,
		Links:       archive.LinksInside,
		Root:        "the repository",
		Limits:      archive.Limits{MaxBytes: l.MaxExtracted, MaxEntries: l.MaxEntries},
	}
}

// extractTgz writes a tar.gz into dir with internal/archive's checks:
// nothing is written or pointed to outside dir.
func extractTgz(ctx context.Context, r io.Reader, dir string, lim Limits) error {
	x, err := archive.NewExtractor(dir, lim.archiveOptions())
	if err != nil {
		return err
	}
	defer x.Close()
	return repoError(x.Extract(ctx, r, nil), lim)
}

// repoError says what an archive error means for a repository tarball, with
// the flag that raises a limit.
func repoError(err error, lim Limits) error {
	var le *archive.LimitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &le) && le.Limit == archive.LimitBytes:
		return &refusal{fmt.Sprintf("the repository expands to more than %d bytes (--max-extract-bytes)", lim.MaxExtracted), err}
	case errors.As(err, &le) && le.Limit == archive.LimitEntries:
		return &refusal{fmt.Sprintf("the repository tarball has more than %d entries", lim.MaxEntries), err}
	case errors.Is(err, archive.ErrRefused):
		return fmt.Errorf("refusing the repository tarball: %w", err)
	case errors.Is(err, archive.ErrNotGzip):
		return fmt.Errorf("the repository tarball is %w", err)
	}
	return fmt.Errorf("reading the repository tarball: %w", err)
}

// refusal is an archive refusal rephrased for the user; it still matches
// the archive error (errors.Is(err, archive.ErrRefused)).
type refusal struct {
	msg   string
	cause error
}

func (r *refusal) Error() string { return r.msg }
func (r *refusal) Unwrap() error { return r.cause }

// tarIndex is what MatchRepository needs from a repository tarball: which
// regular files and symbolic links it holds, by cleaned name. Regular files
// are kept as 8-byte seeded hashes of their names, so a repository of 200000
// files costs a few MB, not its names (a collision, odds ~1e-9 at the entry
// limit, could only make MatchRepository claim an application whose
// GenerateManifest then reports the missing olm-cmp.yaml).
type tarIndex struct {
	seed  maphash.Seed
	files map[uint64]struct{} // regular files, by hashed name
	links map[string]string   // symbolic link -> its target as written
}

func newTarIndex() *tarIndex {
	return &tarIndex{seed: maphash.MakeSeed(), files: map[uint64]struct{}{}, links: map[string]string{}}
}

func (idx *tarIndex) key(rel string) uint64 { return maphash.String(idx.seed, rel) }

// scanTgz indexes a tar.gz without writing anything, with the checks and
// limits of extractTgz (so a tarball extraction refuses is refused here
// too, except links that only real resolution finds leaving: the index
// resolves links lexically and ignores those).
func scanTgz(ctx context.Context, r io.Reader, idx *tarIndex, lim Limits) error {
	return repoError(archive.Walk(ctx, r, lim.archiveOptions(), func(e archive.Entry) error {
		rel := filepath.FromSlash(e.Name)
		// A later entry of the same name replaces an earlier one, as on disk.
		delete(idx.files, idx.key(rel))
		delete(idx.links, rel)
		switch e.Kind {
		case archive.File:
			idx.files[idx.key(rel)] = struct{}{}
		case archive.Symlink:
			idx.links[rel] = e.Linkname
		}
		return nil
	}), lim)
}

// maxLinkHops bounds symbolic link resolution in a tarball index (Linux
// gives up after 40 too).
const maxLinkHops = 40

// hasSpec reports whether <appRelPath>/olm-cmp.yaml names a regular file of
// the tarball, following its symbolic links (lexically, inside the
// repository only) as the extracted copy would: a symlinked application
// directory or olm-cmp.yaml counts when it leads to a regular olm-cmp.yaml
// inside the repository; a dangling link, or one that leaves, does not.
func (idx *tarIndex) hasSpec(appRelPath string) bool {
	rel, err := safeRel(appRelPath)
	if err != nil {
		return false
	}
	p, ok := idx.resolve(filepath.Join(rel, spec.FileName))
	if !ok {
		return false
	}
	_, isFile := idx.files[idx.key(p)]
	return isFile
}

// resolve follows the index's symbolic links in rel (a clean relative path)
// component by component, as the kernel would on the extracted copy ("..")
// after a link goes to the parent of the link's target), and returns the
// path it leads to, or false when it leaves the repository or loops.
func (idx *tarIndex) resolve(rel string) (string, bool) {
	sep := string(filepath.Separator)
	rest := strings.Split(rel, sep)
	var cur []string // resolved components: no links among them
	for hops := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return "", false // leaves the repository
			}
			cur = cur[:len(cur)-1]
			continue
		}
		target, isLink := idx.links[strings.Join(append(cur, c), sep)]
		if !isLink {
			cur = append(cur, c)
			continue
		}
		if hops++; hops > maxLinkHops || filepath.IsAbs(filepath.FromSlash(target)) {
			return "", false
		}
		// The target is relative to the link's directory, which is cur.
		rest = append(strings.Split(filepath.FromSlash(target), sep), rest...)
	}
	return strings.Join(cur, sep), true
}

// safeRel cleans an application path (appRelPath) into a relative path
// that stays inside the repository.
func safeRel(name string) (string, error) {
	if strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("refusing tarball entry %s: NUL in name", echo.Quote(name))
	}
	n := filepath.FromSlash(name)
	if filepath.IsAbs(n) || filepath.VolumeName(n) != "" {
		return "", fmt.Errorf("refusing tarball entry %s: absolute path", echo.Quote(name))
	}
	rel := filepath.Clean(n)
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("refusing tarball entry %s: path traversal", echo.Quote(name))
	}
	return rel, nil
}

// appDir returns the application directory inside the extraction root.
func appDir(root, appRelPath string) (string, error) {
	rel, err := safeRel(appRelPath)
	if err != nil {
		return "", fmt.Errorf("appRelPath %s: outside the repository", echo.Quote(appRelPath))
	}
	dir := filepath.Join(root, rel)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("appRelPath %s: not in the repository tarball", echo.Quote(appRelPath))
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	if !within(realRoot, real) {
		return "", fmt.Errorf("appRelPath %s: outside the repository", echo.Quote(appRelPath))
	}
	return real, nil
}

// within reports whether path is root or below it (both cleaned, absolute).
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
