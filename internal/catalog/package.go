package catalog

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/echo"

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
	// defaultChannel, packageDeprecated and deprecatedChannels are read
	// for internal/versions (Contents); choosing does not use them.
	defaultChannel     string
	packageDeprecated  bool
	deprecatedChannels map[string]bool
	items              int
	kept               int // bytes of the strings kept (object.size)
	// err is the first object of the package that could not be read; it
	// fails a choice from this package only.
	err error
}

func newPackage(name string) *fbcPackage {
	return &fbcPackage{name: name, channels: map[string][]Entry{}, channelAt: map[string]string{}, deprecated: map[string]bool{}, deprecatedChannels: map[string]bool{}}
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
		return fmt.Errorf("package %s has over %d bundles, properties and channel entries: not a catalog olm-cmp reads", echo.Quote(c.name), maxPackageItems)
	}
	if c.kept += o.size(); c.kept > maxPackageBytes {
		return fmt.Errorf("package %s keeps over %d MiB of names, images and channel entries: not a catalog olm-cmp reads", echo.Quote(c.name), maxPackageBytes>>20)
	}
	switch o.Schema {
	case "olm.package":
		c.found = true
		c.declared = append(c.declared, o.at())
		c.defaultChannel = o.Default
	case "olm.channel":
		if at, ok := c.channelAt[o.Name]; ok {
			return fmt.Errorf("package %s declares channel %s twice (first at %s); opm validate refuses this catalog: merge the two olm.channel objects", echo.Quote(c.name), echo.Quote(o.Name), at)
		}
		c.channelAt[o.Name] = o.at()
		entries := []Entry{}
		for _, e := range o.Entries {
			entries = append(entries, Entry{Name: e.Name, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange})
		}
		c.channels[o.Name] = entries
	case "olm.deprecations":
		for _, e := range o.Entries {
			if e.Reference == nil {
				continue
			}
			switch e.Reference.Schema {
			case "olm.bundle":
				c.deprecated[e.Reference.Name] = true
			case "olm.channel":
				c.deprecatedChannels[e.Reference.Name] = true
			case "olm.package":
				c.packageDeprecated = true
			}
		}
	case "olm.bundle":
		b := fbcBundle{name: o.Name, image: o.Image, properties: o.Types, where: o.at()}
		switch len(o.Versions) {
		case 0:
			return fmt.Errorf("bundle %s has no olm.package property with its version", echo.Quote(o.Name))
		case 1:
		default:
			return fmt.Errorf("bundle %s has %d olm.package properties; opm validate refuses this catalog: a bundle has exactly one", echo.Quote(o.Name), len(o.Versions))
		}
		v := o.Versions[0]
		if v.PackageName != "" && v.PackageName != o.Package {
			return fmt.Errorf("bundle %s of package %s has an olm.package property naming package %s; opm validate refuses this catalog: make them equal", echo.Quote(o.Name), echo.Quote(o.Package), echo.Quote(v.PackageName))
		}
		ver, err := bsemver.Parse(v.Version)
		if err != nil {
			return fmt.Errorf("bundle %s: olm.package version %s: %s", echo.Quote(o.Name), echo.Quote(v.Version), echo.Short(err.Error()))
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
		return fmt.Errorf("catalog: package %s is declared %d times (olm.package at %s); opm validate refuses this catalog: keep one", echo.Quote(c.name), len(c.declared), listed(c.declared, " and "))
	}
	byName := make(map[string]*fbcBundle, len(c.bundles))
	for i := range c.bundles {
		b := &c.bundles[i]
		if first, ok := byName[b.name]; ok {
			return fmt.Errorf("catalog: package %s has two bundles named %s (version %s at %s, version %s at %s); opm validate refuses this catalog: give each bundle its own name", echo.Quote(c.name), echo.Quote(b.name), first.versionStr, first.where, b.versionStr, b.where)
		}
		byName[b.name] = b
	}
	for _, ch := range slices.Sorted(maps.Keys(c.channels)) {
		for _, e := range c.channels[ch] {
			if _, ok := byName[e.Name]; !ok {
				return fmt.Errorf("catalog: package %s channel %s lists bundle %s, which the package does not have (channel at %s); opm validate refuses this catalog: add the olm.bundle or remove the entry", echo.Quote(c.name), echo.Quote(ch), echo.Quote(e.Name), c.channelAt[ch])
			}
		}
	}
	return nil
}

// listed joins the first few of items (each already escaped and short:
// object.at) with sep, and says how many it left out: a catalog can repeat
// an object thousands of times.
func listed(items []string, sep string) string {
	const shown = 3
	if len(items) <= shown {
		return strings.Join(items, sep)
	}
	return fmt.Sprintf("%s%s%d more", strings.Join(items[:shown], sep), sep, len(items)-shown)
}
