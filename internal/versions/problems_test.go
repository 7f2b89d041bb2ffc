package versions

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// A channel opm validate refuses past its head (opm's model,
// validateReplacesChain and Bundle.Validate; declcfg's duplicate entries)
// says so in Problem, the head kept; a channel it accepts says nothing.
func TestChannelProblemsAsOpm(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []string
		want    string // "" for no problem
	}{
		{"replaces and skips the same", []string{"p.v1", "p.v2<p.v1", "p.v3<p.v2|p.v2|>=0.0.1 <0.0.3"}, ""},
		{"tail replaces a bundle not listed", []string{"p.v2<p.v1", "p.v3<p.v2"}, ""},
		{"cycle without hops", []string{"p.v4<p.v4", "p.v5<p.v4"}, "a cycle in the replaces chain from head p.v5 (p.v4 -> p.v4); opm validate refuses this channel"},
		{"cycle of hops", []string{"p.v1<p.v3", "p.v2<p.v1", "p.v3<p.v2", "p.v4<p.v3"}, "a cycle in the replaces chain from head p.v4 (p.v3 -> p.v2 -> p.v1 -> p.v3)"},
		{"stranded", []string{"p.v1", "p.v2<p.v1", "p.v3<|p.v2"}, "stranded: the replaces chain from head p.v3 does not reach p.v1, and no entry skips them; opm validate refuses this channel"},
		{"listed twice", []string{"p.v1", "p.v1"}, "lists more than once: p.v1; opm validate refuses this channel"},
		{"bad skipRange", []string{"p.v1", "p.v2<p.v1||not a range"}, "the skipRange of p.v2 is not a version range (OLM ignores it); opm validate refuses this channel"},
		{"empty skip", []string{"p.v1", "p.v2<p.v1|,p.v1"}, "an entry skips an empty name; opm validate refuses this channel"},
		{"no head and twice", []string{"p.v1<p.v2", "p.v2<p.v1", "p.v2<p.v1"}, "no head: every entry is replaced or skipped by another (a cycle); lists more than once: p.v2; opm validate refuses this channel"},
	} {
		objs := []any{pkgObj("p", "s"), chanObj("p", "s", tc.entries...)}
		for _, n := range []string{"p.v1", "p.v2", "p.v3", "p.v4", "p.v5"} {
			objs = append(objs, bundleObj("p", n, "0.0."+n[3:]))
		}
		// Bundles no channel lists are the package's problem, not the
		// channel's: list them all in a second channel.
		objs = append(objs, chanObj("p", "all", "p.v1", "p.v2", "p.v3", "p.v4", "p.v5"))
		p, err := ReadPackage(context.Background(), fbc(t, objs...), "p")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		c := p.Channel("s")
		if tc.want == "" && c.Problem != "" || !strings.Contains(c.Problem, tc.want) {
			t.Errorf("%s: problem %q, want %q", tc.name, c.Problem, tc.want)
		}
		if strings.Contains(tc.want, "from head") && c.Head == "" {
			t.Errorf("%s: the head was dropped", tc.name)
		}
	}
}

