package diff

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// role and binding are OLM-style hashed RBAC for ServiceAccount sa.
func role(name, sa string, verbs string) []string {
	return []string{
		`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: ` + name + `
rules:
- apiGroups: [apps]
  resources: [deployments]
  verbs: [` + verbs + `]
`,
		`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: ` + name + `
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ` + name + `}
subjects:
- {kind: ServiceAccount, name: ` + sa + `, namespace: ops}
`}
}

func obj(kind, name, extra string) string {
	return "apiVersion: v1\nkind: " + kind + "\nmetadata:\n  name: " + name + "\n  namespace: ops\n" + extra
}

func ids(objs []Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.String())
	}
	return out
}

func TestComparePairing(t *testing.T) {
	cases := []struct {
		name           string
		from, to       []string
		fromCSV, toCSV string
		added, removed []string
		changed        []string // "Kind.group ns/name<-previous"
		summaryHas     string
	}{
		{
			name:       "hashed RBAC with a new rule pairs by ServiceAccount",
			from:       role("op.v1-aaaa", "op", "get"),
			to:         role("op.v1-bbbb", "op", "get,list"),
			changed:    []string{"ClusterRole.rbac.authorization.k8s.io op.v1-bbbb<-op.v1-aaaa", "ClusterRoleBinding.rbac.authorization.k8s.io op.v1-bbbb<-op.v1-aaaa"},
			summaryHas: "rule added: get,list on deployments.apps",
		},
		{
			name:    "RBAC of another ServiceAccount is not paired",
			from:    role("op.v1-aaaa", "op", "get"),
			to:      role("op.v1-bbbb", "other", "get"),
			added:   []string{"ClusterRole.rbac.authorization.k8s.io op.v1-bbbb", "ClusterRoleBinding.rbac.authorization.k8s.io op.v1-bbbb"},
			removed: []string{"ClusterRole.rbac.authorization.k8s.io op.v1-aaaa", "ClusterRoleBinding.rbac.authorization.k8s.io op.v1-aaaa"},
		},
		{
			name:       "an object named after the CSV pairs across a CSV rename",
			from:       []string{obj("ConfigMap", "op.v1.0.0-config", "data: {a: '1'}\n")},
			to:         []string{obj("ConfigMap", "op.v1.1.0-config", "data: {a: '2'}\n")},
			fromCSV:    "op.v1.0.0",
			toCSV:      "op.v1.1.0",
			changed:    []string{"ConfigMap ops/op.v1.1.0-config<-op.v1.0.0-config"},
			summaryHas: "renamed from op.v1.0.0-config",
		},
		{
			name:    "other names are added and removed",
			from:    []string{obj("ConfigMap", "a", "")},
			to:      []string{obj("ConfigMap", "b", "")},
			added:   []string{"ConfigMap ops/b"},
			removed: []string{"ConfigMap ops/a"},
		},
		{
			name: "provenance annotations alone are no change",
			from: []string{obj("ConfigMap", "a", "")[:len("apiVersion: v1\nkind: ConfigMap\nmetadata:\n")] + "  annotations: {olm-cmp.dev/bundle: op.v1}\n  name: a\n  namespace: ops\n"},
			to:   []string{obj("ConfigMap", "a", "")[:len("apiVersion: v1\nkind: ConfigMap\nmetadata:\n")] + "  annotations: {olm-cmp.dev/bundle: op.v2}\n  name: a\n  namespace: ops\n"},
		},
		{
			name:       "a label change says so",
			from:       []string{obj("ConfigMap", "a", "")},
			to:         []string{strings.Replace(obj("ConfigMap", "a", ""), "metadata:\n", "metadata:\n  labels: {v: '2'}\n", 1)},
			changed:    []string{"ConfigMap ops/a<-"},
			summaryHas: "labels or annotations only",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Compare(tc.from, tc.to, tc.fromCSV, tc.toCSV)
			if err != nil {
				t.Fatal(err)
			}
			var removed, changed []string
			for _, o := range r.Removed {
				removed = append(removed, o.String())
			}
			summaries := ""
			for _, c := range r.Changed {
				changed = append(changed, c.Object.String()+"<-"+c.PreviousName)
				summaries += strings.Join(c.Summary, "\n") + "\n"
				if !strings.HasPrefix(c.Diff, "--- from/") {
					t.Errorf("%s: diff is not a unified diff: %q", c.Object, c.Diff)
				}
			}
			if got := strings.Join(ids(r.Added), ";"); got != strings.Join(tc.added, ";") {
				t.Errorf("added %q, want %q", got, tc.added)
			}
			if got := strings.Join(removed, ";"); got != strings.Join(tc.removed, ";") {
				t.Errorf("removed %q, want %q", got, tc.removed)
			}
			if got := strings.Join(changed, ";"); got != strings.Join(tc.changed, ";") {
				t.Errorf("changed %q, want %q", got, tc.changed)
			}
			if !strings.Contains(summaries, tc.summaryHas) {
				t.Errorf("summaries lack %q:\n%s", tc.summaryHas, summaries)
			}
			if r.HasChanges() != (len(tc.added)+len(tc.removed)+len(tc.changed) > 0) {
				t.Errorf("HasChanges = %t", r.HasChanges())
			}
		})
	}
}

