package bundle

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/olm-cmp/olm-cmp/internal/archive"
)

// errTooLarge ends a pull whose layers exceed the size cap.
var errTooLarge = errors.New("image layers exceed the uncompressed size limit")

// errLayerDigest: a layer blob the registry sent is not the one its digest names.
var errLayerDigest = errors.New("the blob the registry sent does not match this digest and the size the manifest gives: the registry or a proxy in between serves corrupt or tampered data")

// errDiffID: a layer decompresses to something else than the image config says.
var errDiffID = errors.New("its uncompressed content does not match the image config's diff_id")

// DefaultMaxLayers caps the layers of an image. Bundle images have one or
// two, catalog images a handful; every layer is a registry round trip.
const DefaultMaxLayers = 128

// maxConfigBytes caps the image config, which is read whole into memory
// (for a catalog's label and the layers' diff_ids).
const maxConfigBytes = 8 << 20

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
	// keep is what the layers keep, and where.
	keep archive.Select
}

// bundleSelection keeps manifests/ and metadata/, at the same place.
var bundleSelection = selection{
	what:  "bundle image",
	limit: "MaxBytes",
	dirs:  ManifestsDir + "/ and " + MetadataDir + "/",
	keep:  archive.Select{Top: []string{ManifestsDir, MetadataDir}},
}

// catalogImage names catalog images in messages.
const catalogImage = "catalog image"

// catalogSelection keeps the file-based catalog under dir (cleaned, relative,
// e.g. "configs") and moves it to the destination root, so a cached catalog
// is read without knowing which directory its image's label named.
func catalogSelection(dir string) selection {
	return selection{
		what:     catalogImage,
		limit:    "MaxCatalogBytes",
		dirs:     "/" + dir + "/",
		nonEmpty: true,
		keep:     archive.Select{Dir: dir},
	}
}

// checkManifest refuses, before anything else is fetched, an image with more
// layers than maxLayers, layers larger compressed than maxBytes, layers
// fetched from elsewhere than the registry, or a config too large to read.
func checkManifest(m *v1.Manifest, what string, maxLayers int, maxBytes int64) error {
	if n := len(m.Layers); n > maxLayers {
		return fmt.Errorf("the image has %d layers, over the limit of %d for a %s: raise the loader's MaxLayers if the image is genuine", n, maxLayers, what)
	}
	var compressed int64
	for i, l := range m.Layers {
		if l.Size < 0 || l.Size > maxBytes {
			return fmt.Errorf("layer %d (%s) declares %d bytes compressed, over the %d byte limit for a %s", i+1, l.Digest, l.Size, maxBytes, what)
		}
		if len(l.URLs) > 0 {
			return fmt.Errorf("layer %d (%s) is a foreign layer, fetched from URLs the manifest lists: %ss are pulled from their registry only", i+1, l.Digest, what)
		}
		compressed += l.Size // at most maxLayers × maxBytes: no overflow
	}
	if compressed > maxBytes {
		return fmt.Errorf("layers are %d bytes compressed, over the %d byte limit for a %s", compressed, maxBytes, what)
	}
	if m.Config.Size > maxConfigBytes {
		return fmt.Errorf("the image config is %d bytes, over the %d byte limit", m.Config.Size, maxConfigBytes)
	}
	return nil
}