// What opm validate refuses outside the channel graphs is said at the
// package: a bundle no channel lists (so no channel shows it), a default
// channel that is not there, deprecations naming nothing.
func TestPackageProblemsAsOpm(t *testing.T) {
	fsys := fbc(t,
		pkgObj("p", "nope"),
		chanObj("p", "s", "p.v1"),
		bundleObj("p", "p.v1", "0.0.1"),
		bundleObj("p", "p.v9", "0.0.9"),
		obj{"schema": "olm.deprecations", "package": "p", "entries": []obj{
			{"reference": obj{"schema": "olm.bundle", "name": "p.ghost"}, "message": "x"},
			{"reference": obj{"schema": "olm.channel", "name": "ghost"}, "message": "x"},
			{"reference": obj{"schema": "olm.weird", "name": "z"}, "message": "x"},
			{"message": "no reference"},
			{"reference": obj{"schema": "olm.package", "name": "other"}, "message": "x"},
		}},
		obj{"schema": "olm.deprecations", "package": "p", "entries": []obj{
			{"reference": obj{"schema": "olm.channel", "name": "ghost"}, "message": "again"},
		}},
	)
	p, err := ReadPackage(context.Background(), fsys, "p")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"bundles in no channel (so not shown below), which OLM cannot install: p.v9; opm validate refuses this catalog",
		`default channel "nope" is not a channel of the package; opm validate refuses this catalog`,
		"olm.deprecations names channels the package does not have: ghost; opm validate refuses this catalog",
		`olm.deprecations is declared 2 times (at catalog.json document 5 and catalog.json document 6): a package has one; opm validate refuses this catalog`,
		`olm.deprecations names bundle "p.ghost", which the package does not have; opm validate refuses this catalog`,
		`olm.deprecations names schema "olm.weird" ("z"), not olm.bundle, olm.channel or olm.package (at catalog.json document 5); opm validate refuses this catalog`,
		`olm.deprecations has an entry with no reference (at catalog.json document 5); opm validate refuses this catalog`,
		`olm.deprecations names olm.package with a name ("other"), which a package's own deprecation leaves out (at catalog.json document 5); opm validate refuses this catalog`,
		`olm.deprecations has 1 more of these problems; opm validate refuses this catalog`,
	}
	if got := strings.Join(p.Problems, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	clean, err := ReadPackage(context.Background(), widget(t), "widget")
	if err != nil || len(clean.Problems) != 0 {
		t.Errorf("widget: %v, problems %q", err, clean.Problems)
	}
	noDefault, err := ReadPackage(context.Background(), fbc(t, pkgObj("p", ""), chanObj("p", "s", "p.v1"), bundleObj("p", "p.v1", "0.0.1")), "p")
	if err != nil || strings.Join(noDefault.Problems, "") != "the package names no default channel; opm validate refuses this catalog" {
		t.Errorf("no default channel: %v, problems %q", err, noDefault.Problems)
	}
}

// A read the caller's deadline ends says the deadline's cause, not Go's
// "context deadline exceeded".
func TestReadPackageDeadlineCause(t *testing.T) {
	cause := errors.New("olm-cmp versions did not finish within --timeout 1ns")
	ctx, cancel := context.WithTimeoutCause(context.Background(), time.Nanosecond, cause)
	defer cancel()
	<-ctx.Done()
	_, err := ReadPackage(ctx, widget(t), "widget")
	if !errors.Is(err, cause) || strings.Contains(err.Error(), "context deadline exceeded") {
		t.Errorf("error: %v", err)
	}
}

// A package name asked for, and the catalog's own names, are repeated cut:
// a megabyte --package or package name is not a megabyte error line.
func TestReadPackageNotFoundBounded(t *testing.T) {
	long := strings.Repeat("a", 1<<20)
	_, err := ReadPackage(context.Background(), fbc(t, pkgObj(long+"1", "s"), pkgObj(long+"2", "s")), long)
	if err == nil || len(err.Error()) > 1000 || !strings.Contains(err.Error(), "not found") {
		t.Errorf("error: %d bytes: %.300v", len(err.Error()), err)
	}
}

