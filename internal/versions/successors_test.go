package versions

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

func TestSuccessorsOLMv1(t *testing.T) {
	p, err := ReadPackage(context.Background(), widget(t), "widget")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		installed string
		channels  []string
		rng       string
		want      string
	}{
		// 1.1.0 (replaces, deprecated) and 1.2.0 (skipRange) in stable.
		{"widget.v1.0.0", []string{"stable"}, "", "widget.v1.2.0 widget.v1.1.0"},
		// The installed bundle named by its version.
		{"1.0.0", []string{"stable"}, "", "widget.v1.2.0 widget.v1.1.0"},
		{"v1.0.0", nil, "", "widget.v2.0.0-rc.1 widget.v1.2.0 widget.v1.1.0"},
		// An edge of another channel counts (OLM passes every channel to
		// SuccessorsOf); the candidate must be in an allowed one: 2.0.0-rc.1
		// skips 1.0.0 in fast only, and is listed in fast only.
		{"widget.v1.0.0", []string{"fast"}, "", "widget.v2.0.0-rc.1 widget.v1.2.0"},
		// The range: a pre-release matches only when it names one.
		{"widget.v1.0.0", []string{"fast"}, ">=1.0.0", "widget.v1.2.0"},
		{"widget.v1.0.0", []string{"stable", "fast"}, "<1.2.0", "widget.v1.1.0"},
		{"widget.v1.0.0", []string{"stable"}, ">=3.0.0", ""},
		// A version the catalog no longer has: only skipRanges reach it.
		{"1.0.5", nil, "", "widget.v1.2.0"},
		{"widget.v1.3.0", nil, "", "widget.v2.0.0-rc.1"},
		{"widget.v2.0.0-rc.1", nil, "", ""},
	} {
		got, err := SuccessorsOLMv1(p, tc.installed, tc.channels, tc.rng)
		if err != nil {
			t.Errorf("%s %v %q: %v", tc.installed, tc.channels, tc.rng, err)
			continue
		}
		if names(got) != tc.want {
			t.Errorf("%s %v %q: %q, want %q", tc.installed, tc.channels, tc.rng, names(got), tc.want)
		}
	}
}

func TestSuccessorsErrors(t *testing.T) {
	p, err := ReadPackage(context.Background(), widget(t), "widget")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		installed, channel, rng, want string
	}{
		{"widget.v1.0.0", "beta", "", `package "widget" has no channel "beta" (channels: candidate, fast, stable)`},
		{"widget.v1.0.0", "", ">=>1", `version range ">=>1" is invalid`},
		{"latest", "", "", `installed version "latest" is neither a bundle of package "widget" nor a semantic version`},
		{"", "", "", "no installed version given"},
	} {
		var chs []string
		if tc.channel != "" {
			chs = []string{tc.channel}
		}
		_, err := SuccessorsOLMv1(p, tc.installed, chs, tc.rng)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v", tc, err)
		}
	}
}

func TestNextOLMv0(t *testing.T) {
	p, err := ReadPackage(context.Background(), widget(t), "widget")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ installed, channel, want string }{
		// 1.1.0 replaces it, 1.2.0's skipRange holds it: the highest.
		{"widget.v1.0.0", "stable", "widget.v1.2.0"},
		{"widget.v1.1.0", "stable", "widget.v1.2.0"},
		{"widget.v1.2.0", "stable", "widget.v1.3.0"},
		{"widget.v1.3.0", "stable", ""}, // the head
		{"widget.v1.3.0", "fast", "widget.v2.0.0-rc.1"},
		{"widget.v1.0.0", "candidate", ""},
		{"widget.v1.0.0", "nope", ""},
		{"nope", "stable", ""},
	} {
		got, ok := NextOLMv0(p, tc.installed, tc.channel)
		if got.Name != tc.want || ok != (tc.want != "") {
			t.Errorf("%s in %s: %q %v, want %q", tc.installed, tc.channel, got.Name, ok, tc.want)
		}
	}
}

