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
	lp, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	root, err := lp.ImageIndex()
	if err != nil {
		return nil, err
	}
	return root.ImageIndex(index)
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
