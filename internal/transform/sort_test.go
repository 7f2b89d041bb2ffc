package transform

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	kustomizetypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const sortInput = `apiVersion: example.com/v1
kind: Zebra
metadata:
  name: a
---
apiVersion: example.com/v1
kind: Alpha
metadata:
  name: b
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: op
  namespace: ops
---
apiVersion: v1
kind: Service
metadata:
  name: op
  namespace: ops
---
apiVersion: v1
kind: Service
metadata:
  name: op
  namespace: aaa
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: late
  annotations:
    argocd.argoproj.io/sync-wave: "3"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: bad-wave
  annotations:
    argocd.argoproj.io/sync-wave: "x"
---
apiVersion: v1
kind: Namespace
metadata:
  name: ops
  annotations:
    argocd.argoproj.io/sync-wave: "-1"
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: op
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: op
  namespace: ops
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: zebras.example.com
---
apiVersion: other.example.com/v1
kind: Zebra
metadata:
  name: a
---
apiVersion: example.com/v2
kind: Zebra
metadata:
  name: a
`

func TestSort(t *testing.T) {
	want := []string{
		"Namespace ops",         // wave -1
		"ServiceAccount ops/op", // wave 0, kind order
		"ConfigMap bad-wave",    // unparsable wave counts as 0
		"CustomResourceDefinition zebras.example.com",
		"ClusterRole op",
		"Service aaa/op", "Service ops/op", // namespace
		"Deployment ops/op",
		"Alpha b",                       // unknown kinds last, by kind
		"Zebra a", "Zebra a", "Zebra a", // then group, version
		"ConfigMap late", // wave 3
	}
	var first string
	for seed := range uint64(20) {
		out := run(t, Sort(), shuffled(sortInput, seed))
		var got []string
		for _, n := range parse(t, out) {
			id := n.GetName()
			if ns := n.GetNamespace(); ns != "" {
				id = ns + "/" + id
			}
			got = append(got, n.GetKind()+" "+id)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: order\n%v\nwant\n%v", seed, got, want)
		}
		if seed == 0 {
			first = out
			if !strings.Contains(out, "apiVersion: example.com/v1\nkind: Zebra\nmetadata:\n  name: a\n---\napiVersion: example.com/v2\nkind: Zebra\nmetadata:\n  name: a\n---\napiVersion: other.example.com/v1\nkind: Zebra") {
				t.Errorf("group/version order:\n%s", out)
			}
		} else if out != first {
			t.Fatalf("seed %d: output differs", seed)
		}
	}
	// Identical ids: ordered by content.
	dup := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  v: b\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  v: a\n"
	diff(t, run(t, Sort(), dup), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  v: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  v: b\n")
}

func TestSerialize(t *testing.T) {
	in := `# leading comment
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  annotations:
    internal.olm-cmp.dev/custom-resource: "true"
    internal.config.kubernetes.io/path: x.yaml
    keep: "yes" # trailing comment
data: {}
binaryData:
  # inside
  a: b
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: only-internal
  annotations:
    internal.olm-cmp.dev/custom-resource: "true"
`
	nodes := parse(t, in)
	docs, err := Serialize(nodes)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`# leading comment
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  annotations:
    keep: "yes" # trailing comment
data: {}
binaryData:
  # inside
  a: b
`, `apiVersion: v1
kind: ConfigMap
metadata:
  name: only-internal
`}
	if !slices.Equal(docs, want) {
		t.Errorf("got %q\nwant %q", docs, want)
	}
	// The input objects keep their annotations.
	if !isMarkedCR(nodes[0]) {
		t.Error("Serialize changed its input")
	}
	// Byte-stable: again, and after a parse of the output.
	again, _ := Serialize(parse(t, strings.Join(docs, "---\n")))
	if !slices.Equal(again, want) {
		t.Errorf("not stable: %q", again)
	}
}

func TestSerializeErrors(t *testing.T) {
	// Two equal keys print, but no reader takes them.
	n := yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: x\n")
	data := n.Field("data").Value.YNode()
	data.Content = append(data.Content, data.Content[0], data.Content[1])
	docs, err := Serialize([]*yaml.RNode{n})
	if err != nil {
		t.Fatal(err)
	}
	err = VerifyRoundTrip(n, docs[0])
	if err == nil || err.Error() != "the YAML output does not parse back to the same object (at .data.a: repeated key)" {
		t.Errorf("error %v", err)
	}
	_, err = Serialize([]*yaml.RNode{yaml.MustParse("a: b"), yaml.NewRNode(nil)})
	if err == nil || err.Error() != "object 1 is empty" {
		t.Errorf("error %v", err)
	}
}

