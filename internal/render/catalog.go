package render

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// CatalogLoader is the optional part of a Loader that pulls catalog images;
// *bundle.ImageLoader implements it. Catalog directories need no loader.
type CatalogLoader interface {
	// LoadCatalog pins the catalog image ref (tags move, so this asks the
	// registry every time) and returns its file-based catalog.
	LoadCatalog(ctx context.Context, ref string) (fs.FS, bundle.Origin, error)
}

// Catalog says which bundle a spec that names a catalog resolved to.
type Catalog struct {
	// Ref is spec.catalog as written: an image reference or a directory.
	Ref string
	// Image is the catalog image pinned by digest; empty for a directory.
	Image string
	// Package, Channel and Range are what the spec asked for (spec.package,
	// spec.channel, spec.version).
	Package, Channel, Range string
	// Bundle is the image reference of the chosen bundle, as the catalog
	// gives it (OLM catalogs usually pin it by digest).
	Bundle string
	// Version is the chosen bundle's version.
	Version string
}

// String describes the choice for logs: "widget 1.2.0 (stable, >=1.0.0 <2) from
// quay.io/org/catalog@sha256:…: quay.io/org/widget-bundle@sha256:…".
func (c *Catalog) String() string {
	var asked []string
	if c.Channel != "" {
		asked = append(asked, "channel "+c.Channel)
	}
	if c.Range != "" {
		asked = append(asked, "version "+c.Range)
	}
	from := c.Ref
	if c.Image != "" {
		from = c.Image
	}
	s := c.Package + " " + c.Version
	if len(asked) > 0 {
		s += " (" + strings.Join(asked, ", ") + ")"
	}
	return s + " from catalog " + from + ": " + c.Bundle
}

// matches reports whether c was resolved for what req asks.
func (c *Catalog) matches(req Request) bool {
	s := req.Spec
	return c.Ref == s.Catalog && c.Package == s.Package && c.Channel == s.Channel && c.Range == s.Version
}

type catalogPinKey struct{}

// WithCatalog returns ctx carrying a resolution ChooseBundle made earlier
// for the same request; ChooseBundle then returns it instead of reading the
// catalog again. A caching layer that keys a render on the bundle a catalog
// chose uses it so the render is of that very bundle, even if the catalog's
// tag moves in between (and the catalog is read once per request).
func WithCatalog(ctx context.Context, c *Catalog) context.Context {
	return context.WithValue(ctx, catalogPinKey{}, c)
}

// ChooseBundle resolves a spec that names a catalog to the bundle image OLM v1
// would install: it reads the catalog (a directory, kept inside RootDir like
// bundle directories, or an image through l, which must then implement
// CatalogLoader) and picks the newest bundle of spec.package in
// spec.channel matching the spec.version range. It returns nil for a spec
// without a catalog. The spec is expected to be valid (Validate).
func ChooseBundle(ctx context.Context, l Loader, req Request) (*Catalog, error) {
	s := req.Spec
	if s.Catalog == "" {
		return nil, nil
	}
	if c, ok := ctx.Value(catalogPinKey{}).(*Catalog); ok && c != nil && c.matches(req) {
		return c, nil
	}
	c := &Catalog{Ref: s.Catalog, Package: s.Package, Channel: s.Channel, Range: s.Version}
	var fsys fs.FS
	if IsDirRef(s.Catalog) {
		dir, err := localDir(req, "spec.catalog", s.Catalog, "give the directory of a file-based catalog (the one an index image's configs label names)")
		if err != nil {
			return nil, err
		}
		// Through an os.Root: a symlink in the repository's catalog cannot
		// make the server read files outside it.
		root, err := os.OpenRoot(dir)
		if err != nil {
			return nil, fmt.Errorf("spec.catalog %q: %w", s.Catalog, err)
		}
		defer root.Close()
		fsys = root.FS()
	} else {
		cl, ok := l.(CatalogLoader)
		if !ok {
			return nil, fmt.Errorf("spec.catalog %q is an image reference, but this renderer has no registry access configured", s.Catalog)
		}
		if strings.ContainsAny(s.Catalog, " \t\n") {
			return nil, fmt.Errorf("spec.catalog %q: not an image reference (contains white space)", s.Catalog)
		}
		f, o, err := cl.LoadCatalog(ctx, s.Catalog)
		if err != nil {
			return nil, fmt.Errorf("spec.catalog %q: %w", s.Catalog, err)
		}
		fsys, c.Image = f, o.Image
	}
	image, version, err := bundle.ResolveCatalog(fsys, s.Package, s.Version, s.Channel)
	if err != nil {
		return nil, fmt.Errorf("spec.catalog %q: %w", s.Catalog, err)
	}
	// The catalog is data from wherever it was published: its bundle must be
	// an image, never a path (a loader would read a directory of this server).
	if IsDirRef(image) || strings.ContainsAny(image, " \t\n") {
		return nil, fmt.Errorf("spec.catalog %q: package %q version %s has image %q, which is not an image reference", s.Catalog, s.Package, version, image)
	}
	c.Bundle, c.Version = image, version
	return c, nil
}
