package healthcheck

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// ruleKinds are made-up kinds, one per shape of status schema, whose generated checks
// test/argocd-v3 runs through Argo CD's Lua engine on testdata/rules/samples: the rule's corners
// that the corpus samples do not reach.
var ruleKinds = []struct{ kind, status string }{
	{"Conditions", `type: object
properties:
  observedGeneration: {type: integer}
  conditions:` + metaConditions},
	{"Phase", `type: object
properties:
  phase: {type: string}
  message: {type: string}`},
	{"State", `type: object
properties:
  state: {type: string, enum: [valid, ready, pending, errored, "we\"ird"]}`},
}

// TestRuleFixture keeps testdata/rules/argocd-cm.yaml equal to the checks of ruleKinds.
func TestRuleFixture(t *testing.T) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, k := range ruleKinds {
		crds = append(crds, kindCRD(t, "rules.olm-cmp.dev", k.kind, k.status))
	}
	rep, err := Plan([]Source{{Name: "rules", CSV: csvOwning("", crds...), CRDs: crds}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Checks) != len(ruleKinds) || len(rep.Outcomes) != 0 {
		t.Fatalf("%d checks, outcomes %v: want one check per kind", len(rep.Checks), rep.Outcomes)
	}
	out, err := Render(rep.Checks, FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	goldenFile(t, "testdata/rules/argocd-cm.yaml", out)
}
