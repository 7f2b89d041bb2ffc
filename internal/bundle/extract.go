package bundle

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// errTooLarge ends a pull whose layers exceed the size cap.
var errTooLarge = errors.New("image layers exceed the uncompressed size limit")

// extractBundle writes the manifests/ and metadata/ files of img's flattened
// filesystem into dst. mutate.Extract applies the layers in order with their
// whiteouts; opaque-directory whiteouts (.wh..wh..opq) are not honoured by
// it, which only matters for bundles built on top of another bundle image.
//
// Safety: every entry name is checked (absolute paths and `..` are refused
// for the whole image, since no honest builder writes them); only regular
// files and directories are written, and a link inside manifests/ or
// metadata/ is an error, not a skip, so a bundle never silently loses a
// manifest; files are created through an os.Root on dst, so even a mistake
// here cannot write outside it; file modes are not taken from the image.
// Bytes are capped on the uncompressed layer streams, counting every layer
// including content later layers hide, and on the compressed sizes the
// manifest declares, before anything is downloaded.
func extractBundle(ctx context.Context, img v1.Image, dst string, maxBytes int64, maxFiles int) error {
	layers, err := img.Layers()
	if err != nil {
		return fmt.Errorf("reading layers: %w", err)
	}
	var compressed int64
	for _, l := range layers {
		size, err := l.Size()
		if err != nil {
			return fmt.Errorf("reading layer size: %w", err)
		}
		compressed += size
	}
	if compressed > maxBytes {
		return fmt.Errorf("layers are %d bytes compressed, over the %d byte limit for a bundle image", compressed, maxBytes)
	}

	root, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer root.Close()

	budget := &byteBudget{left: maxBytes, limit: maxBytes}
	rc := mutate.Extract(&cappedImage{Image: img, budget: budget})
	defer rc.Close()
	tr := tar.NewReader(rc)
	files := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return budget.explain(err)
		}
		name, err := entryName(hdr.Name)
		if err != nil {
			return err
		}
		if top, _, _ := strings.Cut(name, "/"); top != ManifestsDir && top != MetadataDir {
			continue
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(name, 0o755); err != nil {
				return fmt.Errorf("layer entry %s: %w", name, err)
			}
		case tar.TypeReg, tar.TypeRegA: //nolint:staticcheck // TypeRegA is what old tar writers emit
			if files++; files > maxFiles {
				return fmt.Errorf("more than %d files in %s/ and %s/", maxFiles, ManifestsDir, MetadataDir)
			}
			if err := writeFile(root, name, tr); err != nil {
				return budget.explain(fmt.Errorf("layer entry %s: %w", name, err))
			}
		case tar.TypeSymlink, tar.TypeLink:
			return fmt.Errorf("layer entry %s is a link (to %q): bundle images must hold regular files only", name, hdr.Linkname)
		default:
			return fmt.Errorf("layer entry %s has unsupported type %q: bundle images must hold regular files only", name, hdr.Typeflag)
		}
	}
}

// entryName normalises a layer entry name ("./manifests/x" → "manifests/x")
// and refuses absolute names and `..` components.
func entryName(raw string) (string, error) {
	n := strings.TrimPrefix(raw, "./")
	if path.IsAbs(n) || strings.HasPrefix(n, "\\") {
		return "", fmt.Errorf("layer entry %q has an absolute path", raw)
	}
	for _, part := range strings.Split(n, "/") {
		if part == ".." {
			return "", fmt.Errorf("layer entry %q leaves the image root (`..`)", raw)
		}
	}
	n = path.Clean(n)
	if n == "." {
		return "", nil
	}
	return n, nil
}

func writeFile(root *os.Root, name string, r io.Reader) error {
	if dir := path.Dir(name); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// byteBudget counts uncompressed layer bytes; mutate.Extract reads layers
// one after another in a single goroutine, so it needs no lock.
type byteBudget struct {
	left  int64
	limit int64
}

func (b *byteBudget) explain(err error) error {
	if errors.Is(err, errTooLarge) {
		return fmt.Errorf("%w (%d bytes); raise the loader's MaxBytes if the bundle is genuine", errTooLarge, b.limit)
	}
	return err
}

type cappedImage struct {
	v1.Image
	budget *byteBudget
}

func (i *cappedImage) Layers() ([]v1.Layer, error) {
	ls, err := i.Image.Layers()
	if err != nil {
		return nil, err
	}
	out := make([]v1.Layer, len(ls))
	for n, l := range ls {
		out[n] = &cappedLayer{Layer: l, budget: i.budget}
	}
	return out, nil
}

type cappedLayer struct {
	v1.Layer
	budget *byteBudget
}

func (l *cappedLayer) Uncompressed() (io.ReadCloser, error) {
	rc, err := l.Layer.Uncompressed()
	if err != nil {
		return nil, err
	}
	return &cappedReader{rc: rc, budget: l.budget}, nil
}

type cappedReader struct {
	rc     io.ReadCloser
	budget *byteBudget
}

func (r *cappedReader) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	r.budget.left -= int64(n)
	if r.budget.left < 0 {
		return n, errTooLarge
	}
	return n, err
}

func (r *cappedReader) Close() error { return r.rc.Close() }
