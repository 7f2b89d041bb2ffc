package render

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	kustomizetypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/validate"
)

// A spec named as a person names things: every object olm-cmp names after
// it gets a valid name, which the validate step checks on every render.
func TestSpecNameWithSpacesRendersValidNames(t *testing.T) {
	req := demoRequest(t)
	req.Name = "GitLab Operator"
	req.Spec.AuthReaderBinding = true
	nodes := parse(t, mustRender(t, req).YAML())
	if find(nodes, "ConfigMap", "gitlab-operator-sync-settled") == nil {
		t.Error("no settle hook named gitlab-operator-sync-settled")
	}
	if find(nodes, "RoleBinding", "gitlab-operator-auth-reader") == nil {
		t.Error("no auth-reader binding named gitlab-operator-auth-reader")
	}
}

// The validate step runs on every render: an alm-example its own CRD's
// schema refuses fails the render with one line (loki-operator's LokiStack
// example has no storage.secret.type), and the spec's way out works.
func TestCorpusExampleTheSchemaRefuses(t *testing.T) {
	requireShared(t)
	req := dirRequest(t, filepath.Join(sharedDir, "bundles/loki-operator-0.11.0"), "loki-system")
	req.Spec.Examples = []string{"LokiStack"}
	_, err := (&Renderer{}).Render(context.Background(), req)
	want := `LokiStack loki-system/lokistack-sample: spec.storage.secret.type: Required value: fix the custom resource (the extra manifest, or with spec.patches); an alm-example is rendered only when spec.examples names its kind, so leave that kind out or add "LokiStack/lokistack-sample" to spec.exclude`
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n%v\nwant:\n%s", err, want)
	}
	req.Spec.Exclude = []string{"LokiStack/lokistack-sample"}
	if _, err := (&Renderer{}).Render(context.Background(), req); err != nil {
		t.Errorf("excluded, it still fails: %v", err)
	}
	req.Spec.Exclude = nil
	req.Spec.Patches = []kustomizetypes.Patch{{
		Patch:  `[{"op": "add", "path": "/spec/storage/secret/type", "value": "s3"}]`,
		Target: &kustomizetypes.Selector{ResId: resid.ResId{Gvk: resid.Gvk{Kind: "LokiStack"}}},
	}}
	if _, err := (&Renderer{}).Render(context.Background(), req); err != nil {
		t.Errorf("patched, it still fails: %v", err)
	}
}

// The validate step's cost on a bundle of a few huge CRDs (sail-operator,
// 399 CEL rules) and one of many mid-sized CRDs (kubevirt). The Cold
// benchmarks judge CRDs the process has not seen, as one `olm-cmp render`
// does; the others a render of CRDs the CRD verdict cache holds, as a
// sidecar's next render of the same bundle does.
func BenchmarkValidateSail(b *testing.B) {
	requireShared(b)
	benchValidate(b, dirRequest(b, filepath.Join(sharedDir, "bundles/sailoperator-1.30.3"), "sail-operator"), false)
}

func BenchmarkValidateSailCold(b *testing.B) {
	requireShared(b)
	benchValidate(b, dirRequest(b, filepath.Join(sharedDir, "bundles/sailoperator-1.30.3"), "sail-operator"), true)
}

func BenchmarkValidateKubevirt(b *testing.B) {
	requireShared(b)
	benchValidate(b, dirRequest(b, filepath.Join(sharedDir, "bundles/community-kubevirt-hyperconverged-1.18.1"), "kubevirt-hyperconverged"), false)
}

func BenchmarkValidateKubevirtCold(b *testing.B) {
	requireShared(b)
	benchValidate(b, dirRequest(b, filepath.Join(sharedDir, "bundles/community-kubevirt-hyperconverged-1.18.1"), "kubevirt-hyperconverged"), true)
}

// benchValidate measures the validate step alone, on the objects of a
// render as they reach it (read back from the render's output). cold gives
// every CRD a new description in each iteration, so no verdict is cached.
func benchValidate(b *testing.B, req Request, cold bool) {
	res, err := (&Renderer{}).Render(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	nodes, err := kio.FromBytes(res.YAML())
	if err != nil {
		b.Fatal(err)
	}
	var crds []*yaml.RNode
	for _, n := range nodes {
		if n.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, n)
		}
	}
	if len(crds) == 0 {
		b.Fatal("no CRD in the render")
	}
	// The render above judged its own nodes, whose YAML may differ in
	// style from these: one run before the clock starts fills the cache.
	if _, err := validate.Objects(context.Background(), nil).Filter(nodes); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if cold {
			b.StopTimer()
			for _, n := range crds {
				coldRuns++
				if err := n.PipeE(yaml.Lookup("spec", "versions", "[name="+firstVersion(n)+"]", "schema", "openAPIV3Schema"), yaml.SetField("description", yaml.NewStringRNode(fmt.Sprint("cold run ", coldRuns)))); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
		}
		if _, err := validate.Objects(context.Background(), nil).Filter(nodes); err != nil {
			b.Fatal(err)
		}
	}
}

// coldRuns numbers the cold runs of the process, so no two describe a CRD
// alike.
var coldRuns int

func firstVersion(crd *yaml.RNode) string {
	name, _ := crd.GetString("spec.versions[0].name")
	return name
}