// A skipRange that holds every version makes its entry a successor of
// every bundle, itself excepted; nothing is walked, so nothing loops.
func TestSkipRangeMatchingEverything(t *testing.T) {
	var objs []any
	objs = append(objs, pkgObj("p", "s"))
	var entries []string
	for i := range 50 {
		objs = append(objs, bundleObj("p", fmt.Sprintf("p.v%d", i), fmt.Sprintf("1.%d.0", i)))
		entries = append(entries, fmt.Sprintf("p.v%d<|| >=0.0.0-0", i))
	}
	objs = append(objs, chanObj("p", "s", entries...))
	p, err := ReadPackage(context.Background(), fbc(t, objs...), "p")
	if err != nil {
		t.Fatal(err)
	}
	got, err := SuccessorsOLMv1(p, "p.v10", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 49 || got[0].Name != "p.v49" || got[48].Name != "p.v0" {
		t.Errorf("%d successors, first %s", len(got), got[0].Name)
	}
	if next, ok := NextOLMv0(p, "p.v10", "s"); !ok || next.Name != "p.v49" {
		t.Errorf("next: %s %v", next.Name, ok)
	}
	// No entry is unnamed by the others' edges… none names any: 50 heads.
	if c := p.Channels[0]; c.Head != "" || !strings.HasPrefix(c.Problem, "50 heads (p.v0, p.v1, p.v10, p.v11, p.v12 and 45 more)") {
		t.Errorf("head %q problem %q", c.Head, c.Problem)
	}
}

func TestDeprecatedLast(t *testing.T) {
	fsys := fbc(t, pkgObj("p", "s"),
		bundleObj("p", "p.v1", "1.0.0"), bundleObj("p", "p.v2", "2.0.0"), bundleObj("p", "p.v3", "3.0.0"),
		chanObj("p", "s", "p.v1", "p.v2<p.v1", "p.v3<p.v2|p.v1"),
		deprecations("p", obj{"schema": "olm.bundle", "name": "p.v3"}))
	p, err := ReadPackage(context.Background(), fsys, "p")
	if err != nil {
		t.Fatal(err)
	}
	got, err := SuccessorsOLMv1(p, "1.0.0", nil, "")
	if err != nil || names(got) != "p.v2 p.v3" || got[0].Deprecated || !got[1].Deprecated {
		t.Errorf("%q %v", names(got), err)
	}
}

// Bundles of one version and several releases (legacy: in the build
// metadata) upgrade by release, as OLM v1 orders them.
func TestSuccessorsByRelease(t *testing.T) {
	fsys := fbc(t, pkgObj("p", "s"),
		bundleObj("p", "p.v1.0.0-1", "1.0.0+1"), bundleObj("p", "p.v1.0.0-2", "1.0.0+2"), bundleObj("p", "p.v1.0.0-10", "1.0.0+10"),
		chanObj("p", "s", "p.v1.0.0-1", "p.v1.0.0-2<p.v1.0.0-1", "p.v1.0.0-10<p.v1.0.0-2|p.v1.0.0-1"))
	p, err := ReadPackage(context.Background(), fsys, "p")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(p.Channels[0].Entries); got != "p.v1.0.0-1 p.v1.0.0-2 p.v1.0.0-10" {
		t.Errorf("entries in order: %s", got)
	}
	for _, installed := range []string{"p.v1.0.0-1", "1.0.0+1"} {
		got, err := SuccessorsOLMv1(p, installed, nil, "")
		if err != nil || names(got) != "p.v1.0.0-10 p.v1.0.0-2" {
			t.Errorf("from %s: %q %v", installed, names(got), err)
		}
		if next, ok := NextOLMv0(p, installed, "s"); !ok || next.Name != "p.v1.0.0-10" {
			t.Errorf("next from %s: %s", installed, next.Name)
		}
	}
	if got, _ := SuccessorsOLMv1(p, "p.v1.0.0-10", nil, ""); len(got) != 0 {
		t.Errorf("from the head: %q", names(got))
	}
}
