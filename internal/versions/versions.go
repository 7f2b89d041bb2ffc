// Package versions answers which versions of an operator exist and which
// ones it may move to: a bundle repository's tags sorted by semantic
// version (ListTags), and a catalog package's channels, heads, upgrade
// edges and deprecations (ReadPackage), with OLM v1's successor rules
// (SuccessorsOLMv1) and OLM v0's next hop (NextOLMv0) over them. It reads
// catalogs through internal/catalog (the same streaming reader and index as
// choosing) and never pulls images: the caller hands it a catalog's files.
package versions

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"

	bsemver "github.com/blang/semver/v4"

	"github.com/olm-cmp/olm-cmp/internal/catalog"
	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// Entry is one bundle of a package in one channel: its version, image and
// the edges its channel entry declares.
type Entry struct {
	Name    string
	Version string
	Image   string
	// Replaces, Skips and SkipRange are the channel entry's upgrade edges
	// (SkipRange as OLM reads olm.skipRange: a blang semver range).
	Replaces  string
	Skips     []string
	SkipRange string
	// Deprecated is set when an olm.deprecations entry names the bundle.
	Deprecated bool
	// Channels are every channel of the package listing the bundle, sorted.
	Channels []string
	// Release orders bundles of one version (the olm.package release, or a
	// legacy bundle's build metadata), as OLM v1 does.
	Release string

	version bsemver.Version
}

// SemVer is the entry's version, parsed (blang, as OLM parses versions).
func (e Entry) SemVer() bsemver.Version { return e.version }

// Channel is one olm.channel of a package.
type Channel struct {
	Name string
	// Head is the entry no other entry of the channel replaces or skips,
	// as OLM and opm compute it; "" when there is not exactly one (then
	// Problem says why: opm validate refuses such a channel).
	Head       string
	Deprecated bool
	// Entries are the channel's bundles, lowest version first.
	Entries []Entry
	// Problem is set when the channel has no head (its edges form a
	// cycle) or several.
	Problem string
}

// Package is one package of a catalog.
type Package struct {
	Name, DefaultChannel string
	Deprecated           bool
	// Channels are sorted by name.
	Channels []Channel
}

// ReadPackage reads package pkg from the file-based catalog in fsys (a
// *catalog.Catalog answers from its index).
func ReadPackage(ctx context.Context, fsys fs.FS, pkg string) (*Package, error) {
	c, err := catalog.ReadContents(ctx, fsys, pkg)
	if err != nil {
		return nil, err
	}
	return fromContents(c)
}

func fromContents(c *catalog.Contents) (*Package, error) {
	bundles := make(map[string]catalog.Bundle, len(c.Bundles))
	versions := make(map[string]bsemver.Version, len(c.Bundles))
	for _, b := range c.Bundles {
		v, err := bsemver.Parse(b.Version)
		if err != nil { // the catalog reader checked it
			return nil, fmt.Errorf("catalog: bundle %s: version %s: %s", echo.Quote(b.Name), echo.Quote(b.Version), echo.Short(err.Error()))
		}
		bundles[b.Name], versions[b.Name] = b, v
	}
	inChannels := map[string][]string{}
	names := slices.Sorted(maps.Keys(c.Channels))
	for _, ch := range names {
		for _, e := range c.Channels[ch] {
			if l := inChannels[e.Name]; len(l) == 0 || l[len(l)-1] != ch {
				inChannels[e.Name] = append(l, ch)
			}
		}
	}
	p := &Package{Name: c.Name, DefaultChannel: c.DefaultChannel, Deprecated: c.Deprecated}
	for _, ch := range names {
		out := Channel{Name: ch, Deprecated: c.DeprecatedChannels[ch]}
		for _, e := range c.Channels[ch] {
			b := bundles[e.Name]
			out.Entries = append(out.Entries, Entry{
				Name: e.Name, Version: b.Version, Image: b.Image,
				Replaces: e.Replaces, Skips: slices.Clone(e.Skips), SkipRange: e.SkipRange,
				Deprecated: b.Deprecated, Channels: inChannels[e.Name], Release: b.Release, version: versions[e.Name],
			})
		}
		out.Head, out.Problem = head(out.Entries)
		slices.SortStableFunc(out.Entries, compareEntries)
		p.Channels = append(p.Channels, out)
	}
	return p, nil
}

// compareEntries orders entries lowest version first, then release, then
// name.
func compareEntries(a, b Entry) int {
	return cmp.Or(a.version.Compare(b.version), catalog.CompareRelease(a.Release, b.Release), strings.Compare(a.Name, b.Name))
}

// head is the channel's head as opm's model computes it (Channel.Head):
// the one entry that no entry of the channel replaces or skips. skipRange
// does not count, as in opm. Entries in a cycle all have an entry naming
// them, so a channel that is one cycle has none.
func head(entries []Entry) (string, string) {
	named := map[string]bool{}
	for _, e := range entries {
		if e.Replaces != "" {
			named[e.Replaces] = true
		}
		for _, s := range e.Skips {
			named[s] = true
		}
	}
	var heads []string
	for _, e := range entries {
		if !named[e.Name] && !slices.Contains(heads, e.Name) {
			heads = append(heads, e.Name)
		}
	}
	switch len(heads) {
	case 1:
		return heads[0], ""
	case 0:
		if len(entries) == 0 {
			return "", "the channel has no entries"
		}
		return "", "no head: every entry is replaced or skipped by another (a cycle); opm validate refuses this channel"
	}
	slices.Sort(heads)
	shown := heads
	more := ""
	if len(shown) > 5 {
		shown, more = shown[:5], fmt.Sprintf(" and %d more", len(heads)-5)
	}
	return "", fmt.Sprintf("%d heads (%s%s): no entry replaces or skips them; opm validate refuses this channel", len(heads), echo.Short(strings.Join(shown, ", ")), more)
}

// Channel returns the channel named name, or nil.
func (p *Package) Channel(name string) *Channel {
	for i := range p.Channels {
		if p.Channels[i].Name == name {
			return &p.Channels[i]
		}
	}
	return nil
}

// channelNames lists the package's channels for messages.
func (p *Package) channelNames() string {
	var names []string
	for _, c := range p.Channels {
		names = append(names, c.Name)
	}
	return echo.Short(strings.Join(names, ", "))
}