// extract writes the part of img's filesystem that sel keeps into dst: the
// layers m lists, in order, each with its whiteouts (opaque ones included)
// applied to the layers below. checkManifest(m) must have passed.
//
// Each layer is read through the registry's digest-verifying reader to its
// very end, so its digest is checked before the extraction counts as done,
// and its decompressed bytes are checked against the config's diff_id. Any
// layer error fails the extraction: a bundle is extracted whole or not at
// all (the caller discards dst on error).
//
// Safety is internal/archive's: names, links (none allowed in the kept
// directories), entry types, and limits on bytes (counting every layer,
// including content later layers hide and layers outside the kept
// directories, such as a catalog's opm base image), entries and files.
func extract(ctx context.Context, img v1.Image, m *v1.Manifest, dst string, sel selection, maxBytes int64, maxFiles int) error {
	cfg, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("reading the image config: %w", err)
	}
	if got, want := len(cfg.RootFS.DiffIDs), len(m.Layers); got != want {
		return fmt.Errorf("the image config lists %d layers (rootfs.diff_ids), the manifest %d", got, want)
	}
	x, err := archive.NewExtractor(dst, archive.Options{
		Compression: archive.Detect,
		Links:       archive.NoLinks,
		Whiteouts:   true,
		Select:      sel.keep,
		// Entries outside the kept directories (a catalog's base image)
		// are read too: allow ten per kept file.
		Limits: archive.Limits{MaxBytes: maxBytes, MaxEntries: 10*maxFiles + 10000, MaxFiles: maxFiles},
	})
	if err != nil {
		return err
	}
	defer x.Close()
	for i, desc := range m.Layers {
		if err := readLayer(ctx, img, desc, cfg.RootFS.DiffIDs[i], x); err != nil {
			return fmt.Errorf("layer %d of %d (%s): %w", i+1, len(m.Layers), desc.Digest, explain(err, sel, maxBytes, maxFiles))
		}
	}
	return nil
}

// readLayer extracts one layer and reads its blob to the end, so the
// registry reader checks the digest; it reports the blob's fault over the
// extraction's when both fail, as a blob that is not what its digest names
// explains any error reading it.
func readLayer(ctx context.Context, img v1.Image, desc v1.Descriptor, diffID v1.Hash, x *archive.Extractor) error {
	layer, err := img.LayerByDigest(desc.Digest)
	if err != nil {
		return err
	}
	rc, err := layer.Compressed()
	if err != nil {
		return fmt.Errorf("fetching the blob: %w", err)
	}
	defer rc.Close()
	blob := &blobReader{r: rc}
	h, err := v1.Hasher(diffID.Algorithm)
	if err != nil {
		return fmt.Errorf("the image config's diff_id %q: %w", diffID, err)
	}
	exErr := x.Extract(ctx, blob, h)
	if exErr != nil && !errors.Is(exErr, archive.ErrRefused) && blob.err == nil {
		// The stream could not be read: see whether the blob is at fault.
		_, _ = io.Copy(io.Discard, blob)
	}
	if exErr == nil {
		_, _ = io.Copy(io.Discard, blob) // to EOF: the digest check fires there
	}
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case blob.err != nil:
		return blob.explain(desc)
	case exErr != nil:
		return exErr
	case hex.EncodeToString(h.Sum(nil)) != diffID.Hex:
		return fmt.Errorf("%w (%s)", errDiffID, diffID)
	}
	return nil
}

// blobReader notes what the registry's verifying reader returned: the
// first error other than io.EOF, and the bytes read before it.
type blobReader struct {
	r   io.Reader
	n   int64
	err error
}

func (b *blobReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		b.err = err
	}
	return n, err
}

// explain turns the verifying reader's error into its cause. That reader
// reads exactly the declared size and checks the digest at its end, so an
// error after the whole size is a digest mismatch, one before it a short
// blob or a broken connection.
func (b *blobReader) explain(desc v1.Descriptor) error {
	if b.n == desc.Size {
		return errLayerDigest
	}
	if b.n < desc.Size {
		return fmt.Errorf("the registry sent %d of the blob's %d bytes: %w", b.n, desc.Size, b.err)
	}
	return fmt.Errorf("reading the blob: %w", b.err)
}

// explain adds to an extraction error what the user can do about it.
func explain(err error, sel selection, maxBytes int64, maxFiles int) error {
	var le *archive.LimitError
	var ee *archive.EntryError
	switch {
	case errors.As(err, &le) && le.Limit == archive.LimitBytes:
		return fmt.Errorf("%w (%d bytes); raise the loader's %s if the image is genuine", errTooLarge, maxBytes, sel.limit)
	case errors.As(err, &le) && le.Limit == archive.LimitFiles:
		return fmt.Errorf("more than %d files in %s", maxFiles, sel.dirs)
	case errors.As(err, &ee) && (errors.Is(err, archive.ErrLink) || errors.Is(err, archive.ErrHardLink) || errors.Is(err, archive.ErrType)):
		return fmt.Errorf("%w: %ss must hold regular files only in %s", err, sel.what, sel.dirs)
	case errors.Is(err, archive.ErrNotTar):
		return fmt.Errorf("the layer is %w", err)
	}
	return err
}
