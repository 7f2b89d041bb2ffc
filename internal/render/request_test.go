package render

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// TestLoadRequest: a source directory's spec with the command line's
// overrides: their notes returned, a broken file judged on the spec they
// make, a directory without olm-cmp.yaml accepted only when the flags name
// the bundle, a bundle directory given instead of a source directory
// refused with the fix, and a validation error reworded by Explain.
func TestLoadRequest(t *testing.T) {
	demo, err := filepath.Abs("../../examples/demo")
	if err != nil {
		t.Fatal(err)
	}
	api := []string{"v1", "apps/v1"}
	req, notes, err := LoadRequest(demo, RequestOptions{APIVersions: api, Override: func(s *spec.Spec) ([]string, error) {
		s.Namespace = "other"
		return []string{"moved"}, nil
	}})
	if err != nil || req.Name != "greeter-operator" || req.Spec.Namespace != "other" || req.SourceDir != demo || len(req.APIVersions) != 2 || len(notes) != 1 {
		t.Errorf("demo: %v, %+v, notes %q", err, req, notes)
	}

	empty := t.TempDir()
	if _, _, err := LoadRequest(empty, RequestOptions{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no olm-cmp.yaml, no flags: %v", err)
	}
	setBundle := func(s *spec.Spec) ([]string, error) {
		s.Bundle, s.Namespace = "quay.io/org/op:v1", "ns"
		return nil, nil
	}
	if req, _, err := LoadRequest(empty, RequestOptions{Override: setBundle, WithoutFile: true}); err != nil || req.SourceDir != "" || req.Spec.Bundle != "quay.io/org/op:v1" {
		t.Errorf("no olm-cmp.yaml, the flags name the bundle: %v, %+v", err, req)
	}

	bundleDir := filepath.Join(demo, "bundle")
	want := spec.FileName + " not found in " + bundleDir + ": it is a bundle directory"
	if _, _, err := LoadRequest(bundleDir, RequestOptions{}); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("a bundle directory:\n got %v\nwant %s…", err, want)
	}

	broken := t.TempDir()
	text := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata:\n  name: x\nspec:\n  bundle: quay.io/org/op:v1\n"
	if err := os.WriteFile(filepath.Join(broken, spec.FileName), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	explained := errors.New("explained")
	_, _, err = LoadRequest(broken, RequestOptions{Explain: func(noFile bool, err error) error {
		if noFile || !strings.Contains(err.Error(), "spec.namespace") {
			t.Errorf("Explain(%v, %v)", noFile, err)
		}
		return explained
	}})
	if err != explained {
		t.Errorf("no namespace: %v, want Explain's error", err)
	}
	setNS := func(s *spec.Spec) ([]string, error) { s.Namespace = "ns"; return []string{"n"}, nil }
	if req, notes, err := LoadRequest(broken, RequestOptions{Override: setNS}); err != nil || req.Spec.Namespace != "ns" || len(notes) != 1 {
		t.Errorf("no namespace in the file, -n given: %v, %+v", err, req)
	}
}
