package sidecar

import (
	"archive/tar"
	"fmt"
	"os"
	"path"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/olm-cmp/olm-cmp/hack/ociimage"
)

// LayoutImage is the image for platform (os/arch) in the OCI image layout
// `make image` writes (hack/ociimage: index.json lists the build's index,
// and the SBOM beside it).
func LayoutImage(dir, platform string) (v1.Image, error) {
	lp, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	root, err := lp.ImageIndex()
	if err != nil {
		return nil, err
	}
	return findImage(root, platform, dir)
}

func findImage(idx v1.ImageIndex, platform, dir string) (v1.Image, error) {
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
			if img, err := findImage(child, platform, dir); err == nil {
				return img, nil
			}
		case d.MediaType.IsImage() && d.Platform != nil && d.Platform.OS+"/"+d.Platform.Architecture == platform:
			return idx.Image(d.Digest)
		}
	}
	return nil, fmt.Errorf("%s: no image for %s (make image builds linux/amd64 and linux/arm64)", dir, platform)
}

// Extract writes the image's root filesystem into root, as a container
// runtime does: directories and regular files with the layer's modes, owned
// by root. The image is the one hack/ociimage builds (one layer, nothing but
// directories and regular files).
func Extract(img v1.Image, root string) error {
	hs, data, err := ociimage.ReadLayer(img)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	if err := os.Chmod(root, 0o755); err != nil {
		return err
	}
	for _, h := range hs {
		p := filepath.Join(root, path.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.Mkdir(p, 0o755)
		case tar.TypeReg:
			err = os.WriteFile(p, data["/"+h.Name], 0o644)
		default:
			return fmt.Errorf("%s: entry type %c is not extracted", h.Name, h.Typeflag)
		}
		if err == nil {
			mode := os.FileMode(h.Mode & 0o777)
			if h.Mode&0o1000 != 0 {
				mode |= os.ModeSticky
			}
			err = os.Chmod(p, mode)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
