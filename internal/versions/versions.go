// Package versions answers which versions of an operator exist and which
// ones it may move to: a bundle repository's tags sorted by semantic
// version (ListTagsWith, listed by registry.Client.Tags), and a catalog package's channels, heads, upgrade
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
	// Problem is set when opm validate would refuse the channel: no head
	// (its edges form a cycle) or several, a cycle in the replaces chain
	// from its head, entries that chain does not reach and nothing skips
	// (stranded), an entry listed twice, an empty skip or a skipRange that
	// is not a range. Head is kept when there is exactly one.
	Problem string
}

// Package is one package of a catalog.
type Package struct {
	Name, DefaultChannel string
	Deprecated           bool
	// Channels are sorted by name.
	Channels []Channel
	// Problems are what opm validate would refuse in the package outside
	// its channels' graphs, which the channels alone would leave unsaid: a
	// bundle in no channel (no channel shows it), a default channel that
	// is missing or not a channel, a deprecation naming nothing.
	Problems []string
}

// ReadPackage reads package pkg from the file-based catalog in fsys (a
// *catalog.Catalog answers from its index).
func ReadPackage(ctx context.Context, fsys fs.FS, pkg string) (*Package, error) {
	c, err := catalog.ReadContents(ctx, fsys, pkg)
	if err != nil {
		if ctx.Err() != nil {
			// The reader stopped at the deadline: its cause (the caller's
			// --timeout) says which limit fired, "context deadline
			// exceeded" does not.
			return nil, fmt.Errorf("reading the catalog: %w", context.Cause(ctx))
		}
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
		if more := graphProblems(out.Head, out.Entries); len(more) > 0 {
			const refuses = "; opm validate refuses this channel"
			out.Problem = strings.Join(slices.DeleteFunc([]string{strings.TrimSuffix(out.Problem, refuses), strings.Join(more, "; ")}, func(s string) bool { return s == "" }), "; ") + refuses
		}
		slices.SortStableFunc(out.Entries, compareEntries)
		p.Channels = append(p.Channels, out)
	}
	p.Problems = packageProblems(c, inChannels)
	return p, nil
}

// maxListed is how many names a problem lists before "and N more".
const maxListed = 5

// listNames joins the first maxListed of names, each escaped and cut, and
// says how many it left out.
func listNames(names []string) string {
	shown := make([]string, 0, min(len(names), maxListed))
	for _, n := range names[:min(len(names), maxListed)] {
		shown = append(shown, echo.Short(n))
	}
	s := strings.Join(shown, ", ")
	if len(names) > maxListed {
		s += fmt.Sprintf(" and %d more", len(names)-maxListed)
	}
	return s
}

// graphProblems are the channel's problems that opm validate finds past
// its head (declcfg: an entry listed twice, an empty skip, a
// skipRange blang cannot read) and, when there is one head, a cycle in the
// replaces chain from it and entries that chain neither reaches nor any
// entry skips (stranded), as opm's model checks a channel
// (validateReplacesChain). Linear in the entries.
func graphProblems(head string, entries []Entry) []string {
	// Sets, not slice searches: every list here can hold 100,000 names.
	var problems, twice, badRange []string
	byName := make(map[string]*Entry, len(entries))
	skipped, saidTwice, saidRange := map[string]bool{}, map[string]bool{}, map[string]bool{}
	emptySkip := false
	for i := range entries {
		e := &entries[i]
		if _, ok := byName[e.Name]; ok {
			if !saidTwice[e.Name] {
				saidTwice[e.Name] = true
				twice = append(twice, e.Name)
			}
		} else {
			byName[e.Name] = e
		}
		for _, s := range e.Skips {
			skipped[s] = true
			emptySkip = emptySkip || s == ""
		}
		if e.SkipRange != "" && !saidRange[e.Name] {
			if _, err := bsemver.ParseRange(e.SkipRange); err != nil {
				saidRange[e.Name] = true
				badRange = append(badRange, e.Name)
			}
		}
	}
	if len(twice) > 0 {
		problems = append(problems, fmt.Sprintf("lists more than once: %s", listNames(twice)))
	}
	if emptySkip {
		problems = append(problems, "an entry skips an empty name")
	}
	if len(badRange) > 0 {
		problems = append(problems, fmt.Sprintf("the skipRange of %s is not a version range (OLM ignores it)", listNames(badRange)))
	}
	if head == "" {
		return problems
	}
	chain := []string{head}
	reached := map[string]bool{head: true}
	for cur := byName[head]; cur != nil && cur.Replaces != ""; cur = byName[cur.Replaces] {
		if reached[cur.Replaces] {
			cycle := append(slices.Clone(chain[slices.Index(chain, cur.Replaces):]), cur.Replaces)
			return append(problems, fmt.Sprintf("a cycle in the replaces chain from head %s (%s)", echo.Short(head), cycleText(cycle)))
		}
		reached[cur.Replaces] = true
		chain = append(chain, cur.Replaces)
	}
	var stranded []string
	for _, e := range entries {
		if !reached[e.Name] && !skipped[e.Name] {
			stranded = append(stranded, e.Name)
			reached[e.Name] = true // said once
		}
	}
	if len(stranded) > 0 {
		slices.Sort(stranded)
		problems = append(problems, fmt.Sprintf("stranded: the replaces chain from head %s does not reach %s, and no entry skips them", echo.Short(head), listNames(stranded)))
	}
	return problems
}