func TestRemovedPruned(t *testing.T) {
	crd := func(name, syncOptions string) string {
		return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + name +
			"\n  annotations: {argocd.argoproj.io/sync-options: '" + syncOptions + "'}\n"
	}
	r, err := Compare([]string{crd("kept.example.com", "ServerSideApply=true,Prune=false"), crd("gone.example.com", "ServerSideApply=true")}, nil, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Removed) != 2 || r.Removed[0].Pruned || !r.Removed[1].Pruned {
		t.Errorf("removed: %+v", r.Removed)
	}
}

func TestSummarizeCRD(t *testing.T) {
	crd := func(versions string) string {
		return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: ws.example.com}\nspec:\n  group: example.com\n  scope: Namespaced\n  names: {kind: W, plural: ws}\n  versions:\n" + versions
	}
	v := func(name string, served, storage bool, props string) string {
		return "  - name: " + name + "\n    served: " + map[bool]string{true: "true", false: "false"}[served] +
			"\n    storage: " + map[bool]string{true: "true", false: "false"}[storage] +
			"\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n" + props
	}
	from := crd(v("v1alpha1", true, true, "              a: {type: string}\n              list: {type: array, items: {type: object, properties: {x: {type: string}}}}\n"))
	to := crd(v("v1alpha1", false, false, "              a: {type: string}\n              list: {type: array, items: {type: object, properties: {z: {type: string}}}}\n") +
		v("v1", true, true, "              a: {type: string}\n"))
	parse := func(s string) *yaml.Node {
		n, err := yaml.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return n.YNode()
	}
	got, err := summarizeCRD(t.Context(), parse(from), parse(to))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"v1alpha1: served true -> false",
		"v1alpha1: storage true -> false",
		"v1alpha1: field added .spec.list[*].z",
		"v1alpha1: field removed .spec.list[*].x",
		"v1: version added (served=true, storage=true)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("summary:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSummarizeDeployment(t *testing.T) {
	dep := func(image, related string) string {
		return `apiVersion: apps/v1
kind: Deployment
metadata: {name: op, namespace: ops}
spec:
  template:
    spec:
      containers:
      - name: manager
        image: ` + image + `
        env:
        - {name: RELATED_IMAGE_OPERAND, value: "` + related + `"}
`
	}
	got, err := summarizeDeployment(dep("op:1", "operand:1"), dep("op:2", "operand:2"))
	if err != nil {
		t.Fatal(err)
	}
	want := "container manager: image op:1 -> op:2\ncontainer manager: RELATED_IMAGE_OPERAND operand:1 -> operand:2"
	if strings.Join(got, "\n") != want {
		t.Errorf("summary:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
}

// TestManyRolesOfOneServiceAccount: hundreds of hashed roles of one
// ServiceAccount on each side are paired in order, not each weighed
// against each (maxClosestPairs), and every one is paired.
func TestManyRolesOfOneServiceAccount(t *testing.T) {
	var from, to []string
	for i := range 100 {
		from = append(from, role(fmt.Sprintf("op.v1-a%03d", i), "op", "get")...)
		to = append(to, role(fmt.Sprintf("op.v1-b%03d", i), "op", "get,list")...)
	}
	r, err := Compare(from, to, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Added) != 0 || len(r.Removed) != 0 || len(r.Changed) != 200 {
		t.Fatalf("%d added, %d removed, %d changed", len(r.Added), len(r.Removed), len(r.Changed))
	}
	if c := r.Changed[0]; c.Name != "op.v1-b000" || c.PreviousName != "op.v1-a000" {
		t.Errorf("first pair %s <- %s, want in order", c.Name, c.PreviousName)
	}
}

// TestSummarizeCRDSchemaChanged: a schema whose keys only moved is the same
// schema (as the decoded schemas compared); a changed description is a
// change without a field added or removed.
func TestSummarizeCRDSchemaChanged(t *testing.T) {
	crd := func(props string) *yaml.Node {
		n, err := yaml.Parse("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: ws.example.com}\nspec:\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n" + props)
		if err != nil {
			t.Fatal(err)
		}
		return n.YNode()
	}
	from := crd("          a: {type: string, description: old}\n          b: {type: integer}\n")
	for _, tc := range []struct {
		name, props, want string
	}{
		{"keys moved", "          b: {type: integer}\n          a: {description: old, type: string}\n", ""},
		{"description", "          a: {type: string, description: new}\n          b: {type: integer}\n", "v1: schema changed (descriptions or validations; no field added or removed)"},
		{"field renamed", "          a: {type: string, description: old}\n          c: {type: integer}\n", "v1: field added .c\nv1: field removed .b"},
	} {
		got, err := summarizeCRD(t.Context(), from, crd(tc.props))
		if err != nil || strings.Join(got, "\n") != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}
