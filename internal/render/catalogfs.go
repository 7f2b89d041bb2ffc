package render

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	bsemver "github.com/blang/semver/v4"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/catalog"
	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// openedCatalog is the file-based catalog spec.catalog names, opened once
// per Resolve for TO's and spec.upgradeFrom's choices.
type openedCatalog struct {
	// fsys is a *catalog.Catalog: a catalog image cached by digest is
	// chosen from through its per-package index (built on the first render
	// from that digest); a directory, from a repository whose files change
	// with every commit, is read in one streaming pass per choice.
	fsys fs.FS
	// image is the catalog image pinned by digest; empty for a directory.
	image string
	// sigs are the trust policies' verdicts on the catalog (the cluster's,
	// then the project's); nil when no policy applies, or for a catalog
	// opened again by its pin (see openCatalog).
	sigs  []Signature
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
		var sigs []Signature
		for _, v := range r.verifiers(s.RequireSignature) {
			if pinned != "" {
				break
			}
			sig, err := verifyDir(v, RoleCatalog, "spec.catalog", s.Catalog, "", s.RequireSignature)
			if err != nil {
				root.Close()
				return nil, err
			}
			sigs = append(sigs, *sig)
		}
		return &openedCatalog{fsys: catalog.Open(root.FS(), "").Remember(r.CatalogMemo, CatalogDirKey(dir)), sigs: sigs, close: func() { root.Close() }}, nil
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
	// Under a trust policy the catalog is pinned first and verified by that
	// digest before a byte of it is pulled. A catalog opened again by its
	// pin was verified by the Resolve that pinned it.
	var sigs []Signature
	if vs := r.verifiers(s.RequireSignature); len(vs) > 0 && pinned == "" {
		o, err := r.Loader.Resolve(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("spec.catalog %s: %w", echo.Quote(s.Catalog), err)
		}
		for _, v := range vs {
			sig, err := verifyImage(ctx, v, RoleCatalog, "spec.catalog "+echo.Quote(s.Catalog), o, s.RequireSignature)
			if err != nil {
				return nil, err
			}
			sigs = append(sigs, *sig)
		}
		ref = o.Image
	}
	fsys, o, err := p.LoadCatalog(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("spec.catalog %s: %w", echo.Quote(s.Catalog), err)
	}
	return &openedCatalog{fsys: catalog.Open(fsys, bundle.CatalogIndexFile(o.Dir)).Remember(r.CatalogMemo, o.Image), image: o.Image, sigs: sigs, close: func() {}}, nil
}

// CatalogDirKey is the catalog.Memo key of a catalog directory (located by
// the render): every reader of the directory in one run shares its reads.
func CatalogDirKey(dir string) string { return "dir:" + filepath.Clean(dir) }

// checkPromised refuses a bundle a catalog chose (c; nil without a catalog)
// whose CSV is not the version the catalog promised: a catalog that maps a
// version to another version's image (or names two bundles alike) would
// otherwise render the wrong operator with exit 0.
func checkPromised(c *catalog.Choice, b *bundle.Bundle) error {
	if c == nil || b.CSV == nil {
		return nil
	}
	promised, err := bsemver.Parse(c.Version)
	if err != nil {
		return nil // the catalog's versions were parsed when it was read
	}
	got := b.CSV.Spec.Version.Version
	if got.Compare(promised) == 0 {
		return nil
	}
	return fmt.Errorf("%s: the catalog promised version %s, but the image holds %s of version %s: the catalog entry is wrong (its olm.package version or its image); fix the catalog or choose another version", chosen(c), c.Version, b.CSV.Name, got)
}
