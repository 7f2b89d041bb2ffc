package deploy_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/hack/sidecar"
)

// TestGeneratedHealthKustomize: the merge docs/plugin.md ("Generated health checks") shows
// works: a kustomization with the olm-cmp component and the patch `olm-cmp health-checks`
// writes (internal/healthcheck/testdata/argocd-cm.yaml, for three corpus operators) ends with
// one argocd-cm holding both sets of checks.
func TestGeneratedHealthKustomize(t *testing.T) {
	generated, err := os.ReadFile("../internal/healthcheck/testdata/argocd-cm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var patch struct{ Data map[string]string }
	if err := yaml.Unmarshal(generated, &patch); err != nil || len(patch.Data) == 0 {
		t.Fatalf("the generated patch has no data (%v)", err)
	}
	want := wantData(healthScripts(t))
	for k, v := range patch.Data {
		if _, dup := want[k]; dup {
			t.Fatalf("%s: generated for a kind deploy/argocd already covers", k)
		}
		want[k] = v
	}

	fs, err := sidecar.LoadDeploy(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := "/deploy/kustomize/examples/generated-health"
	if err := fs.WriteFile(dir+"/argocd-cm-operators.yaml", generated); err != nil {
		t.Fatal(err)
	}
	kust := `namespace: argocd
resources:
- ` + sidecar.StandIn + `
components:
- ../../components/olm-cmp
patches:
- path: argocd-cm-operators.yaml
`
	if err := fs.WriteFile(dir+"/kustomization.yaml", []byte(kust)); err != nil {
		t.Fatal(err)
	}
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, dir)
	if err != nil {
		t.Fatalf("kustomize build: %v", err)
	}
	var got map[string]string
	for _, r := range res.Resources() {
		if r.GetKind() == "ConfigMap" && r.GetName() == "argocd-cm" {
			got = r.GetDataMap()
		}
	}
	if !reflect.DeepEqual(got, want) {
		var keys []string
		for k := range got {
			keys = append(keys, strings.TrimPrefix(k, "resource.customizations.health."))
		}
		t.Errorf("argocd-cm has %v: want the hand-written and the generated checks, script for script", keys)
	}
}
