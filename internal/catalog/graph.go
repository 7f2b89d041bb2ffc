package catalog

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

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

	mu    sync.Mutex
	built map[string]*channelGraph // by channel, built on first search
}

// ReadGraph reads the upgrade graph of pkg from the catalog in fsys, in the
// channels named by channel (comma-separated; empty means every channel).
// fsys may be a *Catalog (Open), whose index answers without reading the
// whole catalog.
func ReadGraph(ctx context.Context, fsys fs.FS, pkg, channel string) (*Graph, error) {
	cat, err := Open(fsys, "").read(ctx, pkg)
	if err != nil {
		return nil, err
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
		g.Channels = maps.Clone(cat.channels) // the package may be shared (Memo)
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
	ok, _ := g.ReachesContext(context.Background(), from, to)
	return ok
}

// ReachesContext is Reaches, stopped when ctx ends. Each channel's graph is
// built once (its skipRanges parsed once) and searched in time linear in
// its entries and edges, so a 12,000-bundle replaces chain takes
// milliseconds.
func (g *Graph) ReachesContext(ctx context.Context, from, to string) (bool, error) {
	for _, ch := range slices.Sorted(func(yield func(string) bool) {
		for c := range g.Channels {
			if !yield(c) {
				return
			}
		}
	}) {
		ok, err := g.channel(ch).reaches(ctx, g.Versions, from, to)
		if ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// Successors returns the bundles that upgrade from the bundle from in one
// step, in any of the graph's channels: an entry whose replaces or skips
// name it, or whose skipRange includes its version. Sorted by version,
// highest first, then by name; each once. It is what a user can move to
// from from, the advice when the bundle they asked for is not reachable.
// Linear in the entries; stopped when ctx ends.
func (g *Graph) Successors(ctx context.Context, from string) ([]string, error) {
	fv, known := g.Versions[from]
	seen := map[string]bool{}
	for _, ch := range slices.Sorted(maps.Keys(g.Channels)) {
		cg := g.channel(ch)
		for i, e := range cg.entries {
			if i&1023 == 1023 {
				if err := ctx.Err(); err != nil {
					return nil, fmt.Errorf("searching the upgrade graph: %w", err)
				}
			}
			sr := cg.ranges[i]
			if e.Name != from && (e.Replaces == from || slices.Contains(e.Skips, from) || (sr != nil && known && sr.match(fv))) {
				seen[e.Name] = true
			}
		}
	}
	out := slices.Collect(maps.Keys(seen))
	slices.SortFunc(out, func(a, b string) int {
		if c := g.Versions[b].Compare(g.Versions[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return out, nil
}

func (g *Graph) channel(name string) *channelGraph {
	g.mu.Lock()
	defer g.mu.Unlock()
	if cg, ok := g.built[name]; ok {
		return cg
	}
	if g.built == nil {
		g.built = map[string]*channelGraph{}
	}
	cg := newChannelGraph(g.Channels[name], g.Versions)
	g.built[name] = cg
	return cg
}

// channelGraph is one channel's entries, ready to search backwards: from an
// entry to the bundles it upgrades from.
type channelGraph struct {
	entries []Entry
	index   map[string]int // entry name → its first position
	// byVersion holds the positions of the entries with a known version,
	// in version order; rank is each such entry's place in it.
	byVersion []int
	rank      []int
	ranges    []*skipRange // per entry; nil without a valid skipRange
}

type skipRange struct {
	match bsemver.Range
	// spans are version intervals (in byVersion's order) that hold every
	// version match accepts; nil means any version may match.
	spans []interval
}

type interval struct {
	lo, hi     *bsemver.Version // nil: unbounded
	loIn, hiIn bool
}

func newChannelGraph(entries []Entry, versions map[string]bsemver.Version) *channelGraph {
	cg := &channelGraph{entries: entries, index: make(map[string]int, len(entries)), rank: make([]int, len(entries)), ranges: make([]*skipRange, len(entries))}
	for i, e := range entries {
		if _, ok := cg.index[e.Name]; !ok {
			cg.index[e.Name] = i
		}
		cg.rank[i] = -1
		if _, ok := versions[e.Name]; ok {
			cg.byVersion = append(cg.byVersion, i)
		}
		if e.SkipRange != "" {
			if r, err := bsemver.ParseRange(e.SkipRange); err == nil {
				cg.ranges[i] = &skipRange{match: r, spans: parseSpans(e.SkipRange)}
			}
		}
	}
	slices.SortStableFunc(cg.byVersion, func(a, b int) int {
		return versions[entries[a].Name].Compare(versions[entries[b].Name])
	})
	for r, i := range cg.byVersion {
		cg.rank[i] = r
	}
	return cg
}

// reaches searches backwards from to: each entry is visited once, and a
// skipRange's candidates are found by binary search over the entries in
// version order, skipping those already visited (next), so the search is
// linear in entries and edges.
func (cg *channelGraph) reaches(ctx context.Context, versions map[string]bsemver.Version, from, to string) (bool, error) {
	if from == to {
		return true, nil
	}
	start, ok := cg.index[to]
	if !ok {
		return false, nil
	}
	fromVersion, fromKnown := versions[from]
	n := len(cg.entries)
	seen := make([]bool, n)
	// next[r] is the first rank at or after r whose entry is not yet
	// visited (path-compressed), so ranges skip visited entries.
	next := make([]int, len(cg.byVersion)+1)
	for i := range next {
		next[i] = i
	}
	var find func(r int) int
	find = func(r int) int {
		for next[r] != r {
			next[r] = next[next[r]]
			r = next[r]
		}
		return r
	}
	queue := []int{start}
	visit := func(i int) {
		if !seen[i] {
			seen[i] = true
			if r := cg.rank[i]; r >= 0 {
				next[r] = r + 1
			}
			queue = append(queue, i)
		}
	}
	seen[start] = true
	if r := cg.rank[start]; r >= 0 {
		next[r] = r + 1
	}
	checks := 0
	for steps := 0; len(queue) > 0; steps++ {
		if steps&1023 == 1023 {
			if err := ctx.Err(); err != nil {
				return false, fmt.Errorf("searching the upgrade graph: %w", err)
			}
		}
		pos := queue[0]
		queue = queue[1:]
		cur, sr := cg.entries[pos], cg.ranges[pos]
		// Does cur upgrade from the bundle we look for?
		if cur.Replaces == from || slices.Contains(cur.Skips, from) || (sr != nil && fromKnown && sr.match(fromVersion)) {
			return true, nil
		}
		// Otherwise, every entry cur upgrades from is one step closer.
		for _, name := range append([]string{cur.Replaces}, cur.Skips...) {
			if i, ok := cg.index[name]; ok && name != "" {
				visit(i)
			}
		}
		if sr != nil {
			for _, sp := range sr.candidates(cg, versions) {
				for r := find(sp[0]); r < sp[1]; r = find(r + 1) {
					// Entries a range holds in its intervals but excludes
					// (!=) stay unvisited and are checked again on each
					// visit: the context is checked by range checks too.
					if checks++; checks&1023 == 1023 {
						if err := ctx.Err(); err != nil {
							return false, fmt.Errorf("searching the upgrade graph: %w", err)
						}
					}
					i := cg.byVersion[r]
					if sr.match(versions[cg.entries[i].Name]) {
						visit(i)
					}
				}
			}
		}
	}
	return false, nil
}

// candidates returns the rank spans [lo, hi) of entries whose versions
// may match the range.
func (sr *skipRange) candidates(cg *channelGraph, versions map[string]bsemver.Version) [][2]int {
	n := len(cg.byVersion)
	if sr.spans == nil {
		return [][2]int{{0, n}}
	}
	at := func(r int) bsemver.Version { return versions[cg.entries[cg.byVersion[r]].Name] }
	var out [][2]int
	for _, iv := range sr.spans {
		lo, hi := 0, n
		if iv.lo != nil {
			lo = searchRank(n, func(r int) bool {
				c := at(r).Compare(*iv.lo)
				return c > 0 || (c == 0 && iv.loIn)
			})
		}
		if iv.hi != nil {
			hi = searchRank(n, func(r int) bool {
				c := at(r).Compare(*iv.hi)
				return c > 0 || (c == 0 && !iv.hiIn)
			})
		}
		if lo < hi {
			out = append(out, [2]int{lo, hi})
		}
	}
	return out
}

// searchRank is the first rank in [0, n) for which ok holds (ok is false
// then true along the ranks), or n.
func searchRank(n int, ok func(int) bool) int {
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ok(m) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// parseSpans reads a blang range ("a b || c") into the intervals that hold
// every version it accepts, read as blang reads it (rangeParts: a space
// after an operator, wildcards such as 1.2.x); nil (any version) only when
// it cannot. A range read as any version makes every visit of its entry
// scan all the entries not yet visited, which is quadratic over a channel.
func parseSpans(s string) []interval {
	ors, ok := rangeParts(s)
	if !ok {
		return nil
	}
	var out []interval
	for _, part := range ors {
		iv := interval{}
		for _, c := range part {
			v, err := bsemver.Parse(c.version)
			if err != nil {
				return nil
			}
			switch c.op {
			case ">=", ">":
				if iv.lo == nil || v.Compare(*iv.lo) > 0 || (v.Equals(*iv.lo) && c.op == ">") {
					iv.lo, iv.loIn = &v, c.op == ">="
				}
			case "<=", "<":
				if iv.hi == nil || v.Compare(*iv.hi) < 0 || (v.Equals(*iv.hi) && c.op == "<") {
					iv.hi, iv.hiIn = &v, c.op == "<="
				}
			case "", "=", "==":
				iv.lo, iv.hi, iv.loIn, iv.hiIn = &v, &v, true, true
			case "!=", "!":
				// Excludes versions: the interval still holds all others.
			default:
				return nil
			}
		}
		out = append(out, iv)
	}
	return out
}

// comparison is one operator and version of a range.
type comparison struct{ op, version string }

// rangeParts splits a blang range into its || alternatives, each a list of
// comparisons that must all hold, as blang's ParseRange does before it
// builds its functions (github.com/blang/semver/v4 range.go, MIT licence:
// splitAndTrim, splitORParts, expandWildcardVersion): a space after an
// operator belongs to it, and an x in a version is a wildcard, expanded to
// the comparisons it stands for. ok is false for what blang would refuse.
func rangeParts(s string) (ors [][]comparison, ok bool) {
	// splitAndTrim: split at spaces, except those after '>', '<' or '='.
	var fields []string
	last, lastChar := 0, byte(0)
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' && lastChar != '>' && lastChar != '<' && lastChar != '=' {
			if last < i-1 {
				fields = append(fields, s[last:i])
			}
			last = i + 1
		} else if s[i] != ' ' {
			lastChar = s[i]
		}
	}
	if last < len(s)-1 {
		fields = append(fields, s[last:])
	}
	var part []comparison
	for i, f := range fields {
		f = strings.ReplaceAll(f, " ", "")
		if f == "||" {
			if i == 0 || i == len(fields)-1 {
				return nil, false
			}
			ors, part = append(ors, part), nil
			continue
		}
		d := strings.IndexFunc(f, func(r rune) bool { return r >= '0' && r <= '9' })
		if d < 0 {
			return nil, false
		}
		op, v := f[:d], f[d:]
		if !strings.Contains(f, "x") {
			part = append(part, comparison{op, v})
			continue
		}
		cs, ok := expandWildcard(op, v)
		if !ok {
			return nil, false
		}
		part = append(part, cs...)
	}
	return append(ors, part), len(fields) > 0
}

// expandWildcard is blang's expansion of a version with a wildcard: 1.2.x
// is >=1.2.0 <1.3.0, >1.2.x is >=1.3.0, <=1.x is <2.0.0, and so on.
func expandWildcard(op, v string) ([]comparison, bool) {
	parts := strings.Split(v, ".")
	wildcard := 0 // the part a trailing x stands in: 2 minor, 3 patch
	if parts[len(parts)-1] == "x" && (len(parts) == 2 || len(parts) == 3) {
		wildcard = len(parts)
	}
	flat := strings.Replace(strings.Replace(v, ".x.x", ".x", 1), ".x", ".0", 1)
	if len(strings.Split(flat, ".")) == 2 {
		flat += ".0"
	}
	next := func() (string, bool) {
		fp := strings.Split(flat, ".")
		i := 0 // minor wildcard: the major version goes up
		switch wildcard {
		case 3:
			i = 1
		case 0:
			return "", false // blang builds an empty version and refuses it
		}
		n, err := strconv.Atoi(fp[i])
		if err != nil {
			return "", false
		}
		fp[i] = strconv.Itoa(n + 1)
		return strings.Join(fp, "."), true
	}
	switch op {
	case ">=":
		return []comparison{{">=", flat}}, true
	case "<":
		return []comparison{{"<", flat}}, true
	case ">":
		n, ok := next()
		return []comparison{{">=", n}}, ok
	case "<=":
		n, ok := next()
		return []comparison{{"<", n}}, ok
	case "", "=", "==":
		n, ok := next()
		return []comparison{{">=", flat}, {"<", n}}, ok
	case "!=", "!":
		n, ok := next()
		return []comparison{{"<", flat}, {">=", n}}, ok
	}
	return nil, false
}
