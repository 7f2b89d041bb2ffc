package catalog

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	mmsemver "github.com/Masterminds/semver/v3"
	bsemver "github.com/blang/semver/v4"
)

type fbcBundle struct {
	name, image, versionStr, release string
	// version orders bundles; constrained is the same version for
	// Masterminds constraints (OLM v1 parses with blang and matches ranges
	// with Masterminds), converted once, when the catalog is read.
	version     bsemver.Version
	constrained *mmsemver.Version
	properties  []string // property types
	where       string   // the object's file and document, for errors
}

// fbcPackage is one package of a catalog: everything choosing and the
// upgrade graph read, gathered from the package's objects (object).
type fbcPackage struct {
	name       string
	found      bool
	declared   []string // where each olm.package blob of the name is
	bundles    []fbcBundle
	channels   map[string][]Entry // channel → its entries, in file order
	channelAt  map[string]string  // channel → where it is declared
	deprecated map[string]bool    // bundle names
	items      int
	// err is the first object of the package that could not be read; it
	// fails a choice from this package only.
	err error
}

func newPackage(name string) *fbcPackage {
	return &fbcPackage{name: name, channels: map[string][]Entry{}, channelAt: map[string]string{}, deprecated: map[string]bool{}}
}

// add takes one object of the package.
func (c *fbcPackage) add(o *object) {
	if c.err != nil {
		return
	}
	if err := c.addObject(o); err != nil {
		c.err = fmt.Errorf("%s: %w", o.where(), err)
	}
}

func (c *fbcPackage) addObject(o *object) error {
	if o.Err != "" {
		return fmt.Errorf("%s", o.Err)
	}
	if c.items += 1 + len(o.Entries) + len(o.Types); c.items > maxPackageItems {
		return fmt.Errorf("package %q has over %d bundles, properties and channel entries: not a catalog olm-cmp reads", c.name, maxPackageItems)
	}
	switch o.Schema {
	case "olm.package":
		c.found = true
		c.declared = append(c.declared, o.at())
	case "olm.channel":
		if at, ok := c.channelAt[o.Name]; ok {
			return fmt.Errorf("package %q declares channel %q twice (first at %s); opm validate refuses this catalog: merge the two olm.channel objects", c.name, o.Name, at)
		}
		c.channelAt[o.Name] = o.at()
		entries := []Entry{}
		for _, e := range o.Entries {
			entries = append(entries, Entry{Name: e.Name, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange})
		}
		c.channels[o.Name] = entries
	case "olm.deprecations":
		for _, e := range o.Entries {
			if e.Reference != nil && e.Reference.Schema == "olm.bundle" {
				c.deprecated[e.Reference.Name] = true
			}
		}
	case "olm.bundle":
		b := fbcBundle{name: o.Name, image: o.Image, properties: o.Types, where: o.at()}
		switch len(o.Versions) {
		case 0:
			return fmt.Errorf("bundle %q has no olm.package property with its version", o.Name)
		case 1:
		default:
			return fmt.Errorf("bundle %q has %d olm.package properties; opm validate refuses this catalog: a bundle has exactly one", o.Name, len(o.Versions))
		}
		v := o.Versions[0]
		if v.PackageName != "" && v.PackageName != o.Package {
			return fmt.Errorf("bundle %q of package %q has an olm.package property naming package %q; opm validate refuses this catalog: make them equal", o.Name, o.Package, v.PackageName)
		}
		ver, err := bsemver.Parse(v.Version)
		if err != nil {
			return fmt.Errorf("bundle %q: olm.package version %q: %w", o.Name, v.Version, err)
		}
		b.version, b.versionStr, b.constrained = ver, v.Version, masterminds(ver)
		if v.Release != nil {
			b.release = *v.Release
		} else {
			b.release = strings.Join(ver.Build, ".") // legacy registry+v1: release in build metadata
		}
		c.bundles = append(c.bundles, b)
	}
	return nil
}

// validate checks the package as `opm validate` does, as far as choosing
// depends on it: one olm.package, bundle names unique, every channel entry
// a bundle of the package. A catalog breaking these could make olm-cmp
// render another bundle than the one its version promises.
func (c *fbcPackage) validate() error {
	if c.err != nil {
		return c.err
	}
	if len(c.declared) > 1 {
		return fmt.Errorf("catalog: package %q is declared %d times (olm.package at %s); opm validate refuses this catalog: keep one", c.name, len(c.declared), strings.Join(c.declared, " and "))
	}
	byName := make(map[string]*fbcBundle, len(c.bundles))
	for i := range c.bundles {
		b := &c.bundles[i]
		if first, ok := byName[b.name]; ok {
			return fmt.Errorf("catalog: package %q has two bundles named %q (version %s at %s, version %s at %s); opm validate refuses this catalog: give each bundle its own name", c.name, b.name, first.versionStr, first.where, b.versionStr, b.where)
		}
		byName[b.name] = b
	}
	for _, ch := range slices.Sorted(maps.Keys(c.channels)) {
		for _, e := range c.channels[ch] {
			if _, ok := byName[e.Name]; !ok {
				return fmt.Errorf("catalog: package %q channel %q lists bundle %q, which the package does not have (channel at %s); opm validate refuses this catalog: add the olm.bundle or remove the entry", c.name, ch, e.Name, c.channelAt[ch])
			}
		}
	}
	return nil
}
