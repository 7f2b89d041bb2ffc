package cmpserver

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/olm-cmp/olm-cmp/internal/cmpserver/pluginpb"
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
	return receiveStream(ctx, stream, lim, m, func(r io.Reader) error { return extractTgz(r, dir, lim) })
}

// scanRepo reads the whole stream as receiveRepo does, hashing and checking
// every entry and limit the same way, but writes nothing: it returns the
// index MatchRepository answers from. The index is only valid without error.
func scanRepo(ctx context.Context, stream streamReceiver, lim Limits, m *engine.Metrics) (*pluginpb.ManifestRequestMetadata, *tarIndex, error) {
	lim = lim.withDefaults()
	idx := newTarIndex()
	meta, err := receiveStream(ctx, stream, lim, m, func(r io.Reader) error { return scanTgz(r, idx, lim) })
	if err != nil {
		return nil, nil, err
	}
	return meta, idx, nil
}

// receiveStream reads the metadata message, then feeds the tar.gz chunks to
// consume while hashing them, and compares the checksum once the stream ends.
func receiveStream(ctx context.Context, stream streamReceiver, lim Limits, m *engine.Metrics, consume func(io.Reader) error) (*pluginpb.ManifestRequestMetadata, error) {
	first, err := stream.Recv()
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
	case recvErr != nil:
		return nil, recvErr
	case hex.EncodeToString(h.Sum(nil)) != strings.ToLower(meta.GetChecksum()):
		// Checked before the extractor's error: a corrupted stream makes
		// gzip complain, but the checksum is the real cause.
		return nil, fmt.Errorf("repository tarball checksum mismatch: got sha256 %s, the metadata says %q (the stream was truncated or corrupted)", hex.EncodeToString(h.Sum(nil)), meta.GetChecksum())
	case exErr != nil:
		return nil, exErr
	}
	return meta, nil
}

// extractTgz writes a tar.gz into dir, refusing anything that could write or
// point outside dir: absolute names, "..", entries below a symbolic link, links
// whose target leaves dir, hard links; devices and FIFOs are skipped.
func extractTgz(r io.Reader, dir string, lim Limits) error {
	links := map[string]bool{} // symbolic links created, by cleaned relative name
	err := walkTgz(r, lim, func(hdr *tar.Header, rel string, body io.Reader) error {
		target := filepath.Join(dir, rel)
		switch hdr.Typeflag {
		case tar.TypeDir:
			return os.MkdirAll(target, 0o755)
		case tar.TypeReg, tar.TypeRegA:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			if _, err := writeFile(target, body, hdr.Size); err != nil {
				return fmt.Errorf("extracting %q: %w", hdr.Name, err)
			}
		case tar.TypeSymlink:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			_ = os.Remove(target) // a later entry of the same name wins, as with tar
			if err := os.Symlink(hdr.Linkname, target); err != nil {
				return err
			}
			links[rel] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	return checkLinksResolveInside(dir, links)
}

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
// limits of extractTgz (so a tarball extraction refuses is refused here too).
func scanTgz(r io.Reader, idx *tarIndex, lim Limits) error {
	return walkTgz(r, lim, func(hdr *tar.Header, rel string, _ io.Reader) error {
		// A later entry of the same name replaces an earlier one, as on disk.
		delete(idx.files, idx.key(rel))
		delete(idx.links, rel)
		switch hdr.Typeflag {
		case tar.TypeReg, tar.TypeRegA:
			idx.files[idx.key(rel)] = struct{}{}
		case tar.TypeSymlink:
			idx.links[rel] = hdr.Linkname
		}
		return nil
	})
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

// walkTgz reads a tar.gz to its end and calls fn with every entry that
// matters (directories, regular files, symbolic links), named by its cleaned
// relative path, after the checks every consumer needs: no absolute names or
// "..", nothing below a symbolic link, no link that leaves the repository
// lexically, no hard links, and the entry and size limits. Devices, FIFOs
// and extension records are skipped. fn may read a regular file's body.
func walkTgz(r io.Reader, lim Limits, fn func(hdr *tar.Header, rel string, body io.Reader) error) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("the repository tarball is not gzip: %w", err)
	}
	tr := tar.NewReader(zr)
	links := map[string]bool{} // symbolic links seen, by cleaned relative name
	var size int64
	for entries := 0; ; entries++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the repository tarball: %w", err)
		}
		if entries >= lim.MaxEntries {
			return fmt.Errorf("the repository tarball has more than %d entries", lim.MaxEntries)
		}
		rel, err := safeRel(hdr.Name)
		if err != nil {
			return err
		}
		if rel == "." {
			continue
		}
		for p := filepath.Dir(rel); p != "."; p = filepath.Dir(p) {
			if links[p] {
				return fmt.Errorf("refusing tarball entry %q: it is below the symbolic link %q", hdr.Name, p)
			}
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
		case tar.TypeReg, tar.TypeRegA:
			if links[rel] {
				return fmt.Errorf("refusing tarball entry %q: it replaces the symbolic link of the same name", hdr.Name)
			}
			if hdr.Size > lim.MaxExtracted-size {
				return fmt.Errorf("the repository expands to more than %d bytes (--max-extract-bytes)", lim.MaxExtracted)
			}
			size += hdr.Size
		case tar.TypeSymlink:
			if err := checkLink(rel, hdr.Linkname); err != nil {
				return fmt.Errorf("refusing tarball entry %q: %w", hdr.Name, err)
			}
			links[rel] = true
		case tar.TypeLink:
			return fmt.Errorf("refusing tarball entry %q: hard links are not supported", hdr.Name)
		default:
			continue // devices, FIFOs, PAX/GNU extension records: nothing a render reads
		}
		if err := fn(hdr, rel, tr); err != nil {
			return err
		}
	}
	// Drain the gzip stream so its CRC is checked too.
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return fmt.Errorf("reading the repository tarball: %w", err)
	}
	return nil
}

