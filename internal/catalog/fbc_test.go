package catalog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// testCatalog is the bundle package's catalog fixture, which its image tests
// also push as a catalog image.
const testCatalog = "../bundle/testdata/catalog/configs"

// sharedDir returns the reference data directory, or skips: it is not part
// of the repository (../shared beside it).
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, _ := filepath.Abs("../../../shared")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("reference data not available (%s missing): this test runs where ../shared sits beside the repository", dir)
	}
	return dir
}

func TestChoose(t *testing.T) {
	fsys := os.DirFS(testCatalog)
	for _, tc := range []struct {
		pkg, rng, channel string
		image, version    string
	}{
		// No channel: every bundle counts, even one in no channel; deprecated
		// bundles lose to any other; no range means pre-releases count too.
		{"widget", "", "", "example.com/widget-bundle:v2.0.0-rc.1", "2.0.0-rc.1"},
		{"widget", ">=1.0.0 <2", "", "example.com/widget-bundle:v1.2.0", "1.2.0"},
		{"widget", ">=1.3.0 <2", "", "example.com/widget-bundle:v1.3.0", "1.3.0"},
		{"widget", "", "stable", "example.com/widget-bundle:v1.2.0", "1.2.0"},
		{"widget", "1.1.x", "stable", "example.com/widget-bundle:v1.1.0", "1.1.0"},
		{"widget", "~1.0", "stable", "example.com/widget-bundle:v1.0.0", "1.0.0"},
		{"widget", ">=1.0.0", "fast", "example.com/widget-bundle:v1.2.0", "1.2.0"},
		{"widget", ">=2.0.0-rc.0", "fast", "example.com/widget-bundle:v2.0.0-rc.1", "2.0.0-rc.1"},
		{"widget", "1.0.0 || 1.1.0", "stable, fast", "example.com/widget-bundle:v1.1.0", "1.1.0"},
		// JSON stream in a subdirectory; the release in build metadata breaks the tie.
		{"gadget", ">=1.0.0", "", "example.com/gadget:2", "1.0.0+2"},
	} {
		image, version, err := Choose(context.Background(), fsys, Query{Package: tc.pkg, Range: tc.rng, Channel: tc.channel})
		if err != nil {
			t.Errorf("Choose(context.Background(), %q, %q, %q): %v", tc.pkg, tc.rng, tc.channel, err)
			continue
		}
		if image != tc.image || version != tc.version {
			t.Errorf("Choose(context.Background(), %q, %q, %q) = %s %s, want %s %s", tc.pkg, tc.rng, tc.channel, image, version, tc.image, tc.version)
		}
	}
}

func TestChooseErrors(t *testing.T) {
	fsys := os.DirFS(testCatalog)
	for _, tc := range []struct {
		pkg, rng, channel string
		wants             []string
	}{
		{"nope", "", "", []string{`package "nope" not found; the catalog's packages: gadget, widget`}},
		{"widget", "", "beta", []string{`no channel "beta"`, "fast, stable"}},
		{"widget", ">=3", "stable", []string{`matches version range ">=3"`, "1.0.0, 1.1.0, 1.2.0"}},
		{"widget", "not a range", "", []string{`version range "not a range" is invalid`}},
		{"gadget", "<1.0.0", "", []string{`"gadget.v0.9.0"`, "olm.package.required"}},
		{"", "", "", []string{"no package name"}},
	} {
		_, _, err := Choose(context.Background(), fsys, Query{Package: tc.pkg, Range: tc.rng, Channel: tc.channel})
		if err == nil {
			t.Errorf("Choose(context.Background(), %q, %q, %q) succeeded", tc.pkg, tc.rng, tc.channel)
			continue
		}
		for _, w := range tc.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Choose(context.Background(), %q, %q, %q) error %q does not mention %q", tc.pkg, tc.rng, tc.channel, err, w)
			}
		}
	}
}

// TestResolveOLMTestCatalog resolves against OLM v1's own e2e catalog.
func TestChooseOLMTestCatalog(t *testing.T) {
	root := filepath.Join(sharedDir(t), "olmv1-testdata", "catalogs", "test-catalog")
	const repo = "docker-registry.operator-controller-e2e.svc.cluster.local:5000/bundles/registry-v1/"
	for _, tc := range []struct {
		catalog, pkg, rng, channel string
		image, version             string
	}{
		{"v1", "test", "", "", repo + "test-operator:v1.2.0", "1.2.0"},
		{"v1", "test", "1.0.x", "alpha", repo + "test-operator:v1.0.3", "1.0.3"},
		{"v1", "test", "<1.0.3", "beta", repo + "test-operator:v1.0.0", "1.0.1"},
		{"v1", "test", "1.0.0", "", repo + "test-operator:v1.0.0", "1.0.0"},
		{"v1", "webhook-operator", "", "", repo + "webhook-operator:v0.0.1", "0.0.1"},
		{"v2", "test", "", "", repo + "test-operator:v1.0.0", "1.3.0"},
	} {
		image, version, err := Choose(context.Background(), os.DirFS(filepath.Join(root, tc.catalog, "configs")), Query{Package: tc.pkg, Range: tc.rng, Channel: tc.channel})
		if err != nil {
			t.Errorf("%s %s %q %q: %v", tc.catalog, tc.pkg, tc.rng, tc.channel, err)
			continue
		}
		if image != tc.image || version != tc.version {
			t.Errorf("%s %s %q %q = %s %s, want %s %s", tc.catalog, tc.pkg, tc.rng, tc.channel, image, version, tc.image, tc.version)
		}
	}
}

// A render's context reaches the catalog read: once it ends, choosing from
// a catalog directory and reading its upgrade graph stop with its error
// instead of reading on.
func TestChooseAndReadGraphHonourTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fsys := os.DirFS(testCatalog)
	if _, _, err := Choose(ctx, fsys, Query{Package: "widget"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Choose: %v, want the context's error", err)
	}
	if _, err := ReadGraph(ctx, fsys, "widget", ""); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadGraph: %v, want the context's error", err)
	}
}

// Releases order as OLM v1's (semver pre-release identifiers): a number is
// below any word, so of 1.0.0 releases 2 and 10a, 10a is chosen.
func TestChooseReleaseNumberBelowWord(t *testing.T) {
	b := func(name, release string) string {
		return `{"schema": "olm.bundle", "package": "p", "name": "` + name + `", "image": "example.com/` + name + `", "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "1.0.0", "release": "` + release + `"}}]}` + "\n"
	}
	fsys := fstest.MapFS{"catalog.json": {Data: []byte(`{"schema": "olm.package", "name": "p", "defaultChannel": "s"}
{"schema": "olm.channel", "package": "p", "name": "s", "entries": [{"name": "p.2"}, {"name": "p.10a", "replaces": "p.2"}]}
` + b("p.2", "2") + b("p.10a", "10a"))}}
	image, _, err := Choose(context.Background(), fsys, Query{Package: "p"})
	if err != nil || image != "example.com/p.10a" {
		t.Errorf("chose %s, %v; want example.com/p.10a", image, err)
	}
	for _, tc := range []struct {
		a, b string
		want int
	}{{"2", "10a", -1}, {"10a", "2", 1}, {"9", "10", -1}, {"a", "b", -1}, {"1.a", "1.1", 1}, {"", "0", -1}, {"rc", "rc.1", -1}} {
		if got := compareRelease(tc.a, tc.b); got != tc.want {
			t.Errorf("compareRelease(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