// TestSerializeRestyles covers a yaml.v3 encoder bug seen in real CRDs (flux):
// a folded scalar with more-indented (tab) lines prints as text that reads
// back with other line breaks. Serialize prints it as a literal block.
func TestSerializeRestyles(t *testing.T) {
	in := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  ok: >-\n    folded\n    text\n  desc: >-\n    For example,\n\n\n    \ttype FooStatus struct{\n    \t    // comment\n    \t}\n"
	nodes := parse(t, in)
	before := nodes[0].MustString()
	docs, err := Serialize(nodes)
	if err != nil {
		t.Fatal(err)
	}
	want := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  ok: >-\n    folded text\n  desc: |-\n    For example,\n\n\n    \ttype FooStatus struct{\n    \t    // comment\n    \t}\n"
	diff(t, docs[0], want)
	if nodes[0].MustString() != before {
		t.Error("Serialize changed its input")
	}
	// Values are the input's.
	got := parse(t, docs[0])[0]
	for _, k := range []string{"ok", "desc"} {
		a, _ := got.GetString("data." + k)
		b, _ := nodes[0].GetString("data." + k)
		if a != b {
			t.Errorf("%s: %q, want %q", k, a, b)
		}
	}
}

func TestCompareNodes(t *testing.T) {
	// The comparison sees resolved tags and values, not styles or comments.
	for _, tc := range []struct {
		a, b, path string
		bad        int
	}{
		{"a: 1\n", "a: '1'\n", ".a", 1},
		{"a: [x, y]\n", "a:\n- x # c\n- 'y'\n", "", 0},
		{"a: x\nb: 1\nc: [1, 2]\n", "a: y\nb: 1\nc: [1, 3]\n", ".a", 2},
		{"a: x\n", "b: x\n", ".a", 1},
	} {
		var bad []*yaml.Node
		path, err := compareNodes(yaml.MustParse(tc.a).YNode(), yaml.MustParse(tc.b).YNode(), "", &bad)
		if err != nil || len(bad) != tc.bad || path != tc.path {
			t.Errorf("compareNodes(%q, %q) = %q, %d bad, %v", tc.a, tc.b, path, len(bad), err)
		}
	}
	var bad []*yaml.Node
	if _, err := compareNodes(yaml.MustParse("a: {b: c}\n").YNode(), yaml.MustParse("a: {b: c, d: e}\n").YNode(), "", &bad); err == nil ||
		err.Error() != "the YAML output does not parse back to the same object (at .a)" {
		t.Errorf("error %v", err)
	}
}

// bundleObjects is a small rendered bundle.
const bundleObjects = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: etcdclusters.etcd.example.com
spec:
  group: etcd.example.com
  scope: Namespaced
  names:
    kind: EtcdCluster
    plural: etcdclusters
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: etcd-operator
  namespace: ops
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: etcd-operator
rules:
- apiGroups: ["etcd.example.com"]
  resources: ["*"]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: etcd-operator
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: etcd-operator
subjects:
- kind: ServiceAccount
  name: etcd-operator
  namespace: ops
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: etcd-operator
  namespace: ops
spec:
  replicas: 1
  selector:
    matchLabels:
      app: etcd
  template:
    metadata:
      labels:
        app: etcd
    spec:
      serviceAccountName: etcd-operator
      containers:
      - name: manager
        image: quay.io/org/etcd-operator:v1
        resources: {}
---
apiVersion: console.openshift.io/v1
kind: ConsoleYAMLSample
metadata:
  name: sample
`

func pipelineOptions(warn func(string)) Options {
	return Options{
		Namespace:         "ops",
		CreateNamespace:   true,
		Exclude:           []string{"console.openshift.io/*"},
		ServiceAccounts:   []string{"etcd-operand"},
		ImagePullSecrets:  []string{"pull"},
		AuthReaderBinding: "etcd",
		Images:            map[string]string{"quay.io/org": "mirror.example.com/org"},
		Patches: []kustomizetypes.Patch{{Patch: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: etcd-operator
spec:
  replicas: 2
`}},
		APIVersions: []string{"v1", "apps/v1", "rbac.authorization.k8s.io/v1", "apiextensions.k8s.io/v1"},
		Annotations: map[string]string{"olm-cmp.dev/bundle": "etcd@1.0.0", "olm-cmp.dev/bundle-image": "quay.io/org/etcd-bundle@sha256:00"},
		Waves:       testWaves,
		KeepCRDs:    true,
		SettleHook:  "etcd-sync-settled",
		Warn:        warn,
	}
}