// checkLinksResolveInside resolves every extracted symbolic link for real:
// the lexical check of checkLink cannot see a ".." that follows another link
// in a target ("l1/../.."). A link that dangles is removed (nothing may be
// created behind it later); one that resolves outside dir fails the request.
func checkLinksResolveInside(dir string, links map[string]bool) error {
	if len(links) == 0 {
		return nil
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	for rel := range links {
		p := filepath.Join(dir, rel)
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				_ = os.Remove(p)
				continue
			}
			return fmt.Errorf("refusing symbolic link %q: %w", rel, err)
		}
		if !within(realDir, real) {
			return fmt.Errorf("refusing symbolic link %q: it resolves outside the repository", filepath.ToSlash(rel))
		}
	}
	return nil
}

// safeRel cleans a tar entry name into a relative path that stays inside the
// extraction directory.
func safeRel(name string) (string, error) {
	if strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("refusing tarball entry %q: NUL in name", name)
	}
	n := filepath.FromSlash(name)
	if filepath.IsAbs(n) || filepath.VolumeName(n) != "" {
		return "", fmt.Errorf("refusing tarball entry %q: absolute path", name)
	}
	rel := filepath.Clean(n)
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("refusing tarball entry %q: path traversal", name)
	}
	return rel, nil
}

// checkLink refuses a symbolic link whose target, resolved lexically from the
// link's directory, leaves the extraction root: the cheap first line, before
// anything is created. checkLinksResolveInside does the real resolution once
// every entry is on disk.
func checkLink(rel, linkname string) error {
	if linkname == "" {
		return errors.New("empty link target")
	}
	t := filepath.FromSlash(linkname)
	if filepath.IsAbs(t) {
		return fmt.Errorf("symbolic link to the absolute path %q", linkname)
	}
	resolved := filepath.Clean(filepath.Join(filepath.Dir(rel), t))
	if resolved == ".." || strings.HasPrefix(resolved, ".."+string(filepath.Separator)) {
		return fmt.Errorf("symbolic link %q leaves the repository", linkname)
	}
	return nil
}

// writeFile writes exactly size bytes of r to path, never following a
// symbolic link already at path.
func writeFile(path string, r io.Reader, size int64) (int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return 0, err
	}
	n, err := io.CopyN(f, r, size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// appDir returns the application directory inside the extraction root.
func appDir(root, appRelPath string) (string, error) {
	rel, err := safeRel(appRelPath)
	if err != nil {
		return "", fmt.Errorf("appRelPath %q: outside the repository", appRelPath)
	}
	dir := filepath.Join(root, rel)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("appRelPath %q: not in the repository tarball", appRelPath)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	if !within(realRoot, real) {
		return "", fmt.Errorf("appRelPath %q: outside the repository", appRelPath)
	}
	return real, nil
}

// within reports whether path is root or below it (both cleaned, absolute).
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
