package render

import (
	"context"
	"fmt"
	"io/fs"
	"os"

	"github.com/olm-cmp/olm-cmp/internal/catalog"
	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// openedCatalog is the file-based catalog spec.catalog names, opened once
// per Resolve for TO's and spec.upgradeFrom's choices.
type openedCatalog struct {
	fsys fs.FS
	// image is the catalog image pinned by digest; empty for a directory.
	image string
	close func()
}

// openCatalog reads the file-based catalog spec.catalog names: a directory
// (kept inside RootDir like bundle directories, and read through an os.Root,
// so a symbolic link in it cannot reach outside) or an image pulled through
// the Loader. pinned, when not empty, is the catalog image an earlier open
// pinned (Choice.Image): it is pulled instead of spec.catalog's tag, which
// may have moved since, and costs no registry round trip.
func (r *Renderer) openCatalog(ctx context.Context, req Request, pinned string) (*openedCatalog, error) {
	s := req.Spec
	if IsDirRef(s.Catalog) {
		dir, err := localDir(req, "spec.catalog", s.Catalog, "give the directory of a file-based catalog (the one an index image's configs label names)")
		if err != nil {
			return nil, err
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			return nil, fmt.Errorf("spec.catalog %s: %w", echo.Quote(s.Catalog), err)
		}
		return &openedCatalog{fsys: root.FS(), close: func() { root.Close() }}, nil
	}
	if err := notLocal(req, "spec.catalog", s.Catalog); err != nil {
		return nil, err
	}
	p, ok := r.Loader.(catalog.Puller)
	if !ok {
		return nil, fmt.Errorf("spec.catalog %s is an image reference, but this renderer has no registry access configured", echo.Quote(s.Catalog))
	}
	ref := s.Catalog
	if pinned != "" {
		ref = pinned
	}
	fsys, o, err := p.LoadCatalog(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("spec.catalog %s: %w", echo.Quote(s.Catalog), err)
	}
	return &openedCatalog{fsys: fsys, image: o.Image, close: func() {}}, nil
}