func TestFilters(t *testing.T) {
	example := "apiVersion: etcd.example.com/v1\nkind: EtcdCluster\nmetadata:\n  name: example\n  namespace: ops\n"
	var first string
	for seed := range uint64(8) {
		var w warnings
		crs, err := MarkCR().Filter(parse(t, example))
		if err != nil {
			t.Fatal(err)
		}
		nodes := append(parse(t, shuffled(bundleObjects, seed)), crs...)
		out, err := Apply(nodes, filtersOf(pipelineOptions(w.add))...)
		if err != nil {
			t.Fatal(err)
		}
		got := render(t, out)
		if seed == 0 {
			first = got
			if len(w) != 0 {
				t.Errorf("warnings %q", w)
			}
			continue
		}
		if got != first {
			t.Fatalf("seed %d: output differs:\n%s\nfirst:\n%s", seed, got, first)
		}
	}
	want := `apiVersion: v1
kind: Namespace
metadata:
  name: ops
  annotations:
    olm-cmp.dev/bundle: 'etcd@1.0.0'
    olm-cmp.dev/bundle-image: 'quay.io/org/etcd-bundle@sha256:00'
    argocd.argoproj.io/sync-wave: '-4'
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: etcdclusters.etcd.example.com
  annotations:
    olm-cmp.dev/bundle: 'etcd@1.0.0'
    olm-cmp.dev/bundle-image: 'quay.io/org/etcd-bundle@sha256:00'
    argocd.argoproj.io/sync-wave: '-4'
    argocd.argoproj.io/sync-options: 'ServerSideApply=true,Delete=false,Prune=false'
spec:
  group: etcd.example.com
  scope: Namespaced
  names:
    kind: EtcdCluster
    plural: etcdclusters
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: etcd-operand
  namespace: ops
  annotations:
    olm-cmp.dev/bundle: 'etcd@1.0.0'
    olm-cmp.dev/bundle-image: 'quay.io/org/etcd-bundle@sha256:00'
    argocd.argoproj.io/sync-wave: '-3'
    argocd.argoproj.io/sync-options: 'PruneLast=true'
imagePullSecrets:
- name: pull
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: etcd-operator
  namespace: ops
  annotations:
    olm-cmp.dev/bundle: 'etcd@1.0.0'
    olm-cmp.dev/bundle-image: 'quay.io/org/etcd-bundle@sha256:00'
    argocd.argoproj.io/sync-wave: '-3'
    argocd.argoproj.io/sync-options: 'PruneLast=true'
imagePullSecrets:
- name: pull
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: etcd-operator
  annotations:
    olm-cmp.dev/bundle: 'etcd@1.0.0'
    olm-cmp.dev/bundle-image: 'quay.io/org/etcd-bundle@sha256:00'
    argocd.argoproj.io/sync-wave: '-3'
    argocd.argoproj.io/sync-options: 'PruneLast=true'
rules:
- apiGroups: ["etcd.example.com"]
  resources: ["*"]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: etcd-operator
  annotations:
    olm-cmp.dev/bundle: 'etcd@1.0.0'
    olm-cmp.dev/bundle-image: 'quay.io/org/etcd-bundle@sha256:00'
    argocd.argoproj.io/sync-wave: '-3'
    argocd.argoproj.io/sync-options: 'PruneLast=true'
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: etcd-operator
subjects:
- kind: ServiceAccount
  name: etcd-operator
  namespace: ops
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: etcd-auth-reader
  namespace: kube-system
  annotations:
    olm-cmp.dev/bundle: 'etcd@1.0.0'
    olm-cmp.dev/bundle-image: 'quay.io/org/etcd-bundle@sha256:00'
    argocd.argoproj.io/sync-wave: '-3'
    argocd.argoproj.io/sync-options: 'PruneLast=true'
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: extension-apiserver-authentication-reader
subjects:
- kind: ServiceAccount
  name: etcd-operator
  namespace: ops
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: etcd-operator
  namespace: ops
  annotations:
    olm-cmp.dev/bundle: 'etcd@1.0.0'
    olm-cmp.dev/bundle-image: 'quay.io/org/etcd-bundle@sha256:00'
    argocd.argoproj.io/sync-wave: '-2'
spec:
  replicas: 2
  selector:
    matchLabels:
      app: etcd
  template:
    metadata:
      labels:
        app: etcd
    spec:
      serviceAccountName: etcd-operator
      containers:
      - name: manager
        image: mirror.example.com/org/etcd-operator:v1
        resources: {}
---
apiVersion: etcd.example.com/v1
kind: EtcdCluster
metadata:
  name: example
  namespace: ops
  annotations:
    olm-cmp.dev/bundle: 'etcd@1.0.0'
    olm-cmp.dev/bundle-image: 'quay.io/org/etcd-bundle@sha256:00'
    argocd.argoproj.io/sync-wave: '0'
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: etcd-sync-settled
  namespace: ops
  annotations:
    argocd.argoproj.io/hook: 'PostSync'
    argocd.argoproj.io/hook-delete-policy: 'HookSucceeded,BeforeHookCreation'
    olm-cmp.dev/bundle: 'etcd@1.0.0'
    olm-cmp.dev/bundle-image: 'quay.io/org/etcd-bundle@sha256:00'
data:
  purpose: 'Argo CD PostSync hook of olm-cmp: it holds the end of a sync until Argo CD has seen every object the sync applied, so that the Application is Synced at once. Argo CD deletes it when the hook succeeds.'
`
	diff(t, first, want)
}

