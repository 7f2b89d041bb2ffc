package render

import (
	"context"
	"fmt"
	"io/fs"
	"os"

	"github.com/olm-cmp/olm-cmp/internal/catalog"
)

// openCatalog reads the file-based catalog spec.catalog names: a directory
// (kept inside RootDir like bundle directories, and read through an os.Root,
// so a symbolic link in it cannot reach outside) or an image pulled through
// the Loader. image is the catalog image pinned by digest (empty for a
// directory); done releases the directory.
func (r *Renderer) openCatalog(ctx context.Context, req Request) (fsys fs.FS, image string, done func(), err error) {
	s := req.Spec
	if IsDirRef(s.Catalog) {
		dir, err := localDir(req, "spec.catalog", s.Catalog, "give the directory of a file-based catalog (the one an index image's configs label names)")
		if err != nil {
			return nil, "", nil, err
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			return nil, "", nil, fmt.Errorf("spec.catalog %q: %w", s.Catalog, err)
		}
		return root.FS(), "", func() { root.Close() }, nil
	}
	p, ok := r.Loader.(catalog.Puller)
	if !ok {
		return nil, "", nil, fmt.Errorf("spec.catalog %q is an image reference, but this renderer has no registry access configured", s.Catalog)
	}
	fsys, o, err := p.LoadCatalog(ctx, s.Catalog)
	if err != nil {
		return nil, "", nil, fmt.Errorf("spec.catalog %q: %w", s.Catalog, err)
	}
	return fsys, o.Image, func() {}, nil
}
