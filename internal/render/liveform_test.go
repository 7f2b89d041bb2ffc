package render

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kustomizetypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
	k8syaml "sigs.k8s.io/yaml"
)

// TestCorpusLiveForm renders every real bundle and checks what Argo CD
// compares with the cluster after a sync:
//   - no CustomResourceDefinition holds a key the API server would not
//     store (found by encoding it through the apiextensions.k8s.io/v1 type,
//     as the API server does): such a key keeps the Application OutOfSync,
//     e.g. kubevirt's spec.preserveUnknownFields: false;
//   - every CRD is exactly the one OLM v1 renders for the bundle
//     (../shared/olmv1-reference), once our own annotations are set aside;
//   - no ClusterRole with an aggregationRule carries rules (Kubernetes
//     writes them; crossplane ships `rules: []`).
func TestCorpusLiveForm(t *testing.T) {
	requireShared(t)
	bundles := corpusBundles(t)
	names := slices.Sorted(maps.Keys(bundles))
	crds, aggregated := 0, 0
	for _, rel := range names {
		if strings.Contains(rel, "single-namespace-operator") {
			continue // needs a watch namespace; OLM v1 rendered nothing for it
		}
		t.Run(rel, func(t *testing.T) {
			res, err := (&Renderer{}).Render(context.Background(), corpusRequest(t, rel, bundles[rel]))
			if err != nil {
				t.Fatal(err)
			}
			olm := olmReferenceCRDs(t, rel)
			for _, doc := range res.Manifests {
				var obj map[string]any
				if err := json.Unmarshal([]byte(doc), &obj); err != nil {
					if err := k8syaml.Unmarshal([]byte(doc), &obj); err != nil {
						t.Fatal(err)
					}
				}
				md, _ := obj["metadata"].(map[string]any)
				name, _ := md["name"].(string)
				switch obj["kind"] {
				case "CustomResourceDefinition":
					crds++
					if dropped := unstoredKeys(t, obj); len(dropped) > 0 {
						t.Errorf("CRD %s: the API server would drop %v", name, dropped)
					}
					want, ok := olm[name]
					if !ok {
						t.Errorf("CRD %s: OLM v1 renders no such CRD", name)
						continue
					}
					got := withoutOurAnnotations(obj)
					if !reflect.DeepEqual(got, want) {
						g, _ := json.Marshal(got)
						w, _ := json.Marshal(want)
						t.Errorf("CRD %s differs from OLM v1's:\nours: %.400s\nOLM:  %.400s", name, g, w)
					}
				case "ClusterRole":
					if _, ok := obj["aggregationRule"]; ok {
						aggregated++
						if _, ok := obj["rules"]; ok {
							t.Errorf("aggregated ClusterRole %s keeps rules", name)
						}
					}
				}
			}
		})
	}
	// The corpus must exercise both cases, or the checks above prove nothing.
	if crds < 100 || aggregated < 6 {
		t.Errorf("corpus rendered %d CRDs and %d aggregated ClusterRoles: expected at least 100 and 6", crds, aggregated)
	}
}

// unstoredKeys lists the paths of keys in obj that the apiextensions.k8s.io/v1
// type does not encode.
func unstoredKeys(t *testing.T, obj map[string]any) []string {
	t.Helper()
	data, _ := json.Marshal(obj)
	var crd apiextensionsv1.CustomResourceDefinition
	if err := json.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	enc, _ := json.Marshal(&crd)
	var stored map[string]any
	_ = json.Unmarshal(enc, &stored)
	var out []string
	var walk func(a, b any, path string)
	walk = func(a, b any, path string) {
		switch av := a.(type) {
		case map[string]any:
			bv, _ := b.(map[string]any)
			for k, v := range av {
				w, ok := bv[k]
				if !ok {
					out = append(out, path+"."+k)
					continue
				}
				walk(v, w, path+"."+k)
			}
		case []any:
			bv, _ := b.([]any)
			for i := range av {
				if i < len(bv) {
					walk(av[i], bv[i], fmt.Sprintf("%s[%d]", path, i))
				}
			}
		}
	}
	walk(obj, stored, "")
	sort.Strings(out)
	return out
}

// withoutOurAnnotations is obj without the annotations olm-cmp adds
// (provenance, sync wave and options), which OLM v1 does not have.
func withoutOurAnnotations(obj map[string]any) map[string]any {
	data, _ := json.Marshal(obj)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	md := out["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	for k := range ann {
		if strings.HasPrefix(k, "olm-cmp.dev/") || strings.HasPrefix(k, "argocd.argoproj.io/") {
			delete(ann, k)
		}
	}
	if len(ann) == 0 {
		delete(md, "annotations")
	}
	return out
}

