package convert

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// sharedDir is the reference data written by other projects (../shared from
// the repository root). It is not part of the repository: tests skip without it.
func sharedDir(t testing.TB) string {
	t.Helper()
	d := filepath.Join("..", "..", "..", "shared")
	if _, err := os.Stat(d); err != nil {
		t.Skipf("reference data not found at %s (it lives next to the repository, not in it): %v", d, err)
	}
	return d
}

func loadBundle(t testing.TB, dir string) *bundle.Bundle {
	t.Helper()
	b, err := bundle.LoadDir(dir)
	if err != nil {
		t.Fatalf("load %s: %v", dir, err)
	}
	return b
}

func loadConfig(t testing.TB, file string) *v1alpha1.SubscriptionConfig {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cfg v1alpha1.SubscriptionConfig
	if err := sigsyaml.UnmarshalStrict(data, &cfg); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return &cfg
}

// object is a manifest as generic JSON data, the form both sides are compared in.
type object = map[string]any

func objectID(o object) string {
	md, _ := o["metadata"].(map[string]any)
	group, _, found := strings.Cut(fmt.Sprint(o["apiVersion"]), "/")
	if !found {
		group = ""
	}
	ns, _ := md["namespace"].(string)
	name, _ := md["name"].(string)
	return fmt.Sprintf("%s.%s %s/%s", o["kind"], group, ns, name)
}

// nodeToObject decodes the node itself. (kyaml's RNode.MarshalJSON prints
// YAML and parses it again, which goes through the YAML encoder's folded-scalar
// bug; see transform.Serialize.)
func nodeToObject(t testing.TB, n *yaml.RNode) object {
	t.Helper()
	var v any
	if err := n.YNode().Decode(&v); err != nil {
		t.Fatalf("%s %s: %v", n.GetKind(), n.GetName(), err)
	}
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s %s: %v", n.GetKind(), n.GetName(), err)
	}
	var o object
	if err := json.Unmarshal(j, &o); err != nil {
		t.Fatal(err)
	}
	return o
}

// readExpected reads OLM's golden directory: one object per *.yaml file.
func readExpected(t testing.TB, dir string) []object {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files in %s (%v)", dir, err)
	}
	var out []object
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var o object
		if err := sigsyaml.Unmarshal(data, &o); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, o)
	}
	return out
}

// Normalizations of the documented deviations (docs/olm-parity.md), and
// nothing else.

// normalizeExpected removes from OLM's output what we deliberately do not emit.
func normalizeExpected(o object) {
	if !KindNamespaced(fmt.Sprint(o["kind"])) {
		// Deviation 1: no metadata.namespace on cluster-scoped objects.
		if md, ok := o["metadata"].(map[string]any); ok {
			delete(md, "namespace")
		}
	}
	if o["kind"] == "CustomResourceDefinition" {
		delete(o, "status") // Deviation 3: CRD status is not emitted.
	}
}

// normalizeOurs reshapes our output where OLM's differs only in encoding:
// OLM v1 round-trips CRDs through the typed apiextensions/v1 struct (dropping
// e.g. empty `properties: {}` under omitempty); we keep the bundle's node.
func normalizeOurs(t testing.TB, o object) object {
	t.Helper()
	if o["kind"] != "CustomResourceDefinition" {
		return o
	}
	j, _ := json.Marshal(o)
	var crd apiextensionsv1.CustomResourceDefinition
	if err := json.Unmarshal(j, &crd); err != nil {
		t.Fatalf("%s: not a valid CRD: %v", objectID(o), err)
	}
	j, _ = json.Marshal(&crd)
	var out object
	_ = json.Unmarshal(j, &out)
	delete(out, "status")
	return out
}

// installNamespaceRBAC reports our deviation 2: Roles/RoleBindings put in the
// install namespace when it is not a target.
func installNamespaceRBAC(o object, installNs string, targets []string) bool {
	if o["kind"] != "Role" && o["kind"] != "RoleBinding" {
		return false
	}
	md, _ := o["metadata"].(map[string]any)
	return md["namespace"] == installNs && !slices.Contains(targets, installNs) && !slices.Contains(targets, "")
}

// compareObjects diffs our objects against OLM's by identity and content and
// returns readable differences naming the object and field path.
func compareObjects(t testing.TB, ours []*yaml.RNode, want []object, installNs string, targets []string) []string {
	t.Helper()
	got := map[string]object{}
	var diffs []string
	for _, n := range ours {
		o := normalizeOurs(t, nodeToObject(t, n))
		if installNamespaceRBAC(o, installNs, targets) {
			continue
		}
		id := objectID(o)
		if _, dup := got[id]; dup {
			diffs = append(diffs, fmt.Sprintf("%s: emitted twice", id))
		}
		got[id] = o
	}
	exp := map[string]object{}
	for _, o := range want {
		normalizeExpected(o)
		exp[objectID(o)] = o
	}
	for _, id := range sortedIDs(exp) {
		g, ok := got[id]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("%s: missing (OLM emits it)", id))
			continue
		}
		var d []string
		diffValues("", g, exp[id], &d)
		const maxPerObject = 15
		if len(d) > maxPerObject {
			d = append(d[:maxPerObject], fmt.Sprintf("... %d more", len(d)-maxPerObject))
		}
		for _, line := range d {
			diffs = append(diffs, id+": "+line)
		}
	}
	for _, id := range sortedIDs(got) {
		if _, ok := exp[id]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: extra (OLM does not emit it)", id))
		}
	}
	return diffs
}

func sortedIDs(m map[string]object) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// diffValues appends "path: got X, want Y" lines for every difference.
func diffValues(path string, got, want any, out *[]string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		for _, k := range slices.Sorted(mapsKeys(keys)) {
			gv, gok := g[k]
			wv, wok := w[k]
			p := joinPath(path, k)
			switch {
			case !gok:
				*out = append(*out, fmt.Sprintf("%s: missing, want %s", p, short(wv)))
			case !wok:
				*out = append(*out, fmt.Sprintf("%s: got %s, OLM has no such field", p, short(gv)))
			default:
				diffValues(p, gv, wv, out)
			}
		}
		return
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			break
		}
		for i := range w {
			diffValues(fmt.Sprintf("%s[%d]", path, i), g[i], w[i], out)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		*out = append(*out, fmt.Sprintf("%s: got %s, want %s", cmpOr(path, "."), short(got), short(want)))
	}
}

func mapsKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func joinPath(p, k string) string {
	if p == "" {
		return k
	}
	return p + "." + k
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func short(v any) string {
	j, _ := json.Marshal(v)
	if len(j) > 160 {
		return string(j[:160]) + "…"
	}
	return string(j)
}
