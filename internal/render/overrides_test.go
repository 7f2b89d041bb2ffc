package render

import (
	"slices"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// TestOverridesApply: a flag sets its field and replaces what its value
// makes meaningless, saying so; a flag not given changes nothing.
func TestOverridesApply(t *testing.T) {
	str := func(v string) *string { return &v }
	digest := "sha256:" + strings.Repeat("a", 64)

	s := spec.Spec{Catalog: "quay.io/org/cat:v1", Package: "op", Channel: "stable", Version: "1.x", Digest: digest, Namespace: "a", WatchNamespaces: []string{"a", "b"}}
	watched := s.WatchNamespaces
	notes, err := Overrides{Bundle: str("quay.io/org/op-bundle:v2"), Namespace: str("c")}.Apply(&s)
	if err != nil {
		t.Fatal(err)
	}
	want := spec.Spec{Bundle: "quay.io/org/op-bundle:v2", Namespace: "c", WatchNamespaces: []string{"c", "b"}}
	if s.Bundle != want.Bundle || s.Catalog != "" || s.Package != "" || s.Channel != "" || s.Version != "" || s.Digest != "" || s.Namespace != "c" || !slices.Equal(s.WatchNamespaces, want.WatchNamespaces) {
		t.Errorf("spec: %+v", s)
	}
	if watched[0] != "a" {
		t.Error("the spec's watched namespaces were changed in place")
	}
	for _, w := range []string{"--bundle quay.io/org/op-bundle:v2 replaces the catalog", "spec.digest " + digest + " pinned the spec's own bundle", `-n c: spec.watchNamespaces[0] "a" was the install namespace`} {
		if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, w) }) {
			t.Errorf("no note %q in %q", w, notes)
		}
	}

	s = spec.Spec{Bundle: "quay.io/org/op-bundle:v1", Namespace: "a", Strict: true}
	notes, err = Overrides{Version: str("v2")}.Apply(&s)
	if err != nil || s.Bundle != "quay.io/org/op-bundle" || s.Version != "v2" || s.Namespace != "a" || !s.Strict || len(notes) != 1 {
		t.Errorf("--version over a tagged bundle: %v, %+v, %q", err, s, notes)
	}

	if _, err := (Overrides{Bundle: str("no-registry")}).Apply(&spec.Spec{}); err == nil || !strings.HasPrefix(err.Error(), "--bundle no-registry: no such directory") {
		t.Errorf("a bundle that is neither: %v", err)
	}
}
