package versions

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	mmsemver "github.com/Masterminds/semver/v3"
	bsemver "github.com/blang/semver/v4"

	"github.com/olm-cmp/olm-cmp/internal/catalog"
	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// installedBundle is what a package knows of the installed bundle: its
// bundle names (one, or every bundle of its version) and its version and
// release.
type installedBundle struct {
	names   []string
	version bsemver.Version
	release string
}

// is reports whether e is the installed bundle: named so, or of its exact
// version and release (OLM's ExactVersionRelease). A bundle of the same
// version and a higher release that upgrades from it is a successor.
func (ib installedBundle) is(e *Entry) bool {
	return slices.Contains(ib.names, e.Name) || (e.version.Equals(ib.version) && e.Release == ib.release)
}

// findInstalled reads installed as a bundle name of the package, else as
// a version (the bundles of that version, if any: a version the catalog
// no longer lists is still covered by skipRanges).
func (p *Package) findInstalled(installed string) (installedBundle, error) {
	var ib installedBundle
	if installed == "" {
		return ib, errors.New("no installed version given")
	}
	for _, c := range p.Channels {
		for _, e := range c.Entries {
			if e.Name == installed {
				return installedBundle{names: []string{e.Name}, version: e.version, release: e.Release}, nil
			}
		}
	}
	v, err := bsemver.ParseTolerant(installed)
	if err != nil {
		return ib, fmt.Errorf("installed version %s is neither a bundle of package %s nor a semantic version", echo.Quote(installed), echo.Quote(p.Name))
	}
	ib.version, ib.release = v, strings.Join(v.Build, ".")
	for _, c := range p.Channels {
		for _, e := range c.Entries {
			if e.version.Equals(v) && e.Release == ib.release && !slices.Contains(ib.names, e.Name) {
				ib.names = append(ib.names, e.Name)
			}
		}
	}
	return ib, nil
}

// upgradesFrom reports whether e upgrades from the installed bundle by one
// of its edges: replaces or skips names it, or its skipRange (blang, as OLM
// reads it) holds its version.
func (ib installedBundle) upgradesFrom(e *Entry, ranges map[string]bsemver.Range) bool {
	for _, n := range ib.names {
		if e.Replaces == n || slices.Contains(e.Skips, n) {
			return true
		}
	}
	if e.SkipRange == "" {
		return false
	}
	r, ok := ranges[e.SkipRange]
	if !ok {
		r, _ = bsemver.ParseRange(e.SkipRange) // nil when invalid: no edge, as in OLM
		ranges[e.SkipRange] = r
	}
	return r != nil && r(ib.version)
}

// allowedChannels checks the channel names asked for; none means all.
func (p *Package) allowedChannels(channels []string) (map[string]bool, error) {
	allowed := map[string]bool{}
	for _, n := range channels {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if p.Channel(n) == nil {
			return nil, fmt.Errorf("package %s has no channel %s (channels: %s)", echo.Quote(p.Name), echo.Quote(n), p.channelNames())
		}
		allowed[n] = true
	}
	if len(allowed) == 0 {
		for _, c := range p.Channels {
			allowed[c.Name] = true
		}
	}
	return allowed, nil
}

