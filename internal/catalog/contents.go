package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"

	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// Bundle is one olm.bundle of a package, as Contents gives it.
type Bundle struct {
	Name, Image string
	// Version is the olm.package property's version, as the catalog
	// writes it (it parses as semver: the reader checked).
	Version string
	// Release orders bundles of one version (the olm.package release, or
	// a legacy bundle's build metadata): CompareRelease.
	Release    string
	Deprecated bool
}

// CompareRelease orders two releases as choosing does (numeric segments
// numerically; no release lowest).
func CompareRelease(a, b string) int { return compareRelease(a, b) }

// Contents is one package of a catalog as the reader kept it, checked as
// opm validate would (fbcPackage.validate): what internal/versions shows
// and computes successors from, read through the same streaming pass and
// index as choosing.
type Contents struct {
	Name, DefaultChannel string
	// Deprecated is set when an olm.deprecations entry names the package.
	Deprecated bool
	// Bundles are the package's bundles, in catalog order.
	Bundles []Bundle
	// Channels maps each channel to its entries, in catalog order.
	Channels map[string][]Entry
	// DeprecatedChannels holds the channels an olm.deprecations entry names.
	DeprecatedChannels map[string]bool
	// DeprecationProblems are what opm validate refuses in the package's
	// olm.deprecations, each a phrase following "olm.deprecations"
	// ("names bundle "x", which the package does not have"), escaped, in
	// catalog order: an entry naming a bundle the package does not have,
	// with no reference, an unknown schema or a repeated reference, and a
	// second olm.deprecations object. (Channels it names that the package
	// does not have are in DeprecatedChannels.)
	DeprecationProblems []string
}

// ReadContents reads package pkg of the catalog in fsys (a *Catalog uses
// its index).
func ReadContents(ctx context.Context, fsys fs.FS, pkg string) (*Contents, error) {
	if pkg == "" {
		return nil, errors.New("catalog: no package name given")
	}
	p, err := Open(fsys, "").read(ctx, pkg)
	if err != nil {
		return nil, err
	}
	c := &Contents{
		Name: pkg, DefaultChannel: p.defaultChannel, Deprecated: p.packageDeprecated,
		Channels: maps.Clone(p.channels), DeprecatedChannels: maps.Clone(p.deprecatedChannels),
	}
	have := map[string]bool{}
	for _, b := range p.bundles {
		have[b.name] = true
		c.Bundles = append(c.Bundles, Bundle{Name: b.name, Image: b.image, Version: b.versionStr, Release: b.release, Deprecated: p.deprecated[b.name]})
	}
	if n := len(p.deprecationsAt); n > 1 {
		c.DeprecationProblems = append(c.DeprecationProblems, fmt.Sprintf("is declared %d times (at %s): a package has one", n, listed(p.deprecationsAt, " and ")))
	}
	var ghosts []string
	for name := range p.deprecated {
		if !have[name] {
			ghosts = append(ghosts, name)
		}
	}
	slices.Sort(ghosts)
	for _, name := range ghosts {
		c.DeprecationProblems = append(c.DeprecationProblems, fmt.Sprintf("names bundle %s, which the package does not have", echo.Quote(name)))
	}
	c.DeprecationProblems = append(c.DeprecationProblems, p.badDeprecations...)
	return c, nil
}