// cycleText is a replaces cycle, a -> b -> a, its middle left out when
// long.
func cycleText(cycle []string) string {
	if len(cycle) > maxListed {
		cycle = append(append(slices.Clone(cycle[:maxListed-1]), fmt.Sprintf("(%d more)", len(cycle)-maxListed)), cycle[len(cycle)-1])
	}
	for i := range cycle {
		cycle[i] = echo.Short(cycle[i])
	}
	return strings.Join(cycle, " -> ")
}

// packageProblems are the package's problems opm validate refuses outside
// the channel graphs (see Package.Problems); inChannels maps each bundle
// listed in a channel to those channels.
func packageProblems(c *catalog.Contents, inChannels map[string][]string) []string {
	var problems, orphans []string
	for _, b := range c.Bundles {
		if len(inChannels[b.Name]) == 0 {
			orphans = append(orphans, b.Name)
		}
	}
	if len(orphans) > 0 {
		slices.Sort(orphans)
		problems = append(problems, fmt.Sprintf("bundles in no channel (so not shown below), which OLM cannot install: %s", listNames(orphans)))
	}
	var unnamed []string
	if _, ok := c.Channels[""]; ok {
		unnamed = append(unnamed, "a channel")
	}
	for _, b := range c.Bundles {
		if b.Name == "" {
			unnamed = append(unnamed, "a bundle (version "+echo.Short(b.Version)+")")
		}
	}
	if len(unnamed) > 0 {
		problems = append(problems, fmt.Sprintf("objects with no name: %s", strings.Join(unnamed[:min(len(unnamed), maxListed)], ", ")))
	}
	switch _, ok := c.Channels[c.DefaultChannel]; {
	case len(c.Channels) == 0:
		problems = append(problems, "the package has no channels")
	case c.DefaultChannel == "":
		problems = append(problems, "the package names no default channel")
	case !ok:
		problems = append(problems, fmt.Sprintf("default channel %s is not a channel of the package", echo.Quote(c.DefaultChannel)))
	}
	var ghosts []string
	for _, ch := range slices.Sorted(maps.Keys(c.DeprecatedChannels)) {
		if _, ok := c.Channels[ch]; !ok {
			ghosts = append(ghosts, ch)
		}
	}
	if len(ghosts) > 0 {
		problems = append(problems, fmt.Sprintf("olm.deprecations names channels the package does not have: %s", listNames(ghosts)))
	}
	for i, d := range c.DeprecationProblems {
		if i == maxListed {
			problems = append(problems, fmt.Sprintf("olm.deprecations has %d more of these problems", len(c.DeprecationProblems)-maxListed))
			break
		}
		problems = append(problems, "olm.deprecations "+d) // escaped where worded
	}
	for i, p := range problems {
		problems[i] = p + "; opm validate refuses this catalog"
	}
	// Not opm's rule for a legacy bundle's build metadata, so said apart.
	var badRelease []string
	for _, b := range c.Bundles {
		if b.Release != "" && !validRelease(b.Release) {
			badRelease = append(badRelease, b.Name+" ("+b.Release+")")
		}
	}
	if len(badRelease) > 0 {
		slices.Sort(badRelease)
		problems = append(problems, fmt.Sprintf("releases OLM v1 cannot read (dot-separated identifiers of [0-9A-Za-z-], numbers without leading zeros), so it cannot order these bundles among others of their version: %s", listNames(badRelease)))
	}
	return problems
}

// validRelease reports whether OLM v1 reads release (operator-registry's
// NewRelease): dot-separated semver pre-release identifiers.
func validRelease(release string) bool {
	for _, seg := range strings.Split(release, ".") {
		if _, err := bsemver.NewPRVersion(seg); err != nil || seg == "" {
			return false
		}
	}
	return true
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
		if !named[e.Name] {
			heads = append(heads, e.Name)
			named[e.Name] = true // once, in a set: a channel can list 100,000 heads
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
