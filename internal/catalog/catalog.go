// Package catalog chooses a bundle from a file-based catalog (FBC) as OLM v1
// does for one catalog and no installed bundle: from the catalog its caller
// opened (a directory, or an image pulled through a Puller; render's
// openCatalog), it picks the newest bundle of
// a package in the channels and version range asked for, and says which one
// it chose (Choice). Pulling images is the bundle package's loader's job.
package catalog

import (
	"context"
	"io/fs"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// Puller pulls catalog images; *bundle.ImageLoader implements it.
type Puller interface {
	// LoadCatalog pins the catalog image ref (tags move, so this asks the
	// registry every time) and returns its file-based catalog.
	LoadCatalog(ctx context.Context, ref string) (fs.FS, bundle.Origin, error)
}

// Query is what a spec asks a catalog for.
type Query struct {
	// Package is the OLM package (spec.package).
	Package string
	// Channel names channels, comma-separated (spec.channel); empty means
	// every bundle of the package.
	Channel string
	// Range is a version range (spec.version); empty means the newest.
	Range string
}

// Choice says which bundle a catalog chose for a query.
type Choice struct {
	// Ref is the catalog as the spec names it: an image reference or a directory.
	Ref string
	// Image is the catalog image pinned by digest; empty for a directory.
	Image string
	// Package, Channel and Range are the query.
	Package, Channel, Range string
	// Bundle is the image reference of the chosen bundle, as the catalog
	// gives it (OLM catalogs usually pin it by digest).
	Bundle string
	// Version is the chosen bundle's version.
	Version string
}

// String describes the choice for logs: "widget 1.2.0 (channel stable,
// version >=1.0.0 <2) from catalog quay.io/org/catalog@sha256:…:
// quay.io/org/widget-bundle@sha256:…".
func (c *Choice) String() string {
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

// FromFS chooses from the file-based catalog in fsys, read by the caller;
// ref is the catalog as the spec names it, image the catalog image pinned by
// digest (empty for a directory).
func FromFS(ctx context.Context, ref, image string, fsys fs.FS, q Query) (*Choice, error) {
	return choose(ctx, fsys, &Choice{Ref: ref, Image: image}, q)
}

func choose(ctx context.Context, fsys fs.FS, c *Choice, q Query) (*Choice, error) {
	image, version, err := Choose(ctx, fsys, q)
	if err != nil {
		return nil, err
	}
	c.Package, c.Channel, c.Range = q.Package, q.Channel, q.Range
	c.Bundle, c.Version = image, version
	return c, nil
}