// Names a registry lists that are not tags are left out and counted, not
// dropped unsaid; an answer that is not a JSON tag list (a login page, a
// document nested past the decoder's depth) is one line without the JSON
// decoder's words.
func TestListTagsInvalidAndNotJSON(t *testing.T) {
	ts := newTagServer(t, 2, map[string][]string{"org/w": {"v1.0.0", "\x1b[31mred", "x\u202ey", "-dash", "latest", "v1.0.0"}})
	semver, other, invalid, err := ListTagsWith(context.Background(), insecure(ts.host), ts.host+"/org/w")
	if err != nil || strings.Join(tagNames(semver), ",") != "v1.0.0" || strings.Join(other, ",") != "latest" || invalid != 3 {
		t.Errorf("semver %v other %v invalid %d: %v", tagNames(semver), other, invalid, err)
	}
	for name, body := range map[string]string{
		"html": "<html>sign in</html>",
		"deep": `{"tags":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`,
		"type": `{"tags":{"a":1}}`,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v2/" {
				return
			}
			io.WriteString(w, body)
		}))
		host := strings.TrimPrefix(srv.URL, "http://")
		_, _, _, err := ListTagsWith(context.Background(), insecure(host), host+"/org/w")
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), "is not the distribution API's JSON tag list") || strings.Contains(err.Error(), "invalid character") || strings.Contains(err.Error(), "json:") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A reference that is not a repository says what one is, and that a
// repository's path is lowercase, not "could not parse reference".
func TestRepositoryErrorWorded(t *testing.T) {
	_, _, _, err := ListTagsWith(context.Background(), &bundle.ImageLoader{}, "quay.io/Org/Bundle")
	if err == nil || !strings.Contains(err.Error(), "a repository's path is lowercase: give quay.io/org/bundle") {
		t.Errorf("uppercase: %v", err)
	}
	_, _, _, err = ListTagsWith(context.Background(), &bundle.ImageLoader{}, "quay.io/")
	if err == nil || strings.Contains(err.Error(), "could not parse") || !strings.Contains(err.Error(), "a repository is registry/path") {
		t.Errorf("no path: %v", err)
	}
}

// manyNames is a channel of n heads, one listing n names twice with bad
// skipRanges, and one of n/2 two-entry replaces cycles below a head.
func manyNames(n int) (heads, twice, cycles []Entry) {
	for i := range n {
		name := "b" + strconv.Itoa(i)
		heads = append(heads, Entry{Name: name})
		twice = append(twice, Entry{Name: name, SkipRange: "not a range"}, Entry{Name: name})
		cycles = append(cycles, Entry{Name: "c" + strconv.Itoa(i), Replaces: "c" + strconv.Itoa(i^1)})
	}
	return heads, twice, append(cycles, Entry{Name: "h"})
}

// Channels of 30,000 heads, names listed twice and stranded entries say
// so, each name once, the lists cut.
func TestChannelProblemsManyNames(t *testing.T) {
	heads, twice, cycles := manyNames(30_000)
	if _, problem := head(heads); !strings.HasPrefix(problem, "30000 heads (b0, b1, b10, b100, b1000 and 29995 more)") {
		t.Errorf("heads: %.200s", problem)
	}
	got := strings.Join(graphProblems("", twice), "; ")
	if got != "lists more than once: b0, b1, b2, b3, b4 and 29995 more; the skipRange of b0, b1, b2, b3, b4 and 29995 more is not a version range (OLM ignores it)" {
		t.Errorf("twice: %.300s", got)
	}
	got = strings.Join(graphProblems("h", cycles), "; ")
	if got != "stranded: the replaces chain from head h does not reach c0, c1, c10, c100, c1000 and 29995 more, and no entry skips them" {
		t.Errorf("stranded: %.300s", got)
	}
}

// BenchmarkChannelProblems30000: heads, entries listed twice and stranded
// entries are gathered in sets, so a channel of 30,000 such names is
// linear work. A slice search per entry took 20 s in the CLI for 30,000
// names listed twice (8 s for 40,000 stranded).
func BenchmarkChannelProblems30000(b *testing.B) {
	heads, twice, cycles := manyNames(30_000)
	for b.Loop() {
		head(heads)
		graphProblems("", twice)
		graphProblems("h", cycles)
	}
}

