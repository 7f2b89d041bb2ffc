package transform

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"
	"strings"
	"testing"
)

const almExamples = `[
  {
    "apiVersion": "etcd.example.com/v1",
    "kind": "EtcdCluster",
    "metadata": {"name": "example", "labels": {}},
    "spec": {"size": 3, "version": "3.5.0", "ratio": 0.5, "tls": true, "extra": null,
             "annotations": {"a": "true", "b": "123", "c": "multi\nline\n", "d": "\u00e9\/x", "e": "", "f": "on", "y": "n", "g": "1:30"},
             "list": [], "empty": {}}
  },
  {
    "apiVersion": "etcd.example.com/v1",
    "kind": "EtcdBackup",
    "metadata": {"name": "backup", "namespace": "given"}
  },
  {
    "apiVersion": "etcd.example.com/v1",
    "kind": "EtcdRestore",
    "metadata": {"name": "restore"}
  },
  {
    "apiVersion": "other.example.com/v1",
    "kind": "EtcdCluster",
    "metadata": {"name": "other"}
  },
  {
    "apiVersion": "etcd.example.com/v1",
    "kind": "EtcdCluster",
    "metadata": {"name": "second"}
  }
]`

const examplesCRDs = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: etcdrestores.etcd.example.com
spec:
  group: etcd.example.com
  scope: Cluster
  names:
    kind: EtcdRestore
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: etcdclusters.etcd.example.com
spec:
  group: etcd.example.com
  scope: Namespaced
  names:
    kind: EtcdCluster
`

func TestExamples(t *testing.T) {
	crds := parse(t, examplesCRDs)
	for _, tc := range []struct {
		name  string
		kinds []string
		want  string
	}{
		{"none", nil, ""},
		{"kind in every group, in annotation order", []string{"EtcdCluster"}, `apiVersion: etcd.example.com/v1
kind: EtcdCluster
metadata:
  name: example
  labels: {}
  namespace: ops
spec:
  size: 3
  version: 3.5.0
  ratio: 0.5
  tls: true
  extra: null
  annotations:
    a: "true"
    b: "123"
    c: |
      multi
      line
    d: é/x
    e: ""
    f: "on"
    "y": "n"
    g: 1:30
  list: []
  empty: {}
---
apiVersion: other.example.com/v1
kind: EtcdCluster
metadata:
  name: other
  namespace: ops
---
apiVersion: etcd.example.com/v1
kind: EtcdCluster
metadata:
  name: second
  namespace: ops
`},
		{"group/Kind; namespace kept; cluster-scoped left alone", []string{"other.example.com/EtcdCluster", "EtcdBackup", "EtcdRestore"}, `apiVersion: etcd.example.com/v1
kind: EtcdBackup
metadata:
  name: backup
  namespace: given
---
apiVersion: etcd.example.com/v1
kind: EtcdRestore
metadata:
  name: restore
---
apiVersion: other.example.com/v1
kind: EtcdCluster
metadata:
  name: other
  namespace: ops
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Examples(almExamples, tc.kinds, "ops", crds, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				diff(t, "", tc.want)
				return
			}
			diff(t, render(t, got), tc.want)
		})
	}
}

func TestExamplesErrors(t *testing.T) {
	for _, tc := range []struct {
		name, alm string
		kinds     []string
		want      string
	}{
		{"missing kinds", almExamples, []string{"Nope", "EtcdCluster", "etcd.example.com/Zed"},
			`no alm-examples of kind "Nope", "etcd.example.com/Zed"; available kinds: EtcdBackup, EtcdCluster, EtcdRestore`},
		{"no annotation", " ", []string{"EtcdCluster"}, "the CSV has no alm-examples annotation (kinds asked for: EtcdCluster)"},
		{"empty list", "[]", []string{"EtcdCluster"}, `no alm-examples of kind "EtcdCluster"; available kinds: none`},
		{"bad JSON", `[{"kind": }]`, []string{"X"}, "alm-examples: invalid character '}' looking for beginning of value"},
		{"not an array", `{"kind": "X"}`, []string{"X"}, "alm-examples: not a JSON array"},
		{"trailing data", `[] []`, []string{"X"}, "alm-examples: unexpected data after the JSON array"},
		{"truncated", `[{"kind": "X"`, []string{"X"}, "alm-examples: unexpected end of JSON"},
		{"not an object", `[1]`, []string{"X"}, "alm-examples[0]: not an object"},
		{"no kind", `[{"apiVersion": "v1"}]`, []string{"X"}, "alm-examples[0]: apiVersion and kind are required"},
		{"no name", `[{"apiVersion": "a/v1", "kind": "X"}]`, []string{"X"}, "alm-examples[0] (a/X): metadata.name is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Examples(tc.alm, tc.kinds, "ops", nil, nil)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	// No kinds asked: the annotation is not even parsed.
	if got, err := Examples("not json", nil, "ops", nil, nil); got != nil || err != nil {
		t.Errorf("got %v, %v", got, err)
	}
}

// Two examples with one name (lws-operator's CSV lists a plain and an
// infra-node variant of "cluster"): the first is kept, with a warning.
func TestExamplesSameNameKeepsFirst(t *testing.T) {
	alm := `[{"apiVersion":"x.io/v1","kind":"Op","metadata":{"name":"cluster"},"spec":{"v":1}},
	         {"apiVersion":"x.io/v1","kind":"Op","metadata":{"name":"cluster"},"spec":{"v":2}},
	         {"apiVersion":"x.io/v1","kind":"Op","metadata":{"name":"other"}}]`
	var warnings []string
	got, err := Examples(alm, []string{"Op"}, "ops", nil, func(s string) { warnings = append(warnings, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].GetName() != "cluster" || got[1].GetName() != "other" {
		t.Fatalf("want cluster and other, got %d objects", len(got))
	}
	if v, err := got[0].Pipe(yaml.Lookup("spec", "v")); err != nil || v == nil || v.YNode().Value != "1" {
		t.Errorf("kept spec.v=%v (%v), want the first example's 1", v, err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "alm-examples[1]") {
		t.Errorf("warnings = %q", warnings)
	}
}