// olmReferenceCRDs reads OLM v1's CRDs for the bundle rel (a path under
// ../shared), by name, without status (the render drops it: docs/olm-parity.md).
func olmReferenceCRDs(t *testing.T, rel string) map[string]map[string]any {
	t.Helper()
	parts := strings.Split(rel, "/")
	dir := filepath.Join(sharedDir, "olmv1-reference", parts[1])
	if len(parts) > 3 { // olmv1-testdata/bundles/<op>/<version>
		dir = filepath.Join(sharedDir, "olmv1-reference", parts[2], parts[3])
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*_customresourcedefinition_*.yaml"))
	out := map[string]map[string]any{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var o map[string]any
		if err := k8syaml.Unmarshal(data, &o); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		delete(o, "status")
		out[o["metadata"].(map[string]any)["name"].(string)] = o
	}
	return out
}

// The live-form step runs after extra manifests and patches: a CRD committed
// beside olm-cmp.yaml, a field a patch adds to a bundle CRD, and an aggregated
// ClusterRole from an extra manifest come out as the cluster stores them,
// and everything else of those objects stays.
func TestLiveFormCoversExtraManifestsAndPatches(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, demoDir, dir)
	extra := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: stubs.example.com
spec:
  group: example.com
  names: {kind: Stub, plural: stubs}
  scope: Cluster
  preserveUnknownFields: false
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: greeter-aggregate
aggregationRule:
  clusterRoleSelectors:
  - matchLabels: {greeter.example.com/aggregate: "true"}
rules: []
`
	if err := os.WriteFile(filepath.Join(dir, "stubs.yaml"), []byte(extra), 0o644); err != nil {
		t.Fatal(err)
	}
	req := demoRequest(t)
	req.SourceDir = dir
	req.Spec.Bundle = "./bundle"
	req.Spec.Patches = append(req.Spec.Patches, kustomizetypes.Patch{
		Patch:  `[{"op": "add", "path": "/spec/preserveUnknownFields", "value": false}]`,
		Target: &kustomizetypes.Selector{ResId: resid.ResId{Gvk: resid.Gvk{Kind: "CustomResourceDefinition"}, Name: "greeters.greeter.example.com"}},
	})
	res := mustRender(t, req)
	nodes := parse(t, res.YAML())
	for _, name := range []string{"stubs.example.com", "greeters.greeter.example.com"} {
		crd := find(nodes, "CustomResourceDefinition", name)
		if crd == nil {
			t.Fatalf("CRD %s missing", name)
		}
		if crd.Field("spec").Value.Field("preserveUnknownFields") != nil {
			t.Errorf("CRD %s keeps spec.preserveUnknownFields: false", name)
		}
		if v, _ := crd.GetString("spec.versions[0].name"); v == "" {
			t.Errorf("CRD %s lost its versions", name)
		}
	}
	role := find(nodes, "ClusterRole", "greeter-aggregate")
	if role == nil {
		t.Fatal("aggregated ClusterRole missing")
	}
	if role.Field("rules") != nil {
		t.Error("aggregated ClusterRole keeps rules")
	}
	if role.Field("aggregationRule") == nil {
		t.Error("aggregated ClusterRole lost its aggregationRule")
	}
}

// A bundle CRD with fields apiextensions.k8s.io/v1 does not have (openebs
// 3.0.0's spec.version, windup-operator 0.0.11's spec.status under spec)
// renders as OLM v1 renders it: through the typed v1 struct, which drops
// them; a warning names them. The rest of the render is unchanged.
func TestLiveFormDropsCRDFieldsTheTypeLacks(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, demoDir, dir)
	crdFile := filepath.Join(dir, "bundle", "manifests", "greeter.example.com_greeters.yaml")
	data, err := os.ReadFile(crdFile)
	if err != nil {
		t.Fatal(err)
	}
	withExtras := strings.Replace(string(data), "  scope: Namespaced\n", "  scope: Namespaced\n  version: v1alpha1\n  status:\n    storedVersions: [v1alpha1]\n", 1)
	if withExtras == string(data) {
		t.Fatal("the demo CRD changed: no scope line to add the fields after")
	}
	req := demoRequest(t)
	req.SourceDir = dir
	req.Spec.Bundle = "./bundle"
	plain := mustRender(t, req)
	if err := os.WriteFile(crdFile, []byte(withExtras), 0o644); err != nil {
		t.Fatal(err)
	}
	res := mustRender(t, req)
	want := "apiextensions.k8s.io/CustomResourceDefinition greeters.greeter.example.com: dropped spec.version, spec.status, which apiextensions.k8s.io/v1 does not have (the API server and OLM v1 drop it too; if you wrote this CRD, check the field's name and place)"
	if !slices.Contains(res.Warnings, want) {
		t.Errorf("warnings %q lack %q", res.Warnings, want)
	}
	// Only the digest of the changed bundle directory differs.
	digest := regexp.MustCompile(`sha256:[0-9a-f]{64}`)
	if got, was := digest.ReplaceAllString(string(res.YAML()), "D"), digest.ReplaceAllString(string(plain.YAML()), "D"); got != was {
		t.Errorf("the render differs from the one without the extra fields:\n%s", diffLines(was, got))
	}
}

// diffLines lists the lines of b that a does not have.
func diffLines(a, b string) string {
	seen := map[string]bool{}
	for _, l := range strings.Split(a, "\n") {
		seen[l] = true
	}
	var out []string
	for _, l := range strings.Split(b, "\n") {
		if !seen[l] {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