// BenchmarkSuccessorsOneVersion20000: an installed version that names
// 20,000 bundles (a catalog repeating one version) is a set each entry is
// checked against, not a list: 2.6 s an op as a list, 11 ms as a set.
func BenchmarkSuccessorsOneVersion20000(b *testing.B) {
	objs := []any{pkgObj("p", "s")}
	var entries []string
	for i := range 20_000 {
		name := "p.r" + strconv.Itoa(i)
		objs = append(objs, obj{"schema": "olm.bundle", "package": "p", "name": name, "image": "q",
			"properties": []obj{{"type": "olm.package", "value": obj{"packageName": "p", "version": "1.0.0"}}}})
		entries = append(entries, name+"<p.r"+strconv.Itoa(i+1)+"|p.x")
	}
	objs = append(objs, chanObj("p", "s", entries...))
	p, err := ReadPackage(context.Background(), fbc(b, objs...), "p")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := SuccessorsOLMv1(p, "1.0.0", nil, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// Releases order as OLM v1 orders them (semver pre-release identifiers): a
// number below any word, so 9 < 10a; a release OLM v1 cannot read is said.
func TestReleasesAsOLM(t *testing.T) {
	rel := func(name, version, release string) obj {
		v := obj{"packageName": "p", "version": version}
		if release != "" {
			v["release"] = release
		}
		return obj{"schema": "olm.bundle", "package": "p", "name": name, "image": "q", "properties": []obj{{"type": "olm.package", "value": v}}}
	}
	p, err := ReadPackage(context.Background(), fbc(t, pkgObj("p", "s"),
		chanObj("p", "s", "p.10a", "p.9<p.10a", "p.2<p.9", "p.x<p.2", "p.01<p.x"),
		rel("p.10a", "1.0.0", "10a"), rel("p.9", "1.0.0", "9"), rel("p.2", "1.0.0", "2"), rel("p.x", "1.0.0+build.007", ""), rel("p.01", "1.0.0", "01"),
	), "p")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(p.Channel("s").Entries); got != "p.01 p.2 p.9 p.10a p.x" {
		t.Errorf("order: %s", got)
	}
	want := "releases OLM v1 cannot read (dot-separated identifiers of [0-9A-Za-z-], numbers without leading zeros), so it cannot order these bundles among others of their version: p.01 (01), p.x (build.007)"
	if strings.Join(p.Problems, "\n") != want {
		t.Errorf("problems: %q", p.Problems)
	}
}

// A listing stopped by its own time bound names that bound, through the
// loader's transport (which words a stop by its context's cause); the
// caller's deadline keeps its own cause.
func TestListTagsTimeBoundNamed(t *testing.T) {
	defer func(d time.Duration) { listTimeout = d }(listTimeout)
	listTimeout = 300 * time.Millisecond
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	}))
	defer srv.Close()
	defer close(release)
	host := strings.TrimPrefix(srv.URL, "http://")
	l := &bundle.ImageLoader{Insecure: []string{host}}
	_, _, _, err := ListTagsWith(context.Background(), l, host+"/org/slow")
	if err == nil || !strings.Contains(err.Error(), "the tag list took over 300ms, olm-cmp's bound on one listing") {
		t.Errorf("through the loader: %v", err)
	}
	cause := errors.New("the caller's own deadline")
	ctx, cancel := context.WithTimeoutCause(context.Background(), 50*time.Millisecond, cause)
	defer cancel()
	if _, _, _, err = ListTagsWith(ctx, l, host+"/org/slow"); err == nil || !strings.Contains(err.Error(), "the caller's own deadline") {
		t.Errorf("caller's deadline: %v", err)
	}
}

// A bundle version that is not semver says what one is, not blang's words
// ("strconv.ParseUint: … value out of range").
func TestReadPackageBadVersionWorded(t *testing.T) {
	for _, v := range []string{"99999999999999999999.0.0", "1.0", "01.0.0"} {
		_, err := ReadPackage(context.Background(), fbc(t, pkgObj("p", "s"), chanObj("p", "s", "p.v1"), bundleObj("p", "p.v1", v)), "p")
		if err == nil || !strings.Contains(err.Error(), `olm.package version "`+v+`" is not a semantic version (MAJOR.MINOR.PATCH`) || strings.Contains(err.Error(), "strconv") || strings.Contains(err.Error(), "Major.Minor.Patch elements") {
			t.Errorf("%s: %v", v, err)
		}
	}
}
