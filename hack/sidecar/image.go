package sidecar

import (
	"archive/tar"
	"fmt"
	"os"
	"path"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/olm-cmp/olm-cmp/hack/ociimage"
)

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
