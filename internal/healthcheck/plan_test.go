package healthcheck

import (
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const conditionsStatus = `type: object
properties:
  conditions:` + metaConditions

// kindCRD is crd() for group/kind.
func kindCRD(t *testing.T, group, kind, status string) *apiextensionsv1.CustomResourceDefinition {
	c := crd(t, status)
	c.Spec.Group, c.Spec.Names.Kind = group, kind
	c.Spec.Names.Plural = strings.ToLower(kind) + "s"
	c.Name = c.Spec.Names.Plural + "." + group
	return c
}

func csvOwning(internal string, crds ...*apiextensionsv1.CustomResourceDefinition) *v1alpha1.ClusterServiceVersion {
	csv := &v1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{}}}
	if internal != "" {
		csv.Annotations[internalObjectsAnnotation] = internal
	}
	for _, c := range crds {
		csv.Spec.CustomResourceDefinitions.Owned = append(csv.Spec.CustomResourceDefinitions.Owned,
			v1alpha1.CRDDescription{Name: c.Name, Kind: c.Spec.Names.Kind, Version: "v1"})
	}
	return csv
}

// TestPlan: each owned kind gets a check or one outcome line, in a fixed order; kinds not owned
// are left alone.
func TestPlan(t *testing.T) {
	widget := kindCRD(t, "example.com", "Widget", conditionsStatus)
	inner := kindCRD(t, "example.com", "Inner", conditionsStatus)
	noStatus := kindCRD(t, "example.com", "Config", "")
	seed := kindCRD(t, "sailoperator.io", "Istio", conditionsStatus)
	builtin := kindCRD(t, "cert-manager.io", "Certificate", conditionsStatus)
	wildcard := kindCRD(t, "pkg.crossplane.io", "Provider2", conditionsStatus) // *.crossplane.io/*
	required := kindCRD(t, "other.io", "Thing", conditionsStatus)
	a := Source{Name: "a", CSV: csvOwning(`["inners.example.com"]`, widget, inner, noStatus, seed, builtin, wildcard),
		CRDs: []*apiextensionsv1.CustomResourceDefinition{widget, inner, noStatus, seed, builtin, wildcard, required}}
	b := Source{Name: "b", CSV: csvOwning("", widget), CRDs: []*apiextensionsv1.CustomResourceDefinition{widget}}

	rep, err := Plan([]Source{b, a})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Checks) != 1 || rep.Checks[0].Key != "resource.customizations.health.example.com_Widget" || rep.Checks[0].Source != "b" {
		t.Fatalf("checks %+v, want example.com_Widget once, from b", rep.Checks)
	}
	var lines []string
	for _, o := range rep.Outcomes {
		lines = append(lines, o.Line())
	}
	want := []string{
		"skipped: Certificate.cert-manager.io (Argo CD 3.6.1 has a built-in check; an argocd-cm entry would replace it)",
		"cannot judge: Config.example.com (no status in its schema)",
		"skipped: Inner.example.com (internal: the CSV lists it in operators.operatorframework.io/internal-objects; the operator creates it, an Application does not)",
		"skipped: Provider2.pkg.crossplane.io (Argo CD 3.6.1 has a built-in check; an argocd-cm entry would replace it)",
		"skipped: Istio.sailoperator.io (olm-cmp ships a hand-written check: deploy/argocd/resource-customizations.yaml)",
	}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("outcomes:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}

	// the same kind with another schema from a second spec cannot get two checks
	other := kindCRD(t, "example.com", "Widget", `type: object
properties:
  phase: {type: string}`)
	c := Source{Name: "c", CSV: csvOwning("", other), CRDs: []*apiextensionsv1.CustomResourceDefinition{other}}
	_, err = Plan([]Source{b, c})
	if err == nil || err.Error() != "Widget.example.com: b and c render different schemas for it (version v1 and v1), so their checks differ: run health-checks on one of them" {
		t.Errorf("conflict: got %v", err)
	}

	bad := Source{Name: "d", CSV: csvOwning(`not json`, widget), CRDs: []*apiextensionsv1.CustomResourceDefinition{widget}}
	if _, err := Plan([]Source{bad}); err == nil || err.Error() != "d: the CSV's annotation operators.operatorframework.io/internal-objects is not a JSON list of CRD names: fix the bundle's CSV" {
		t.Errorf("bad annotation: got %v", err)
	}
}

// TestHandWrittenMatchesDeploy: HandWritten is exactly the kinds of deploy/argocd/health/*.lua.
func TestHandWrittenMatchesDeploy(t *testing.T) {
	files, err := filepath.Glob("../../deploy/argocd/health/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("no deploy/argocd/health/*.lua (%v)", err)
	}
	var kinds []string
	for _, f := range files {
		base := strings.TrimSuffix(filepath.Base(f), ".lua")
		if strings.HasPrefix(base, "_") {
			continue
		}
		group, kind, _ := strings.Cut(base, "_")
		kinds = append(kinds, group+"/"+kind)
	}
	sort.Strings(kinds)
	if !reflect.DeepEqual(kinds, HandWritten) {
		t.Errorf("HandWritten = %v, deploy/argocd/health has %v", HandWritten, kinds)
	}
}

// TestArgoCDBuiltin: the embedded list is sorted, unique, group/Kind shaped, and knows the
// kinds the shared corpus needs (test/argocd-v3 compares it with Argo CD's own files).
func TestArgoCDBuiltin(t *testing.T) {
	list := ArgoCDBuiltin()
	if len(list) < 200 {
		t.Fatalf("%d entries: the list is truncated", len(list))
	}
	if !slices.IsSorted(list) || len(slices.Compact(slices.Clone(list))) != len(list) {
		t.Error("argocd-builtin.txt must be sorted and unique")
	}
	for _, l := range list {
		if g, k, ok := strings.Cut(l, "/"); !ok || g == "" || k == "" || strings.Contains(k, "/") {
			t.Errorf("%q: want group/Kind", l)
		}
	}
	for _, k := range [][2]string{{"cert-manager.io", "Certificate"}, {"pkg.crossplane.io", "Provider"}, {"apiextensions.crossplane.io", "Composition"}} {
		if !hasBuiltin(k[0], k[1]) {
			t.Errorf("%s/%s: Argo CD 3.6.1 has a check for it", k[0], k[1])
		}
	}
	for _, k := range [][2]string{{"dynatrace.com", "DynaKube"}, {"crossplane.io.example", "X"}, {"hco.kubevirt.io", "HyperConverged"}} {
		if hasBuiltin(k[0], k[1]) {
			t.Errorf("%s/%s: no built-in check expected", k[0], k[1])
		}
	}
}

func TestNewSource(t *testing.T) {
	manifests := []string{
		"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n",
		"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions: [{name: v1, served: true, storage: true}]\n",
		"apiVersion: example.com/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: not-a-crd\n",
	}
	s, err := NewSource("dir", &v1alpha1.ClusterServiceVersion{}, manifests)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.CRDs) != 1 || s.CRDs[0].Spec.Names.Kind != "Widget" {
		t.Errorf("got %d CRDs, want the one apiextensions CRD", len(s.CRDs))
	}
	if _, err := NewSource("dir", nil, []string{"a: [\n"}); err == nil || !strings.HasPrefix(err.Error(), "dir: a rendered manifest does not read back") {
		t.Errorf("got %v", err)
	}
}
