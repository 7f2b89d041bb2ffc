package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/inspect"
)

// catalogFixture pushes the demo bundle to an in-process registry and writes
// a catalog directory listing it as greeter-operator 0.2.0 (and a 0.1.0 whose
// image does not exist, so choosing it fails loudly).
func catalogFixture(t *testing.T) (host, dir string) {
	t.Helper()
	host, _ = bundletest.NewRegistry(t)
	bundletest.PushDir(t, host, "demo/greeter-bundle", "v0.2.0", "../../examples/demo/bundle")
	dir = t.TempDir()
	os.MkdirAll(filepath.Join(dir, "catalog"), 0o755)
	fbc := `{"schema": "olm.package", "name": "greeter-operator"}
{"schema": "olm.channel", "name": "stable", "package": "greeter-operator", "entries": [{"name": "g.v0.1.0"}, {"name": "g.v0.2.0", "replaces": "g.v0.1.0"}]}
{"schema": "olm.bundle", "name": "g.v0.1.0", "package": "greeter-operator", "image": "` + host + `/demo/greeter-bundle:v0.1.0", "properties": [{"type": "olm.package", "value": {"packageName": "greeter-operator", "version": "0.1.0"}}]}
{"schema": "olm.bundle", "name": "g.v0.2.0", "package": "greeter-operator", "image": "` + host + `/demo/greeter-bundle:v0.2.0", "properties": [{"type": "olm.package", "value": {"packageName": "greeter-operator", "version": "0.2.0"}}]}
`
	if err := os.WriteFile(filepath.Join(dir, "catalog", "catalog.json"), []byte(fbc), 0o644); err != nil {
		t.Fatal(err)
	}
	return host, dir
}

func TestRenderCatalogFlags(t *testing.T) {
	host, dir := catalogFixture(t)
	out, stderr, err := run(t, "render", t.TempDir(), "--catalog", filepath.Join(dir, "catalog"), "--package", "greeter-operator",
		"--channel", "stable", "--version", ">=0.2.0", "-n", "demo", "--insecure-registry", host)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "olm-cmp.dev/package: 'greeter-operator@0.2.0'") || !strings.Contains(out, host+"/demo/greeter-bundle@sha256:") {
		t.Errorf("render output does not come from the chosen bundle:\n%.600s", out)
	}
	if !strings.Contains(stderr, "chose greeter-operator 0.2.0 (channel stable, version >=0.2.0) from catalog") {
		t.Errorf("stderr does not say what the catalog chose:\n%s", stderr)
	}
	// The range picks 0.1.0, whose image is missing: the error names it.
	_, _, err = run(t, "render", t.TempDir(), "--catalog", filepath.Join(dir, "catalog"), "--package", "greeter-operator",
		"--version", "0.1.x", "-n", "demo", "--insecure-registry", host)
	if err == nil || !strings.Contains(err.Error(), "greeter-bundle:v0.1.0 (greeter-operator 0.1.0 from spec.catalog") {
		t.Errorf("missing chosen image: %v", err)
	}
}

func TestRenderCatalogSpecFile(t *testing.T) {
	host, dir := catalogFixture(t)
	doc := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  catalog: ./catalog\n  package: greeter-operator\n  namespace: demo\n"
	os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), []byte(doc), 0o644)
	out, _, err := run(t, "render", dir, "--insecure-registry", host)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "greeter-operator@0.2.0") {
		t.Error("the newest bundle was not rendered")
	}
	// --package without a catalog is a spec error.
	_, _, err = run(t, "render", "../../examples/demo", "--package", "x")
	if err == nil || !strings.Contains(err.Error(), `spec.package "x" is set without spec.catalog`) {
		t.Errorf("--package without catalog: %v", err)
	}
}

func TestInspectCatalog(t *testing.T) {
	host, dir := catalogFixture(t)
	out, _, err := run(t, "inspect", "--catalog", filepath.Join(dir, "catalog"), "--package", "greeter-operator", "--insecure-registry", host)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Catalog entry:") || !strings.Contains(out, "greeter-operator 0.2.0: "+host+"/demo/greeter-bundle:v0.2.0") || !strings.Contains(out, "greeters.greeter.example.com") {
		t.Errorf("inspect --catalog output:\n%s", out)
	}
	out, _, err = run(t, "inspect", "--catalog", filepath.Join(dir, "catalog"), "--package", "greeter-operator", "--version", "0.2.0", "-o", "json", "--insecure-registry", host)
	if err != nil {
		t.Fatal(err)
	}
	var s inspect.Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil || s.Catalog == nil || s.Catalog.Version != "0.2.0" || s.Catalog.Range != "0.2.0" || s.Version != "0.2.0" {
		t.Errorf("json (%v): %+v", err, s.Catalog)
	}
	if _, _, err := run(t, "inspect", "--catalog", filepath.Join(dir, "catalog"), "--package", "nope"); err == nil || !strings.Contains(err.Error(), `package "nope" not found`) {
		t.Errorf("unknown package: %v", err)
	}
	if _, _, err := run(t, "inspect", "../../examples/demo/bundle", "--package", "x"); err == nil || !strings.Contains(err.Error(), "need --catalog") {
		t.Errorf("--package without --catalog: %v", err)
	}
}
