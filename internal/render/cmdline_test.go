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
