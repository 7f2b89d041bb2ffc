package render

import (
	"context"
	"path/filepath"
	"testing"

	kustomizetypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/resid"

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

func BenchmarkValidateSail(b *testing.B) {
	requireShared(b)
	benchValidate(b, dirRequest(b, filepath.Join(sharedDir, "bundles/sailoperator-1.30.3"), "sail-operator"))
}

func BenchmarkValidateKubevirt(b *testing.B) {
	requireShared(b)
	benchValidate(b, dirRequest(b, filepath.Join(sharedDir, "bundles/community-kubevirt-hyperconverged-1.18.1"), "kubevirt-hyperconverged"))
}

// benchValidate measures the validate step alone, on the objects of a
// render as they reach it (read back from the render's output).
func benchValidate(b *testing.B, req Request) {
	res, err := (&Renderer{}).Render(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	nodes, err := kio.FromBytes(res.YAML())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := validate.Objects(nil).Filter(nodes); err != nil {
			b.Fatal(err)
		}
	}
}
