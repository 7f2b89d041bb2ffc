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

// A bundle argument that is neither a directory nor an image with a
// registry (a mistyped path) is refused with the fix before any registry
// is asked, in every command that takes one; inspect takes the spec file
// as render does, and names an olm-cmp.yml with the rename.
func TestBundleArgumentMistakes(t *testing.T) {
	const fix = "examples/demo/bundl: no such directory, and not an image reference (it names no registry): give the bundle directory relative to the working directory, or the image with its registry (quay.io/org/bundl, docker.io/org/bundl for Docker Hub)"
	for _, args := range [][]string{
		{"inspect", "examples/demo/bundl"},
		{"init", "examples/demo/bundl", "-d", t.TempDir()},
		{"render", "--bundle", "examples/demo/bundl", "-n", "x"},
		{"diff", "../../examples/demo", "--to-bundle", "examples/demo/bundl"},
	} {
		_, _, err := run(t, args...)
		flag := ""
		if strings.HasPrefix(args[1], "--") {
			flag = args[1] + " "
		} else if args[0] == "diff" {
			flag = "--to-bundle "
		}
		if want := flag + fix; err == nil || err.Error() != want {
			t.Errorf("%s:\nwant %s\ngot  %v", strings.Join(args, " "), want, err)
		}
	}

	out, _, err := run(t, "inspect", "../../examples/demo/olm-cmp.yaml")
	if err != nil || !strings.Contains(out, "Package:          greeter-operator\n") {
		t.Errorf("inspect DIR/olm-cmp.yaml: %v\n%s", err, out)
	}
	app := t.TempDir()
	doc := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ./bundle\n  namespace: x\n"
	if err := os.WriteFile(filepath.Join(app, "olm-cmp.yml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = run(t, "inspect", app)
	if want := "olm-cmp.yaml not found in " + app + ", but olm-cmp.yml is there: rename it to olm-cmp.yaml (olm-cmp and its Argo CD plugin look for that name only)"; err == nil || err.Error() != want {
		t.Errorf("inspect DIR with olm-cmp.yml:\nwant %s\ngot  %v", want, err)
	}
}

// A value a flag gave is named by its flag, not by the spec field it
// replaced (the file does not hold it); without a spec file, the missing
// namespace names -n.
func TestFlagValueErrorsNameTheFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"render", "../../examples/demo", "-n", "Flux"},
			`--namespace: spec.namespace "Flux": not a valid namespace name: use lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters, e.g. "flux"`},
		{[]string{"render", "../../examples/demo", "--certificate-provider", "certmanager"},
			`--certificate-provider: spec.certificateProvider "certmanager": must be one of cert-manager, service-ca, none`},
		{[]string{"render", "--bundle", "../../examples/demo/bundle"},
			`spec.namespace is required: the namespace the operator is installed in; without an olm-cmp.yaml, give it with -n NS`},
	} {
		_, _, err := run(t, tc.args...)
		if err == nil || strings.Split(err.Error(), "\n")[0] != tc.want {
			t.Errorf("%s:\nwant %s\ngot  %v", strings.Join(tc.args, " "), tc.want, err)
		}
	}
}

// A --catalog directory is relative to the working directory, with or
// without ./ (as a --bundle directory is), and one that does not exist,
// without a registry, is refused with the fix.
func TestCatalogArgument(t *testing.T) {
	t.Run("without ./", func(t *testing.T) {
		t.Chdir("../..")
		_, _, err := run(t, "inspect", "--catalog", "internal/render/testdata/catalog", "--package", "greeter-operatr")
		if want := `catalog: package "greeter-operatr" not found; the catalog's packages: evil, greeter-operator`; err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("inspect --catalog DIR without ./: want ...%s, got %v", want, err)
		}
	})
	_, _, err := run(t, "inspect", "--catalog", "../../internal/render/testdata/catalog", "--package", "greeter-operatr")
	if want := `catalog: package "greeter-operatr" not found; the catalog's packages: evil, greeter-operator`; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("inspect --catalog ../DIR: want ...%s, got %v", want, err)
	}
	for _, args := range [][]string{
		{"inspect", "--catalog", "testdata/catlog", "--package", "p"},
		{"render", "../../examples/demo", "--catalog", "testdata/catlog", "--package", "p"},
		{"init", "--catalog", "testdata/catlog", "--package", "p", "-d", t.TempDir()},
	} {
		_, _, err := run(t, args...)
		want := "--catalog testdata/catlog: no such directory, and not an image reference (it names no registry): give the catalog directory relative to the working directory, or the image with its registry (quay.io/org/catlog, docker.io/org/catlog for Docker Hub)"
		if err == nil || err.Error() != want {
			t.Errorf("%s:\nwant %s\ngot  %v", strings.Join(args, " "), want, err)
		}
	}
}

// A bundle directory given where a source directory is expected says what
// to run instead: init writes its spec, --bundle renders it alone.
func TestBundleDirWhereSpecDirExpected(t *testing.T) {
	const b = "../../examples/demo/bundle"
	want := "olm-cmp.yaml not found in " + b + ": it is a bundle directory (it has metadata/annotations.yaml), not a source directory: write a spec for it with olm-cmp init " + b + " -d DIR, or render it alone with olm-cmp render --bundle " + b + " -n NAMESPACE"
	for _, args := range [][]string{{"render", b}, {"health-checks", b}, {"resolve", b}} {
		if _, _, err := run(t, args...); err == nil || err.Error() != want {
			t.Errorf("%s:\nwant %s\ngot  %v", strings.Join(args, " "), want, err)
		}
	}
}
