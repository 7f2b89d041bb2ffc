package catalog

import (
	"fmt"
	"io/fs"
	"slices"

	bsemver "github.com/blang/semver/v4"
)

// Entry is one olm.channel entry: a bundle and the bundles it upgrades from.
type Entry struct {
	Name      string
	Replaces  string
	Skips     []string
	SkipRange string // blang semver range, as OLM reads olm.skipRange
}

// Graph is the upgrade graph of one package of a file-based catalog, in the
// channels asked for.
type Graph struct {
	// Channels maps each channel to its entries, in file order.
	Channels map[string][]Entry
	// Versions maps bundle names to their olm.package versions.
	Versions map[string]bsemver.Version
}

// ReadGraph reads the upgrade graph of pkg from the catalog in fsys, in the
// channels named by channel (comma-separated; empty means every channel).
func ReadGraph(fsys fs.FS, pkg, channel string) (*Graph, error) {
	cat, err := readCatalog(fsys, pkg)
	if err != nil {
		return nil, err
	}
	if !cat.found {
		return nil, fmt.Errorf("catalog: package %q not found", pkg)
	}
	names, err := cat.namedChannels(pkg, channel)
	if err != nil {
		return nil, err
	}
	g := &Graph{Channels: map[string][]Entry{}, Versions: map[string]bsemver.Version{}}
	for _, b := range cat.bundles {
		g.Versions[b.name] = b.version
	}
	if channel == "" {
		g.Channels = cat.channels
	}
	for _, n := range names {
		g.Channels[n] = cat.channels[n]
	}
	return g, nil
}

// Named returns the bundles of version v, sorted.
func (g *Graph) Named(v bsemver.Version) []string {
	var names []string
	for n, bv := range g.Versions {
		if bv.Equals(v) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// Reaches reports whether OLM can upgrade from the bundle from to the bundle
// to, one channel at a time, through the edges it follows: an entry upgrades
// from the bundle it replaces, the bundles it skips, and every bundle whose
// version its skipRange includes.
func (g *Graph) Reaches(from, to string) bool {
	for _, entries := range g.Channels {
		if g.reachesIn(entries, from, to) {
			return true
		}
	}
	return false
}

// reachesIn searches one channel's entries breadth first.
func (g *Graph) reachesIn(entries []Entry, from, to string) bool {
	seen := map[string]bool{from: true}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == to {
			return true
		}
		for _, e := range entries {
			if !seen[e.Name] && g.upgradesFrom(e, cur) {
				seen[e.Name] = true
				queue = append(queue, e.Name)
			}
		}
	}
	return false
}

// upgradesFrom reports whether entry e is an upgrade of the bundle name.
func (g *Graph) upgradesFrom(e Entry, name string) bool {
	if e.Replaces == name || slices.Contains(e.Skips, name) {
		return true
	}
	v, ok := g.Versions[name]
	if !ok || e.SkipRange == "" {
		return false
	}
	r, err := bsemver.ParseRange(e.SkipRange)
	return err == nil && r(v)
}
