package cmp

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/olm-cmp/olm-cmp/internal/cmp/pluginpb"
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
func receiveRepo(ctx context.Context, stream streamReceiver, dir string, lim Limits, m *Metrics) (*pluginpb.ManifestRequestMetadata, error) {
	lim = lim.withDefaults()
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
		err := extractTgz(pr, dir, lim)
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
		m.received(len(chunk))
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
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("the repository tarball is not gzip: %w", err)
	}
	tr := tar.NewReader(zr)
	links := map[string]bool{} // symbolic links created, by cleaned relative name
	var written int64
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
		target := filepath.Join(dir, rel)
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg, tar.TypeRegA:
			if hdr.Size > lim.MaxExtracted-written {
				return fmt.Errorf("the repository expands to more than %d bytes (--max-extract-bytes)", lim.MaxExtracted)
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			n, err := writeFile(target, tr, hdr.Size)
			written += n
			if err != nil {
				return fmt.Errorf("extracting %q: %w", hdr.Name, err)
			}
		case tar.TypeSymlink:
			if err := checkLink(rel, hdr.Linkname); err != nil {
				return fmt.Errorf("refusing tarball entry %q: %w", hdr.Name, err)
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			_ = os.Remove(target) // a later entry of the same name wins, as with tar
			if err := os.Symlink(hdr.Linkname, target); err != nil {
				return err
			}
			links[rel] = true
		case tar.TypeLink:
			return fmt.Errorf("refusing tarball entry %q: hard links are not supported", hdr.Name)
		default:
			// Devices, FIFOs, PAX/GNU extension records: nothing a render reads.
		}
	}
	// Drain the gzip stream so its CRC is checked too.
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return fmt.Errorf("reading the repository tarball: %w", err)
	}
	return checkLinksResolveInside(dir, links)
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
