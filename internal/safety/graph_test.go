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
	const (
		refused = "; OLM v1's default upgradeConstraintPolicy, CatalogProvided, refuses it: first render a version whose CSV replaces or skips widget.v1.0.0 or has an olm.skipRange holding 1.0.0, or set spec.upgradeConstraintPolicy: SelfCertified once you have checked this upgrade yourself"
		allowed = "; allowed as spec.upgradeConstraintPolicy is SelfCertified (you have checked this upgrade yourself; OLM v1 installs it then too)"
	)
	for _, tc := range []struct {
		name string
		to   *bundle.Bundle
		self bool     // spec.upgradeConstraintPolicy: SelfCertified
		want Severity // "" for no finding
		says string   // the whole message
	}{
		{name: "replaces", to: to("1.1.0", func(b *bundle.Bundle) { b.CSV.Spec.Replaces = "widget.v1.0.0" })},
		{name: "replaces, SelfCertified", self: true, to: to("1.1.0", func(b *bundle.Bundle) { b.CSV.Spec.Replaces = "widget.v1.0.0" })},
		{name: "skips", to: to("1.1.0", func(b *bundle.Bundle) { b.CSV.Spec.Skips = []string{"widget.v0.9.0", "widget.v1.0.0"} })},
		{name: "skipRange", to: to("1.1.0", func(b *bundle.Bundle) { b.CSV.Annotations = map[string]string{"olm.skipRange": ">=0.5.0 <1.1.0"} })},
		{name: "same version", to: to("1.0.0", nil)},
		{name: "no edge", to: to("1.1.0", func(b *bundle.Bundle) { b.CSV.Spec.Replaces = "widget.v0.9.0" }), want: Error,
			says: "no upgrade edge from widget.v1.0.0 to widget.v1.1.0: widget.v1.1.0 replaces widget.v0.9.0, skips (none) and has olm.skipRange (none), none of which includes widget.v1.0.0 (1.0.0)" + refused},
		{name: "skipRange excludes FROM", to: to("1.1.0", func(b *bundle.Bundle) { b.CSV.Annotations = map[string]string{"olm.skipRange": ">=1.0.1 <1.1.0"} }), want: Error,
			says: "no upgrade edge from widget.v1.0.0 to widget.v1.1.0: widget.v1.1.0 replaces (none), skips (none) and has olm.skipRange >=1.0.1 <1.1.0, none of which includes widget.v1.0.0 (1.0.0)" + refused},
		{name: "no edge, SelfCertified", to: to("1.1.0", nil), self: true, want: Warning,
			says: "no upgrade edge from widget.v1.0.0 to widget.v1.1.0: widget.v1.1.0 replaces (none), skips (none) and has olm.skipRange (none), none of which includes widget.v1.0.0 (1.0.0)" + allowed},
		{name: "down a version", to: to("0.9.0", func(b *bundle.Bundle) { b.CSV.Spec.Replaces = "widget.v1.0.0" }), want: Error,
			says: "widget.v0.9.0 (0.9.0) is older than widget.v1.0.0 (1.0.0): OLM never goes down a version by itself, and the older CRDs and operator may not read what the newer one stored; OLM v1's default upgradeConstraintPolicy, CatalogProvided, refuses it: render 1.0.0 or a newer version, or set spec.upgradeConstraintPolicy: SelfCertified once you have checked this upgrade yourself"},
		{name: "down a version, SelfCertified", to: to("0.9.0", nil), self: true, want: Warning,
			says: "widget.v0.9.0 (0.9.0) is older than widget.v1.0.0 (1.0.0): OLM never goes down a version by itself, and the older CRDs and operator may not read what the newer one stored" + allowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Check(t.Context(), from, tc.to, Options{SelfCertified: tc.self})
			if err != nil {
				t.Fatal(err)
			}
			assertEdge(t, got, tc.want, tc.says)
			if len(got) == 1 && got[0].Message != tc.says {
				t.Errorf("message\n%s\nwant\n%s", got[0].Message, tc.says)
			}
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
		{name: "CSVs: 1.0.0 -> 1.0.2", from: v100, to: v102, want: Error, says: "no upgrade edge from testoperator.v1.0.0 to testoperator.v1.0.2"},
		{name: "CSVs: 1.0.2 -> 1.2.0, SelfCertified", from: v102, to: v120, o: Options{SelfCertified: true}, want: Warning, says: "no upgrade edge from testoperator.v1.0.2 to testoperator.v1.2.0"},
		{name: "CSVs: 1.2.0 -> 1.0.0", from: v120, to: v100, want: Error, says: "older than testoperator.v1.2.0"},
		{name: "catalog: 1.0.0 -> 1.2.0 through 1.0.1 in beta", from: v100, to: v120, o: Options{Catalog: cat, Package: "test"}},
		{name: "catalog: 1.0.0 -> 1.2.0 in channel beta", from: v100, to: v120, o: Options{Catalog: cat, Package: "test", Channel: "beta"}},
		{name: "catalog: 1.0.0 -> 1.2.0 through 1.0.1, SelfCertified", from: v100, to: v120, o: Options{Catalog: cat, Package: "test", SelfCertified: true}},
		// 1.0.0's one successor is 1.0.1 (beta); the fix names it.
		{name: "catalog: 1.0.0 -> 1.0.2 has no edge", from: v100, to: v102, o: Options{Catalog: cat, Package: "test"}, want: Error,
			says: "no upgrade edge from test-operator.1.0.0 to test-operator.1.0.2: no path through replaces, skips or skipRange in any channel of the catalog's package test; OLM v1's default upgradeConstraintPolicy, CatalogProvided, refuses it: first render a version the catalog upgrades 1.0.0 to (1.0.1), or set spec.upgradeConstraintPolicy: SelfCertified once you have checked this upgrade yourself"},
		{name: "catalog: 1.0.2 -> 1.2.0 has no edge, SelfCertified", from: v102, to: v120, o: Options{Catalog: cat, Package: "test", SelfCertified: true}, want: Warning,
			says: "no upgrade edge from test-operator.1.0.2 to test-operator.1.2.0: no path through replaces, skips or skipRange in any channel of the catalog's package test; allowed as spec.upgradeConstraintPolicy is SelfCertified"},
		{name: "catalog: 1.0.0 -> 1.2.0 not in channel alpha", from: v100, to: v120, o: Options{Catalog: cat, Package: "test", Channel: "alpha"}, want: Error,
			says: "in channel alpha of the catalog's package test; OLM v1's default upgradeConstraintPolicy, CatalogProvided, refuses it: first render a version the catalog upgrades 1.0.0 to (it lists none in channel alpha)"},
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
