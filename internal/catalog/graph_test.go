package catalog

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	bsemver "github.com/blang/semver/v4"
)

// naiveReaches is the search Reaches replaced (breadth first, every entry
// tried against every bundle reached, each skipRange parsed on each try):
// the oracle for the linear one.
func naiveReaches(g *Graph, entries []Entry, from, to string) bool {
	seen := map[string]bool{from: true}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == to {
			return true
		}
		for _, e := range entries {
			if seen[e.Name] {
				continue
			}
			up := e.Replaces == cur || slices.Contains(e.Skips, cur)
			if v, ok := g.Versions[cur]; !up && ok && e.SkipRange != "" {
				r, err := bsemver.ParseRange(e.SkipRange)
				up = err == nil && r(v)
			}
			if up {
				seen[e.Name] = true
				queue = append(queue, e.Name)
			}
		}
	}
	return false
}

// TestReachesMatchesNaive: on random channels (replaces, skips and
// skipRanges of every form blang reads, bundles outside the channel and
// without versions), the linear search answers as the old one did.
func TestReachesMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	ranges := []func(a, b string) string{
		func(a, b string) string { return ">=" + a + " <" + b },
		func(a, b string) string { return ">" + a + " <=" + b },
		func(a, b string) string { return "<" + b },
		func(a, b string) string { return a },
		func(a, b string) string { return "=" + a + " || >=" + b },
		func(a, b string) string { return ">=" + a + " !=" + b },
		func(a, b string) string { return ">=1.x" },
		func(a, b string) string { return "not a range" },
	}
	for round := range 300 {
		n := 2 + rng.IntN(25)
		g := &Graph{Versions: map[string]bsemver.Version{}, Channels: map[string][]Entry{}}
		name := func(i int) string { return fmt.Sprintf("b%d", i) }
		ver := func(i int) string { return fmt.Sprintf("1.%d.%d", i/3, i%3) }
		var entries []Entry
		for i := range n {
			if rng.IntN(8) > 0 {
				g.Versions[name(i)] = bsemver.MustParse(ver(i))
			}
			if rng.IntN(6) == 0 {
				continue // a bundle in no channel
			}
			e := Entry{Name: name(i)}
			if i > 0 && rng.IntN(3) > 0 {
				e.Replaces = name(rng.IntN(i + 2))
			}
			if rng.IntN(4) == 0 {
				e.Skips = []string{name(rng.IntN(n)), name(rng.IntN(n + 3))}
			}
			if rng.IntN(3) == 0 {
				a, b := rng.IntN(n), rng.IntN(n)
				e.SkipRange = ranges[rng.IntN(len(ranges))](ver(min(a, b)), ver(max(a, b)))
			}
			entries = append(entries, e)
		}
		rng.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
		g.Channels["c"] = entries
		for range 20 {
			from, to := name(rng.IntN(n+1)), name(rng.IntN(n+1))
			if got, want := g.Reaches(from, to), naiveReaches(g, entries, from, to); got != want {
				t.Fatalf("round %d: Reaches(%s, %s) = %v, the old search says %v; entries %+v", round, from, to, got, want, entries)
			}
		}
	}
}

// chain is a replaces chain of n bundles, each with a skipRange over the
// one before it, as vendors' long channels are written.
func chain(n int) *Graph {
	g := &Graph{Versions: map[string]bsemver.Version{}, Channels: map[string][]Entry{}}
	entries := make([]Entry, n)
	for i := range n {
		name := fmt.Sprintf("op.v%d.0.0", i+1)
		g.Versions[name] = bsemver.Version{Major: uint64(i + 1)}
		entries[i] = Entry{Name: name}
		if i > 0 {
			entries[i].Replaces = fmt.Sprintf("op.v%d.0.0", i)
			entries[i].SkipRange = fmt.Sprintf(">=%d.0.0 <%d.0.0", i, i+1)
		}
	}
	g.Channels["stable"] = entries
	return g
}

// TestReachesLongChainCancelled: a search over a long chain stops when its
// context ends, and says so.
func TestReachesLongChainCancelled(t *testing.T) {
	g := chain(12000)
	if !g.Reaches("op.v1.0.0", "op.v12000.0.0") || g.Reaches("op.v12000.0.0", "op.v1.0.0") {
		t.Fatal("wrong answer on the chain")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.ReachesContext(ctx, "op.v1.0.0", "op.v12000.0.0"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled search: %v", err)
	}
}

// BenchmarkReachesChain: the 12,000-bundle replaces chain that took over
// 30 s with the old search.
func BenchmarkReachesChain(b *testing.B) {
	for b.Loop() {
		g := chain(12000)
		if !g.Reaches("op.v1.0.0", "op.v12000.0.0") {
			b.Fatal("no path")
		}
	}
}

// TestSuccessors: the bundles one edge away, by replaces, skips or
// skipRange, in any of the graph's channels, highest first and each once;
// the bundle itself and entries that only pass through it are not.
func TestSuccessors(t *testing.T) {
	v := func(s string) bsemver.Version { return bsemver.MustParse(s) }
	g := &Graph{
		Channels: map[string][]Entry{
			"stable": {{Name: "op.v1.0.0"}, {Name: "op.v1.1.0", Replaces: "op.v1.0.0"}, {Name: "op.v1.2.0", Replaces: "op.v1.1.0"}},
			"fast": {{Name: "op.v1.0.0"}, {Name: "op.v1.1.0", Replaces: "op.v1.0.0"}, {Name: "op.v1.3.0", Skips: []string{"op.v1.0.0"}},
				{Name: "op.v2.0.0", SkipRange: ">=1.0.0 <2.0.0"}, {Name: "op.v2.1.0", SkipRange: "not a range"}},
		},
		Versions: map[string]bsemver.Version{"op.v1.0.0": v("1.0.0"), "op.v1.1.0": v("1.1.0"), "op.v1.2.0": v("1.2.0"), "op.v1.3.0": v("1.3.0"), "op.v2.0.0": v("2.0.0"), "op.v2.1.0": v("2.1.0")},
	}
	got, err := g.Successors(context.Background(), "op.v1.0.0")
	if want := []string{"op.v2.0.0", "op.v1.3.0", "op.v1.1.0"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("successors of 1.0.0: %q, %v; want %q", got, err, want)
	}
	if got, err := g.Successors(context.Background(), "op.v2.1.0"); err != nil || len(got) != 0 {
		t.Errorf("successors of the head: %q, %v; want none", got, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	long := &Graph{Channels: map[string][]Entry{"c": make([]Entry, 5000)}, Versions: map[string]bsemver.Version{}}
	if _, err := long.Successors(ctx, "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
