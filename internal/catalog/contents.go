package catalog

import (
	"context"
	"errors"
	"io/fs"
	"maps"
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
	for _, b := range p.bundles {
		c.Bundles = append(c.Bundles, Bundle{Name: b.name, Image: b.image, Version: b.versionStr, Release: b.release, Deprecated: p.deprecated[b.name]})
	}
	return c, nil
}
