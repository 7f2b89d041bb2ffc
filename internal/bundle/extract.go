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

// selection says which part of an image's filesystem an extraction keeps,
// and where each kept entry lands under the destination. Bundles and
// catalogs share the extraction (and so its safety checks); they differ only
// in the selection.
type selection struct {
	// what names the image kind in messages ("bundle image").
	what string
	// dirs names the kept directories in messages ("manifests/ and metadata/").
	dirs string
	// limit names the loader field capping the image's size, for messages.
	limit string
	// nonEmpty makes an extraction that kept no file an error (a catalog
	// image whose label points at the wrong directory).
	nonEmpty bool
	// keep maps a cleaned entry name to its name under the destination; ok is
	// false for entries to skip. An empty name is the destination root.
	keep func(name string) (dst string, ok bool)
}

// bundleSelection keeps manifests/ and metadata/, at the same place.
var bundleSelection = selection{
	what:  "bundle image",
	limit: "MaxBytes",
	dirs:  ManifestsDir + "/ and " + MetadataDir + "/",
	keep: func(name string) (string, bool) {
		top, _, _ := strings.Cut(name, "/")
		return name, top == ManifestsDir || top == MetadataDir
	},
}

// catalogSelection keeps the file-based catalog under dir (cleaned, relative,
// e.g. "configs") and moves it to the destination root, so a cached catalog
// is read without knowing which directory its image's label named.
func catalogSelection(dir string) selection {
	return selection{
		what:     "catalog image",
		limit:    "MaxCatalogBytes",
		dirs:     "/" + dir + "/",
		nonEmpty: true,
		keep: func(name string) (string, bool) {
			if name == dir {
				return "", true
			}
			rest, ok := strings.CutPrefix(name, dir+"/")
			return rest, ok
		},
	}
}

// extract writes the entries of img's flattened filesystem that sel keeps
// into dst. mutate.Extract applies the layers in order with their
// whiteouts; opaque-directory whiteouts (.wh..wh..opq) are not honoured by
// it, which only matters for bundles built on top of another bundle image.
//
// Safety: every entry name is checked (absolute paths and `..` are refused
// for the whole image, since no honest builder writes them); only regular
// files and directories are written, and a link inside a kept directory is
// an error, not a skip, so a bundle never silently loses a manifest; files
// are created through an os.Root on dst, so even a mistake here cannot write
// outside it; file modes are not taken from the image. Bytes are capped on
// the uncompressed layer streams, counting every layer including content
// later layers hide (and layers outside the kept directories, such as a
// catalog's opm base image), and on the compressed sizes the manifest
// declares, before anything is downloaded.
func extract(ctx context.Context, img v1.Image, dst string, sel selection, maxBytes int64, maxFiles int) error {
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
		return fmt.Errorf("layers are %d bytes compressed, over the %d byte limit for a %s", compressed, maxBytes, sel.what)
	}

	root, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer root.Close()

	budget := &byteBudget{left: maxBytes, limit: maxBytes, field: sel.limit}
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
		raw := name
		name, ok := sel.keep(name)
		if !ok {
			continue
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if name == "" {
				continue // the destination itself
			}
			if err := root.MkdirAll(name, 0o755); err != nil {
				return fmt.Errorf("layer entry %s: %w", raw, err)
			}
		case tar.TypeReg, tar.TypeRegA: //nolint:staticcheck // TypeRegA is what old tar writers emit
			if name == "" {
				return fmt.Errorf("layer entry %s is a file: a %s needs a directory there", raw, sel.what)
			}
			if files++; files > maxFiles {
				return fmt.Errorf("more than %d files in %s", maxFiles, sel.dirs)
			}
			if err := writeFile(root, name, tr); err != nil {
				return budget.explain(fmt.Errorf("layer entry %s: %w", raw, err))
			}
		case tar.TypeSymlink, tar.TypeLink:
			return fmt.Errorf("layer entry %s is a link (to %q): %ss must hold regular files only in %s", raw, hdr.Linkname, sel.what, sel.dirs)
		default:
			return fmt.Errorf("layer entry %s has unsupported type %q: %ss must hold regular files only in %s", raw, hdr.Typeflag, sel.what, sel.dirs)
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
	field string // the loader field that sets limit
}

func (b *byteBudget) explain(err error) error {
	if errors.Is(err, errTooLarge) {
		return fmt.Errorf("%w (%d bytes); raise the loader's %s if the image is genuine", errTooLarge, b.limit, b.field)
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
