package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// inspect DIR --bundle DIR2: the spec of DIR, whose bundle is an image
// (here on a registry that cannot exist), with a local copy of the bundle
// instead, so an example can be inspected offline; --bundle alone inspects
// the bundle, and beside a directory without a spec it says what to run.
func TestInspectBundleOverride(t *testing.T) {
	app := t.TempDir()
	doc := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: registry.invalid/org/greeter-bundle\n  version: 0.2.0\n  namespace: greeter-system\n"
	if err := os.WriteFile(filepath.Join(app, "olm-cmp.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "inspect", app, "--bundle", "../../examples/demo/bundle")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Package:          greeter-operator\n") {
		t.Errorf("inspect --bundle:\n%s", out)
	}
	out, _, err = run(t, "inspect", "--bundle", "../../examples/demo/bundle")
	if err != nil || !strings.Contains(out, "Package:          greeter-operator\n") {
		t.Errorf("inspect --bundle alone: %v\n%s", err, out)
	}
	empty := t.TempDir()
	_, _, err = run(t, "inspect", empty, "--bundle", "../../examples/demo/bundle")
	want := "--bundle replaces the bundle of a source directory's olm-cmp.yaml, and " + empty + " has none: inspect the bundle itself (olm-cmp inspect ../../examples/demo/bundle)"
	if err == nil || err.Error() != want {
		t.Errorf("want %s, got %v", want, err)
	}
}
