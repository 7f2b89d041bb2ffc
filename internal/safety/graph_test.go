package safety

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

func TestUpgradeEdgeFromCSVs(t *testing.T) {
	from := testBundle(t, "widget.v1.0.0", "1.0.0")
	to := func(ver string, edit func(b *bundle.Bundle)) *bundle.Bundle {
		b := testBundle(t, "widget.v"+ver, ver)
		if edit != nil {
			edit(b)
		}
		return b
	}
	for _, tc := range []struct {
		name   string
		to     *bundle.Bundle
		strict bool
		want   Severity // "" for no finding
		says   string
	}{
		{name: "replaces", to: to("1.1.0", func(b *bundle.Bundle) { b.CSV.Spec.Replaces = "widget.v1.0.0" })},
		{name: "skips", to: to("1.1.0", func(b *bundle.Bundle) { b.CSV.Spec.Skips = []string{"widget.v0.9.0", "widget.v1.0.0"} })},
		{name: "skipRange", to: to("1.1.0", func(b *bundle.Bundle) { b.CSV.Annotations = map[string]string{"olm.skipRange": ">=0.5.0 <1.1.0"} })},
		{name: "same version", to: to("1.0.0", nil)},
		{name: "no edge", to: to("1.1.0", func(b *bundle.Bundle) { b.CSV.Spec.Replaces = "widget.v0.9.0" }), want: Warning,
			says: "no upgrade edge from widget.v1.0.0 to widget.v1.1.0: widget.v1.1.0 replaces widget.v0.9.0"},
		{name: "skipRange excludes FROM", to: to("1.1.0", func(b *bundle.Bundle) { b.CSV.Annotations = map[string]string{"olm.skipRange": ">=1.0.1 <1.1.0"} }), want: Warning,
			says: "olm.skipRange >=1.0.1 <1.1.0, none of which includes widget.v1.0.0 (1.0.0)"},
		{name: "no edge, strict", to: to("1.1.0", nil), strict: true, want: Error, says: "no upgrade edge from widget.v1.0.0 to widget.v1.1.0"},
		{name: "down a version", to: to("0.9.0", func(b *bundle.Bundle) { b.CSV.Spec.Replaces = "widget.v1.0.0" }), want: Warning, says: "is older than widget.v1.0.0"},
		{name: "down a version, strict", to: to("0.9.0", nil), strict: true, want: Error, says: "OLM never goes down a version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Check(t.Context(), from, tc.to, Options{Strict: tc.strict})
			if err != nil {
				t.Fatal(err)
			}
			assertEdge(t, got, tc.want, tc.says)
		})
	}
}

func assertEdge(t *testing.T, got []Finding, want Severity, says string) {
	t.Helper()
	if want == "" {
		if len(got) != 0 {
			t.Fatalf("want no finding, got:\n%s", lines(got))
		}
		return
	}
	if len(got) != 1 || got[0].Rule != "upgradeEdge" || got[0].Severity != want || !strings.Contains(got[0].Message, says) {
		t.Fatalf("want one %s upgradeEdge finding saying %q, got:\n%s", want, says, lines(got))
	}
}

// TestUpgradeEdgeOLMv1TestData judges test-operator's bumps as OLM v1's e2e
// data describes them: the CSVs name no edge, and the catalog's beta channel
// goes 1.0.0 -> 1.0.1 -> 1.2.0 while alpha lists 1.0.0, 1.0.2, 1.0.3 with no
// edges.
func TestUpgradeEdgeOLMv1TestData(t *testing.T) {
	root := filepath.Join("..", "..", "..", "shared", "olmv1-testdata")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("OLM v1 test data not found at %s (see /work/shared/README.md)", root)
	}
	load := func(v string) *bundle.Bundle {
		b, err := bundle.LoadDir(filepath.Join(root, "bundles", "test-operator", v))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	v100, v102, v120 := load("v1.0.0"), load("v1.0.2"), load("v1.2.0")
	cat := os.DirFS(filepath.Join(root, "catalogs", "test-catalog", "v1", "configs"))
	for _, tc := range []struct {
		name     string
		from, to *bundle.Bundle
		o        Options
		want     Severity
		says     string
	}{
		{name: "CSVs: 1.0.0 -> 1.0.2", from: v100, to: v102, want: Warning, says: "no upgrade edge from testoperator.v1.0.0 to testoperator.v1.0.2"},
		{name: "CSVs: 1.0.2 -> 1.2.0, strict", from: v102, to: v120, o: Options{Strict: true}, want: Error, says: "no upgrade edge from testoperator.v1.0.2 to testoperator.v1.2.0"},
		{name: "CSVs: 1.2.0 -> 1.0.0", from: v120, to: v100, want: Warning, says: "older than testoperator.v1.2.0"},
		{name: "catalog: 1.0.0 -> 1.2.0 through 1.0.1 in beta", from: v100, to: v120, o: Options{Catalog: cat, Package: "test"}},
		{name: "catalog: 1.0.0 -> 1.2.0 in channel beta", from: v100, to: v120, o: Options{Catalog: cat, Package: "test", Channel: "beta"}},
		{name: "catalog: 1.0.0 -> 1.0.2 has no edge", from: v100, to: v102, o: Options{Catalog: cat, Package: "test"}, want: Warning,
			says: "no upgrade edge from test-operator.1.0.0 to test-operator.1.0.2: no path"},
		{name: "catalog: 1.0.2 -> 1.2.0 has no edge, strict", from: v102, to: v120, o: Options{Catalog: cat, Package: "test", Strict: true}, want: Error,
			says: "no upgrade edge from test-operator.1.0.2 to test-operator.1.2.0"},
		{name: "catalog: 1.0.0 -> 1.2.0 not in channel alpha", from: v100, to: v120, o: Options{Catalog: cat, Package: "test", Channel: "alpha"}, want: Warning,
			says: "in channel alpha"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := checkEdge(context.Background(), tc.from, tc.to, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			assertEdge(t, got, tc.want, tc.says)
		})
	}
}
