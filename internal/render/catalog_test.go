package render

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/catalog"
)

// catalogEnv is an in-process registry holding the demo bundle at the
// versions testdata/catalog lists, and a source directory holding that
// catalog (./catalog) with the registry filled in.
type catalogEnv struct {
	host      string
	sourceDir string
	digests   map[string]string // version → bundle image digest
	loader    *bundle.ImageLoader
}

var catalogVersions = []string{"0.1.0", "0.2.0", "1.0.0"}

func newCatalogEnv(t *testing.T) *catalogEnv {
	t.Helper()
	host, _ := bundletest.NewRegistry(t)
	e := &catalogEnv{host: host, sourceDir: t.TempDir(), digests: map[string]string{}}
	for _, v := range catalogVersions {
		// The demo bundle with its CSV's name and version changed, so the
		// render says which version was chosen.
		dir := filepath.Join(t.TempDir(), "bundle")
		copyTree(t, filepath.Join(demoDir, "bundle"), dir)
		csv := filepath.Join(dir, "manifests", "greeter-operator.clusterserviceversion.yaml")
		data, err := os.ReadFile(csv)
		if err != nil {
			t.Fatal(err)
		}
		out := strings.Replace(string(data), "name: greeter-operator.v0.2.0", "name: greeter-operator.v"+v, 1)
		out = strings.Replace(out, "version: 0.2.0", "version: "+v, 1)
		if out == string(data) && v != "0.2.0" {
			t.Fatal("the demo CSV changed: update newCatalogEnv")
		}
		if err := os.WriteFile(csv, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		e.digests[v] = bundletest.PushDir(t, host, "demo/greeter-bundle", "v"+v, dir)
	}
	// Tag 1.0.0 moves away: only the catalog's digest still names it.
	bundletest.PushDir(t, host, "demo/greeter-bundle", "v1.0.0", filepath.Join(demoDir, "bundle"))

	cat := filepath.Join(e.sourceDir, "catalog")
	copyTree(t, "testdata/catalog", cat)
	fixture := filepath.Join(cat, "greeter-operator.yaml")
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.NewReplacer("REGISTRY", host, "DIGEST_1_0_0", e.digests["1.0.0"]).Replace(string(data)))
	if err := os.WriteFile(fixture, data, 0o644); err != nil {
		t.Fatal(err)
	}
	e.loader = &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}
	return e
}

// request is the demo spec naming the bundle through the catalog at ref.
func (e *catalogEnv) request(t *testing.T, ref, rng, channel string) Request {
	req := demoRequest(t)
	req.SourceDir = e.sourceDir
	req.Spec.Bundle, req.Spec.Catalog, req.Spec.Package = "", ref, "greeter-operator"
	req.Spec.Version, req.Spec.Channel = rng, channel
	return req
}

func (e *catalogEnv) render(t *testing.T, req Request) (*Result, error) {
	t.Helper()
	return (&Renderer{Loader: e.loader}).Render(context.Background(), req)
}

