package requirements

import (
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// TestSignatureFindings: each unverified image or directory is one warning
// under signature, by repository (so an accept entry outlives version
// bumps), naming the scope and what the verifier found; accept entries of
// the category match it.
func TestSignatureFindings(t *testing.T) {
	in := Input{Spec: spec.Spec{Accept: []string{"signature:quay.io/org/*"}}, Unverified: []Unverified{
		{Role: "catalog", Image: "quay.io/org/catalog", Digest: "sha256:aa", Scope: "quay.io", Problem: "no signature found"},
		{Role: "bundle", Image: "./bundle", Dir: true, Problem: "a directory is never signed"},
	}}
	fs := signatureFindings(in)
	want := []string{
		"requirement signature:quay.io/org/catalog (from catalog image quay.io/org/catalog@sha256:aa): not verified by the trust policy (scope quay.io, mode warn): no signature found; fix: sign it with a key the scope trusts (docs/signatures.md); or accept it knowingly in spec.accept (signature:quay.io/org/catalog)",
		"requirement signature:./bundle (from bundle directory ./bundle): a directory is never signed; fix: render the bundle from a signed image; or accept it knowingly in spec.accept (signature:./bundle)",
	}
	if len(fs) != len(want) {
		t.Fatalf("%d findings: %+v", len(fs), fs)
	}
	for i, f := range fs {
		if f.Line() != want[i] || f.Severity != Warning {
			t.Errorf("finding %d:\n got %s (%s)\nwant %s", i, f.Line(), f.Severity, want[i])
		}
	}
	accept := compileAccept(in.Spec.Accept)
	if !accept.matches(fs[0]) || accept.matches(fs[1]) {
		t.Error("signature:quay.io/org/* should accept the catalog image only")
	}
}
