package ociimage

import (
	"archive/tar"
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// OpenIndex is the image index Build wrote to dir (the layout's index.json
// lists it, and the SBOM beside it).
func OpenIndex(dir string, index v1.Hash) (v1.ImageIndex, error) {
	root, err := layoutIndex(dir)
	if err != nil {
		return nil, err
	}
	return root.ImageIndex(index)
}

// layoutIndex is the layout's index.json.
func layoutIndex(dir string) (v1.ImageIndex, error) {
	lp, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	return lp.ImageIndex()
}

// PlatformImage is the image for platform (os/arch) in an OCI image layout
// Build wrote (index.json lists the build's index, and the SBOM beside it).
func PlatformImage(dir, platform string) (v1.Image, error) {
	root, err := layoutIndex(dir)
	if err != nil {
		return nil, err
	}
	if img, err := findPlatform(root, platform); err != nil || img != nil {
		return img, err
	}
	return nil, fmt.Errorf("%s: no image for %s (make image builds linux/amd64 and linux/arm64)", dir, platform)
}

// findPlatform looks through idx and the indexes it lists; nil when no
// image is for platform.
func findPlatform(idx v1.ImageIndex, platform string) (v1.Image, error) {
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range im.Manifests {
		switch {
		case d.MediaType.IsIndex():
			child, err := idx.ImageIndex(d.Digest)
			if err != nil {
				return nil, err
			}
			if img, err := findPlatform(child, platform); err != nil || img != nil {
				return img, err
			}
		case d.MediaType.IsImage() && d.Platform != nil && d.Platform.OS+"/"+d.Platform.Architecture == platform:
			return idx.Image(d.Digest)
		}
	}
	return nil, nil
}

// ReadLayer reads the one layer of an image Build made (trusted input: the
// build's own output, for tests and checks): its tar headers in order, and
// the contents of its regular files by absolute path.
func ReadLayer(img v1.Image) ([]*tar.Header, map[string][]byte, error) {
	ls, err := img.Layers()
	if err != nil {
		return nil, nil, err
	}
	if len(ls) != 1 {
		return nil, nil, fmt.Errorf("%d layers, want 1", len(ls))
	}
	rc, err := ls[0].Uncompressed()
	if err != nil {
		return nil, nil, err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var hs []*tar.Header
	data := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return hs, data, nil
		}
		if err != nil {
			return nil, nil, err
		}
		hs = append(hs, h)
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				return nil, nil, err
			}
			data["/"+h.Name] = b
		}
	}
}
