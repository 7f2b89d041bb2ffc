package safety

import (
	"slices"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

func TestAcknowledge(t *testing.T) {
	fs := []Finding{
		{Severity: Error, Rule: "existingFieldRemoval", CRD: "a.example.com", Version: "v1", Path: ".status.x", Message: "field removed"},
		{Severity: Error, Rule: "existingFieldRemoval", CRD: "a.example.com", Version: "v1", Path: ".status.y", Message: "field removed"},
		{Severity: Warning, Rule: "upgradeEdge", Message: "no upgrade edge"},
	}
	unmatched := Acknowledge(fs, []spec.Acknowledgement{
		{Rule: "existingFieldRemoval", CRD: "a.example.com", Version: "v1", Path: ".status.x", Reason: "status only"},
		// Narrow: the same rule and CRD on another version names nothing.
		{Rule: "existingFieldRemoval", CRD: "a.example.com", Version: "v2", Path: ".status.y", Reason: "r"},
		// An empty field matches a finding without one, not any.
		{Rule: "existingFieldRemoval", CRD: "a.example.com", Reason: "r"},
	})
	want := []string{
		`spec.acknowledge[1] "existingFieldRemoval a.example.com v2 .status.y" matched no safety finding of this upgrade: remove it (it was for another bump, or the finding's rule, crd, version or path differ)`,
		`spec.acknowledge[2] "existingFieldRemoval a.example.com" matched no safety finding of this upgrade: remove it (it was for another bump, or the finding's rule, crd, version or path differ)`,
	}
	if !slices.Equal(unmatched, want) {
		t.Errorf("unmatched:\n%q\nwant:\n%q", unmatched, want)
	}
	if fs[0].Acknowledged != "status only" || fs[1].Acknowledged != "" || fs[2].Acknowledged != "" {
		t.Errorf("acknowledged: %+v", fs)
	}
	if !HasErrors(fs) || HasErrors(fs[:1]) {
		t.Error("HasErrors counts an acknowledged error, or not the other one")
	}
	if got, want := fs[0].String(), "error: existingFieldRemoval: CRD a.example.com version v1 path .status.x: field removed (acknowledged: status only)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if fs[0].Fails(Warning) || !fs[2].Fails(Warning) || fs[2].Fails(Error) {
		t.Error("Fails: an acknowledged error never fails; a warning fails at warning only")
	}
}

func TestSameSpec(t *testing.T) {
	obj := func(doc string) bundle.Object {
		n, err := yaml.Parse(doc)
		if err != nil {
			t.Fatal(err)
		}
		return bundle.Object{File: "manifests/c.yaml", RNode: n}
	}
	a := obj("kind: CustomResourceDefinition\nmetadata: {name: a, labels: {v: '1'}}\nspec:\n  group: g\n  versions:\n  - name: v1\n    served: true\n")
	for doc, want := range map[string]bool{
		// Styles and metadata do not count.
		"kind: CustomResourceDefinition\nmetadata: {name: a, labels: {v: '2'}}\nspec: {group: \"g\", versions: [{name: v1, served: true}]}\n": true,
		"kind: CustomResourceDefinition\nmetadata: {name: a}\nspec: {group: g, versions: [{name: v1, served: 'true'}]}\n":                     false,
		"kind: CustomResourceDefinition\nmetadata: {name: a}\nspec: {group: g, versions: [{name: v1, served: false}]}\n":                      false,
		"kind: CustomResourceDefinition\nmetadata: {name: a}\n":                                                                               false,
		// An alias leaves the verdict to the decoded CRDs.
		"kind: CustomResourceDefinition\nmetadata: {name: a}\nx: &g g\nspec: {group: *g, versions: [{name: v1, served: true}]}\n": false,
	} {
		if got := sameSpec(a, obj(doc)); got != want {
			t.Errorf("sameSpec(%q) = %v, want %v", doc, got, want)
		}
	}
}
