package ociimage

import (
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Push pushes the layout Build wrote to image (a tag or repository
// reference): the index under that tag, then its referrers (the SBOM) by
// digest. It returns the index digest, the reference to deploy by.
func Push(dir, image string, opts ...remote.Option) (v1.Hash, error) {
	ref, err := name.ParseReference(image)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("IMAGE %q: %w", image, err)
	}
	lp, err := layout.FromPath(dir)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("%s: not an OCI image layout (make image writes one): %w", dir, err)
	}
	root, err := lp.ImageIndex()
	if err != nil {
		return v1.Hash{}, err
	}
	im, err := root.IndexManifest()
	if err != nil {
		return v1.Hash{}, err
	}
	var index *v1.Hash
	var referrers []v1.Hash
	for _, d := range im.Manifests {
		switch {
		case d.Annotations[RefNameAnnotation] != "" && d.MediaType.IsIndex():
			if index != nil {
				return v1.Hash{}, fmt.Errorf("%s: more than one image index", dir)
			}
			h := d.Digest
			index = &h
		case d.MediaType.IsImage():
			referrers = append(referrers, d.Digest)
		}
	}
	if index == nil {
		return v1.Hash{}, fmt.Errorf("%s: no image index named by %s", dir, RefNameAnnotation)
	}
	ii, err := lp.ImageIndex()
	if err != nil {
		return v1.Hash{}, err
	}
	idx, err := ii.ImageIndex(*index)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := remote.WriteIndex(ref, idx, opts...); err != nil {
		return v1.Hash{}, err
	}
	for _, h := range referrers {
		img, err := ii.Image(h)
		if err != nil {
			return v1.Hash{}, err
		}
		if err := remote.Write(ref.Context().Digest(h.String()), img, opts...); err != nil {
			return v1.Hash{}, err
		}
	}
	return *index, nil
}
