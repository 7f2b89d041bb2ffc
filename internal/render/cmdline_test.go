package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// TestCommandLineRefs: a bundle or catalog named on the command line is an
// existing directory (made absolute, clearing the version) or an image
// with its registry; anything else is refused naming the flag and the fix.
func TestCommandLineRefs(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir("bundle", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("file", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := spec.Spec{Version: "v1"}
	if err := SetBundleArg(&s, "--bundle", "bundle"); err != nil || s.Bundle != filepath.Join(dir, "bundle") || s.Version != "" {
		t.Errorf("existing directory without ./: %v, bundle %q, version %q", err, s.Bundle, s.Version)
	}
	s = spec.Spec{Version: "v1"}
	if err := SetBundleArg(&s, "--bundle", "quay.io/org/op-bundle:v2"); err != nil || s.Bundle != "quay.io/org/op-bundle:v2" || s.Version != "v1" {
		t.Errorf("image: %v, bundle %q, version %q", err, s.Bundle, s.Version)
	}
	for _, c := range []struct{ flag, ref, want string }{
		{"--bundle", "bundel", "--bundle bundel: no such directory, and not an image reference (it names no registry): give the bundle directory relative to the working directory, or the image with its registry (quay.io/org/bundel, docker.io/org/bundel for Docker Hub)"},
		{"--bundle", "./missing", "--bundle ./missing: no such directory (a path is relative to the working directory)"},
		{"--to-bundle", "./file", "--to-bundle ./file: not a directory: give a bundle directory (holding manifests/ and metadata/) or an image reference"},
	} {
		err := SetBundleArg(&spec.Spec{}, c.flag, c.ref)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s %s:\n got %v\nwant %s", c.flag, c.ref, err, c.want)
		}
	}
	if ref, err := CatalogArg("./bundle"); err != nil || ref != filepath.Join(dir, "bundle") {
		t.Errorf("catalog directory: %q, %v", ref, err)
	}
	if _, err := CatalogArg("./file"); err == nil || !strings.Contains(err.Error(), "give a file-based catalog's directory") {
		t.Errorf("catalog file: %v", err)
	}
	if err := CheckRefArg("", "org/op"); err == nil || !strings.HasPrefix(err.Error(), "org/op: no such directory") {
		t.Errorf("argument without a registry: %v", err)
	}
}

// TestUntagged: a tag or digest is dropped and said; a bare repository or
// a reference that does not parse comes back as it is.
func TestUntagged(t *testing.T) {
	for ref, want := range map[string]struct {
		repo string
		had  bool
	}{
		"quay.io/org/op:v1": {"quay.io/org/op", true},
		"quay.io/org/op@sha256:" + strings.Repeat("a", 64): {"quay.io/org/op", true},
		"quay.io/org/op":  {"quay.io/org/op", false},
		"Not A Reference": {"Not A Reference", false},
	} {
		if repo, had := Untagged(ref); repo != want.repo || had != want.had {
			t.Errorf("Untagged(%q) = %q, %v; want %q, %v", ref, repo, had, want.repo, want.had)
		}
	}
}

// TestSourceDir: the one rule every command uses for its DIR argument.
func TestSourceDir(t *testing.T) {
	tmp := t.TempDir()
	app := filepath.Join(tmp, "app")
	os.MkdirAll(app, 0o755)
	os.WriteFile(filepath.Join(app, "olm-cmp.yaml"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(app, "other.yaml"), []byte("x"), 0o644)
	yml := filepath.Join(tmp, "yml")
	os.MkdirAll(yml, 0o755)
	os.WriteFile(filepath.Join(yml, "olm-cmp.yml"), []byte("x"), 0o644)
	for _, tc := range []struct {
		arg       string
		want, err string
	}{
		{"", ".", ""},
		{app, app, ""},
		{filepath.Join(app, "olm-cmp.yaml"), app, ""},
		{"examples/lws", "", "examples/lws: no such directory"},
		{filepath.Join(tmp, "gone", "olm-cmp.yaml"), "", filepath.Join(tmp, "gone", "olm-cmp.yaml") + ": no such file"},
		{filepath.Join(app, "olm-cmp.yml"), "", filepath.Join(app, "olm-cmp.yml") + ": no such file"},
		{filepath.Join(yml, "olm-cmp.yml"), "", filepath.Join(yml, "olm-cmp.yml") + ": olm-cmp reads olm-cmp.yaml only (the Argo CD plugin discovers applications by that name): rename it to " + filepath.Join(yml, "olm-cmp.yaml")},
		{filepath.Join(app, "nonexist.yaml"), "", filepath.Join(app, "nonexist.yaml") + ": no such file"},
		{filepath.Join(app, "other.yaml"), "", filepath.Join(app, "other.yaml") + " is a file, not a source directory: give the directory holding olm-cmp.yaml (or that olm-cmp.yaml itself)"},
	} {
		got, err := SourceDirArg(tc.arg)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: want error %q, got %q, %v", tc.arg, tc.err, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.arg, got, err, tc.want)
		}
	}
}

// TestNamesSource: what inspect takes for a source directory or spec file
// rather than a bundle.
func TestNamesSource(t *testing.T) {
	tmp := t.TempDir()
	write := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	app, yml, bundleYml, b := filepath.Join(tmp, "app"), filepath.Join(tmp, "yml"), filepath.Join(tmp, "bundleyml"), filepath.Join(tmp, "bundle")
	write(filepath.Join(app, spec.FileName))
	write(filepath.Join(yml, "olm-cmp.yml"))
	write(filepath.Join(bundleYml, "olm-cmp.yml"))
	write(filepath.Join(bundleYml, "metadata", "annotations.yaml"))
	write(filepath.Join(b, "metadata", "annotations.yaml"))
	for arg, want := range map[string]bool{
		app: true, filepath.Join(app, spec.FileName): true,
		yml: true, filepath.Join(yml, "olm-cmp.yml"): true,
		bundleYml: false, b: false, filepath.Join(tmp, "gone"): false,
	} {
		if got := NamesSource(arg); got != want {
			t.Errorf("NamesSource(%s) = %v, want %v", arg, got, want)
		}
	}
}