// SuccessorsOLMv1 returns the bundles OLM v1 (operator-controller's
// CatalogResolver with the SuccessorsOf filter) may upgrade the installed
// bundle to, best first: every bundle listed in an allowed channel (none
// given: all) whose version is in versionRange (a Masterminds constraint,
// as spec.version; empty: any) and that upgrades from the installed bundle
// by an edge of any channel of the package (its replaces or skips name
// the installed bundle, or its olm.skipRange holds the installed version),
// sorted as OLM sorts: deprecated bundles last, then the highest version.
//
// installed is a bundle name of the package or a version. The installed
// bundle itself, which OLM keeps among its candidates (staying is always
// allowed), is left out: no successors means stay. Each bundle appears
// once, with the edges of the first allowed channel (by name) listing it.
// The work is linear in the package's entries; skipRanges are parsed once.
// As in OLM, an edge decides, not the version: in a graph opm validate
// refuses (a replaces cycle) a successor can be an older version, which a
// caller that must only move forward filters out.
func SuccessorsOLMv1(p *Package, installed string, channels []string, versionRange string) ([]Entry, error) {
	ib, err := p.findInstalled(installed)
	if err != nil {
		return nil, err
	}
	allowed, err := p.allowedChannels(channels)
	if err != nil {
		return nil, err
	}
	var constraint *mmsemver.Constraints
	if versionRange != "" {
		if constraint, err = mmsemver.NewConstraint(versionRange); err != nil {
			return nil, fmt.Errorf("version range %s is invalid: %s", echo.Quote(versionRange), echo.Short(err.Error()))
		}
	}
	// A successor by an edge of any channel (OLM passes every channel of
	// the package to SuccessorsOf); a candidate only when an allowed
	// channel lists it.
	ranges := map[string]bsemver.Range{}
	successor := map[string]bool{}
	for i := range p.Channels {
		for j := range p.Channels[i].Entries {
			if e := &p.Channels[i].Entries[j]; ib.upgradesFrom(e, ranges) {
				successor[e.Name] = true
			}
		}
	}
	var out []Entry
	seen := map[string]bool{}
	for _, c := range p.Channels {
		if !allowed[c.Name] {
			continue
		}
		for _, e := range c.Entries {
			if seen[e.Name] || !successor[e.Name] || ib.is(&e) {
				continue
			}
			if constraint != nil && !constraint.Check(masterminds(e.version)) {
				continue
			}
			seen[e.Name] = true
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, compareBest)
	return out, nil
}

// compareBest is OLM v1's order: not deprecated first, then the highest
// version, then the highest release, then (ours, for determinism) the
// name.
func compareBest(a, b Entry) int {
	if a.Deprecated != b.Deprecated {
		if a.Deprecated {
			return 1
		}
		return -1
	}
	return compareHighest(a, b)
}

// compareHighest orders the highest version first, then the highest
// release, then by name.
func compareHighest(a, b Entry) int {
	return cmp.Or(b.version.Compare(a.version), catalog.CompareRelease(b.Release, a.Release), strings.Compare(a.Name, b.Name))
}

// NextOLMv0 returns the bundle OLM v0 (a Subscription with automatic
// approval) moves the installed bundle to in channel: one hop toward the
// channel head, to the entry of the channel that replaces or skips the
// installed bundle or whose skipRange holds its version, the highest when
// several do. false when none does (installed is the head, or off the
// channel's graph) or installed or channel is unknown. In a cycle the hop
// can lead to an older version, as OLM v0 would follow it.
func NextOLMv0(p *Package, installed, channel string) (Entry, bool) {
	c := p.Channel(channel)
	if c == nil {
		return Entry{}, false
	}
	ib, err := p.findInstalled(installed)
	if err != nil {
		return Entry{}, false
	}
	ranges := map[string]bsemver.Range{}
	var best *Entry
	for i := range c.Entries {
		e := &c.Entries[i]
		if ib.is(e) || !ib.upgradesFrom(e, ranges) {
			continue
		}
		if best == nil || compareHighest(*e, *best) < 0 {
			best = e
		}
	}
	if best == nil {
		return Entry{}, false
	}
	return *best, true
}

// masterminds converts a blang version for Masterminds' constraints, as
// internal/catalog does (OLM v1 parses versions with blang and matches
// ranges with Masterminds).
func masterminds(v bsemver.Version) *mmsemver.Version {
	pre := make([]string, len(v.Pre))
	for i, p := range v.Pre {
		pre[i] = p.String()
	}
	return mmsemver.New(v.Major, v.Minor, v.Patch, strings.Join(pre, "."), strings.Join(v.Build, "."))
}
