package catalog

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	bsemver "github.com/blang/semver/v4"
)

// Every skipRange blang accepts is read into intervals, wildcards and a
// space after the operator included: a range read as "any version" makes
// each visit scan every entry not yet visited, and a channel of such
// entries searches in quadratic time (8,000 entries with skipRange
// "0.0.x": 3.4 s; 50,000: minutes).
func TestParseSpansCoversBlangRanges(t *testing.T) {
	versions := []string{"0.0.1", "0.9.9", "1.0.0-rc.1", "1.0.0", "1.2.0", "1.2.9", "1.3.0-alpha", "1.3.0", "1.9.0", "2.0.0-0", "2.0.0", "3.1.4"}
	for _, r := range []string{
		"0.0.x", "1.x", "1.2.x", "1.x.x", ">1.2.x", ">=1.2.x", "<1.2.x", "<=1.2.x", ">1.x", "<=1.x", "!=1.2.x", "=1.2.x", "==1.x",
		">= 1.0.0 < 2.0.0", "> 1.2.0", "<1.3.0 || >= 2.0.0", ">=1.0.0 !1.2.0", "1.2.0", ">=1.x <2.0.0-0 || 3.x",
	} {
		match, err := bsemver.ParseRange(r)
		if err != nil {
			t.Fatalf("%q: blang refuses it: %v", r, err)
		}
		spans := parseSpans(r)
		if spans == nil {
			t.Errorf("%q: read as any version", r)
			continue
		}
		for _, s := range versions {
			v := bsemver.MustParse(s)
			if match(v) && !inSpans(spans, v) {
				t.Errorf("%q matches %s, which its intervals leave out", r, s)
			}
		}
	}
}

func inSpans(spans []interval, v bsemver.Version) bool {
	for _, iv := range spans {
		if iv.lo != nil {
			if c := v.Compare(*iv.lo); c < 0 || c == 0 && !iv.loIn {
				continue
			}
		}
		if iv.hi != nil {
			if c := v.Compare(*iv.hi); c > 0 || c == 0 && !iv.hiIn {
				continue
			}
		}
		return true
	}
	return false
}

// The search's work is linear in the entries: a chain of 8,000 entries each
// with a skipRange that matches none of them checks a range a few times per
// entry, not once per pair.
func TestSearchWithWildcardRangesIsLinear(t *testing.T) {
	const n = 8000
	versions := map[string]bsemver.Version{}
	var entries []Entry
	for i := range n {
		name := "b" + bsemver.Version{Major: 1, Minor: uint64(i)}.String()
		versions[name] = bsemver.Version{Major: 1, Minor: uint64(i)}
		e := Entry{Name: name, SkipRange: "0.0.x"}
		if i > 0 {
			e.Replaces = entries[i-1].Name
		}
		entries = append(entries, e)
	}
	cg := newChannelGraph(entries, versions)
	calls := 0
	for _, sr := range cg.ranges {
		if sr != nil {
			m := sr.match
			sr.match = func(v bsemver.Version) bool { calls++; return m(v) }
		}
	}
	if ok, err := cg.reaches(t.Context(), versions, "none", entries[n-1].Name); ok || err != nil {
		t.Fatalf("reaches: %v, %v", ok, err)
	}
	if calls > 4*n {
		t.Errorf("%d range checks for %d entries: the search is not linear", calls, n)
	}
}

// A range that holds entries in its intervals but excludes them (!=) leaves
// them unvisited, checked again at each visit, each check as long as the
// range: a thousand such entries took 5.7 s while fewer than 1,024 visits
// never looked at the context. The search stops when its context ends.
func TestSearchStopsOnContextBetweenRangeChecks(t *testing.T) {
	const n = 200
	var excluded []string
	for i := range n {
		excluded = append(excluded, "!=1."+strconv.Itoa(i)+".0")
	}
	r := ">=1.0.0 " + strings.Join(excluded, " ")
	versions := map[string]bsemver.Version{}
	var entries []Entry
	for i := range n {
		name := "b" + strconv.Itoa(i)
		versions[name] = bsemver.Version{Major: 1, Minor: uint64(i)}
		e := Entry{Name: name, SkipRange: r}
		if i > 0 {
			e.Replaces = entries[i-1].Name
		}
		entries = append(entries, e)
	}
	g := &Graph{Channels: map[string][]Entry{"stable": entries}, Versions: versions}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ok, err := g.ReachesContext(ctx, "none", entries[n-1].Name); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, %v; want the search stopped by its context", ok, err)
	}
}