// direct renders the bundle image ref the way a spec naming it would.
func (e *catalogEnv) direct(t *testing.T, ref string) *Result {
	t.Helper()
	req := e.request(t, "", "", "")
	req.Spec.Catalog, req.Spec.Package, req.Spec.Bundle = "", "", ref
	res, err := e.render(t, req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRenderFromCatalogDirectory(t *testing.T) {
	e := newCatalogEnv(t)
	repo := e.host + "/demo/greeter-bundle"
	for _, tc := range []struct {
		rng, channel string
		version      string
		bundle       string // the catalog's image reference
	}{
		{"", "", "1.0.0", repo + "@" + e.digests["1.0.0"]},
		{"0.1.x", "", "0.1.0", repo + ":v0.1.0"},
		{">=0.1.0 <1", "", "0.2.0", repo + ":v0.2.0"},
		{"0.1.0", "", "0.1.0", repo + ":v0.1.0"},
		{"", "stable", "0.2.0", repo + ":v0.2.0"},
		{"<0.2.0", "stable", "0.1.0", repo + ":v0.1.0"},
		{"", "fast", "1.0.0", repo + "@" + e.digests["1.0.0"]},
		{"<1", "fast", "0.2.0", repo + ":v0.2.0"},
	} {
		req := e.request(t, "./catalog", tc.rng, tc.channel)
		res, err := e.render(t, req)
		if err != nil {
			t.Errorf("range %q channel %q: %v", tc.rng, tc.channel, err)
			continue
		}
		digest := e.digests[tc.version]
		if res.Version != tc.version || res.Origin.Digest != digest || res.Origin.Image != repo+"@"+digest {
			t.Errorf("range %q channel %q: rendered %s from %s, want %s from %s", tc.rng, tc.channel, res.Version, res.Origin.Image, tc.version, digest)
		}
		want := catalog.Choice{Ref: "./catalog", Package: "greeter-operator", Channel: tc.channel, Range: tc.rng, Bundle: tc.bundle, Version: tc.version}
		if res.Catalog == nil || *res.Catalog != want {
			t.Errorf("range %q channel %q: Catalog = %+v, want %+v", tc.rng, tc.channel, res.Catalog, want)
		}
		// The annotations name the bundle image rendered, pinned.
		if !strings.Contains(string(res.YAML()), AnnotationSource+": '"+repo+"@"+digest+"'") {
			t.Errorf("range %q channel %q: source annotation does not name %s:\n%s", tc.rng, tc.channel, digest, res.Manifests[0])
		}
		// Byte for byte what naming the chosen bundle directly renders.
		if got, want := string(res.YAML()), string(e.direct(t, tc.bundle).YAML()); got != want {
			t.Errorf("range %q channel %q: output differs from rendering %s directly", tc.rng, tc.channel, tc.bundle)
		}
	}
}

func TestRenderFromCatalogImage(t *testing.T) {
	e := newCatalogEnv(t)
	catalogDigest := bundletest.Push(t, e.host, "demo/catalog", "latest",
		bundletest.CatalogImage(t, filepath.Join(e.sourceDir, "catalog"), "/configs", bundletest.File("bin/opm", "not really")))
	ref := e.host + "/demo/catalog:latest"
	res, err := e.render(t, e.request(t, ref, "0.2.x", "stable"))
	if err != nil {
		t.Fatal(err)
	}
	repo := e.host + "/demo/greeter-bundle"
	want := catalog.Choice{Ref: ref, Image: e.host + "/demo/catalog@" + catalogDigest, Package: "greeter-operator",
		Channel: "stable", Range: "0.2.x", Bundle: repo + ":v0.2.0", Version: "0.2.0"}
	if res.Catalog == nil || *res.Catalog != want {
		t.Errorf("Catalog = %+v, want %+v", res.Catalog, want)
	}
	if res.Version != "0.2.0" || res.Origin.Digest != e.digests["0.2.0"] {
		t.Errorf("rendered %s %s, want 0.2.0 %s", res.Version, res.Origin.Digest, e.digests["0.2.0"])
	}
	if got, want := string(res.YAML()), string(e.direct(t, repo+":v0.2.0").YAML()); got != want {
		t.Error("output differs from rendering the chosen bundle directly")
	}
	if s := res.Catalog.String(); !strings.Contains(s, "greeter-operator 0.2.0") || !strings.Contains(s, catalogDigest) {
		t.Errorf("Catalog.String() = %q", s)
	}

	// The catalog tag moves to one without 0.2.0 in stable: the next render
	// follows it (tags are resolved every time).
	moved := filepath.Join(t.TempDir(), "catalog")
	copyTree(t, filepath.Join(e.sourceDir, "catalog"), moved)
	data, _ := os.ReadFile(filepath.Join(moved, "greeter-operator.yaml"))
	os.WriteFile(filepath.Join(moved, "greeter-operator.yaml"), []byte(strings.Replace(string(data),
		"  - name: greeter-operator.v0.2.0\n    replaces: greeter-operator.v0.1.0\n", "", 1)), 0o644)
	bundletest.Push(t, e.host, "demo/catalog", "latest", bundletest.CatalogImage(t, moved, "/configs"))
	res, err = e.render(t, e.request(t, ref, "", "stable"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != "0.1.0" {
		t.Errorf("after the catalog tag moved: rendered %s, want 0.1.0", res.Version)
	}
}

func TestRenderFromCatalogErrors(t *testing.T) {
	e := newCatalogEnv(t)
	for _, tc := range []struct {
		name    string
		mutate  func(*Request)
		r       *Renderer
		wants   []string
		message string
	}{
		{name: "no match", mutate: func(r *Request) { r.Spec.Version, r.Spec.Channel = ">=2", "fast" },
			wants: []string{`spec.catalog "./catalog"`, `package "greeter-operator"`, "channel fast", `">=2"`, "versions: 0.2.0, 1.0.0"}},
		{name: "no match in any channel", mutate: func(r *Request) { r.Spec.Version = "0.3.x" },
			wants: []string{"any channel", `"0.3.x"`, "versions: 0.1.0, 0.2.0, 1.0.0"}},
		{name: "no channel", mutate: func(r *Request) { r.Spec.Channel = "beta" },
			wants: []string{`no channel "beta"`, "fast, stable"}},
		{name: "no package", mutate: func(r *Request) { r.Spec.Package = "nope" },
			wants: []string{`package "nope" not found`}},
		{name: "bad range", mutate: func(r *Request) { r.Spec.Version = "x.y" },
			wants: []string{`spec.version "x.y": not a version range`}},
		{name: "bundle set too", mutate: func(r *Request) { r.Spec.Bundle = "quay.io/x/y:1" },
			wants: []string{"spec.bundle and spec.catalog are both set"}},
		{name: "catalog dir missing", mutate: func(r *Request) { r.Spec.Catalog = "./nope" },
			wants: []string{`spec.catalog "./nope": catalog directory not found`}},
		{name: "catalog dir outside the repository", mutate: func(r *Request) {
			r.RootDir = filepath.Join(r.SourceDir, "catalog")
			r.SourceDir = filepath.Join(r.SourceDir, "catalog")
			r.Spec.Catalog = "../"
		}, wants: []string{"the catalog directory must be inside the repository"}},
		{name: "entry is a path", mutate: func(r *Request) { r.Spec.Package = "evil" },
			wants: []string{`image "/etc", which is not an image reference`}},
		{name: "catalog image without a loader", r: &Renderer{}, mutate: func(r *Request) { r.Spec.Catalog = "quay.io/org/catalog:latest" },
			wants: []string{"no registry access"}},
		{name: "catalog image missing", mutate: func(r *Request) { r.Spec.Catalog = e.host + "/demo/nope:latest" },
			wants: []string{`spec.catalog "` + e.host + `/demo/nope:latest"`, "not found"}},
		{name: "chosen image without a loader", r: &Renderer{},
			wants: []string{"chose the bundle image " + e.host + "/demo/greeter-bundle@", "no registry access"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := e.request(t, "./catalog", "", "")
			if tc.mutate != nil {
				tc.mutate(&req)
			}
			r := tc.r
			if r == nil {
				r = &Renderer{Loader: e.loader}
			}
			res, err := r.Render(context.Background(), req)
			if err == nil {
				t.Fatalf("rendered %s", res.Version)
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestRenderFromCatalogBrokenPromises: a catalog whose entry maps a version
// to another version's image, or that names two bundles alike (which let a
// spec asking for exactly 0.2.0 render 0.1.0), fails the render, naming the
// bundle and the fix, instead of rendering the wrong CSV.
func TestRenderFromCatalogBrokenPromises(t *testing.T) {
	e := newCatalogEnv(t)
	fixture := filepath.Join(e.sourceDir, "catalog", "greeter-operator.yaml")
	orig, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	repo := e.host + "/demo/greeter-bundle"
	for _, tc := range []struct {
		name, extra, rng string
		wants            []string
	}{
		{"version mapped to another image", `---
schema: olm.bundle
name: greeter-operator.v0.3.0
package: greeter-operator
image: ` + repo + `:v0.1.0
properties:
  - type: olm.package
    value: {packageName: greeter-operator, version: 0.3.0}
`, "0.3.0", []string{"bundle " + repo + ":v0.1.0 (greeter-operator 0.3.0", "the catalog promised version 0.3.0", "greeter-operator.v0.1.0 of version 0.1.0", "fix the catalog"}},
		{"two bundles of the same name", `---
schema: olm.bundle
name: greeter-operator.v0.2.0
package: greeter-operator
image: ` + repo + `:v0.1.0
properties:
  - type: olm.package
    value: {packageName: greeter-operator, version: 0.1.0}
`, "0.2.0", []string{`package "greeter-operator" has two bundles named "greeter-operator.v0.2.0"`, "version 0.2.0 at greeter-operator.yaml document 5, version 0.1.0 at greeter-operator.yaml document 7", "opm validate refuses this catalog"}},
		{"channel entry without a bundle", `---
schema: olm.channel
name: beta
package: greeter-operator
entries:
  - name: greeter-operator.v9.0.0
`, "", []string{`channel "beta" lists bundle "greeter-operator.v9.0.0", which the package does not have`}},
		{"package declared twice", `---
schema: olm.package
name: greeter-operator
`, "", []string{`package "greeter-operator" is declared 2 times`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(fixture, append(slices.Clone(orig), tc.extra...), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := e.render(t, e.request(t, "./catalog", tc.rng, ""))
			if err == nil {
				t.Fatalf("rendered %s", res.Version)
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}