// TestFiltersOrder pins the standard list: a change of order is a change of
// behaviour and must show up in review.
func TestFiltersOrder(t *testing.T) {
	var got []string
	for _, f := range filtersOf(pipelineOptions(nil)) {
		got = append(got, fmt.Sprintf("%T", f))
	}
	want := []string{
		"transform.namespaceFilter", "transform.serviceAccountsFilter", "transform.imagePullSecretsFilter",
		"transform.bundleSubjectsFilter", "transform.authReaderFilter", "transform.settleHookFilter", "transform.annotateFilter",
		"transform.annotateFilter", "transform.waveStep", "transform.excludeFilter",
		"transform.imagesFilter", "transform.patchesFilter", "transform.apiVersionsFilter",
		"transform.requiredFilter", "transform.liveFormFilter", "transform.optionsStep",
		"transform.sortFilter",
	}
	if !slices.Equal(got, want) {
		t.Errorf("filters\n%v\nwant\n%v", got, want)
	}
	var _ kio.Filter = sortFilter{}
}

// bigBundle returns n objects, a tenth of them CRDs of ~100 KB.
func bigBundle(b *testing.B, n int) string {
	var sb strings.Builder
	desc := strings.Repeat("x", 100)
	for i := range n {
		if i > 0 {
			sb.WriteString("---\n")
		}
		if i%10 == 0 {
			fmt.Fprintf(&sb, "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: k%d.example.com\nspec:\n  group: example.com\n  names:\n    kind: K%d\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        properties:\n", i, i)
			for j := range 800 {
				fmt.Fprintf(&sb, "          f%d:\n            type: string\n            description: %s\n", j, desc)
			}
			continue
		}
		fmt.Fprintf(&sb, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%d\n  namespace: ops\ndata:\n  k: v\n", i)
	}
	return sb.String()
}

func BenchmarkSyncWavesSerialize(b *testing.B) {
	in := bigBundle(b, 200)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		b.StopTimer()
		nodes := parse(b, in)
		b.StartTimer()
		out, err := Apply(nodes, SyncWaves(testWaves, true), Sort())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Serialize(out); err != nil {
			b.Fatal(err)
		}
	}
}

// filtersOf is the filters of Steps, without their names.
func filtersOf(o Options) []kio.Filter {
	var fs []kio.Filter
	for _, s := range Steps(o) {
		fs = append(fs, s.Filter)
	}
	return fs
}
