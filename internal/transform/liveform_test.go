package transform

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	k8syaml "sigs.k8s.io/yaml"
)

// A CRD holding every kind of empty value: those apiextensions.k8s.io/v1
// does not encode must go, those it encodes (and everything else) must stay,
// with comments, key order and styles.
const liveFormCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  creationTimestamp: null
  labels: {}
  annotations:
    keep: "" # an empty annotation value is data
spec:
  group: example.com
  names:
    kind: Widget
    plural: widgets
    shortNames: []
  scope: Namespaced
  preserveUnknownFields: false # the API server drops it
  versions:
  - name: v1
    served: true
    storage: true
    deprecated: false
    additionalPrinterColumns:
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
      priority: 0
      description: ""
    schema:
      openAPIV3Schema:
        type: object
        description: ""
        properties:
          spec:
            type: object
            nullable: false
            properties: {}
            required: []
            x-kubernetes-preserve-unknown-fields: true
          flag:
            type: boolean
            default: false
          count:
            type: integer
            minimum: 0
            default: 0
          opts:
            type: object
            default: {}
          text:
            type: string
            enum: [""]
            example: null
          extra:
            type: object
            additionalProperties:
              type: string
              nullable: false
          tuple:
            type: array
            items:
            - type: string
              description: ""
          dep:
            type: object
            dependencies:
              a:
                type: object
                required: []
              b: [x]
            x-kubernetes-validations:
            - rule: self.a == 1
              message: ""
            externalDocs:
              url: ""
            not:
              nullable: false
    subresources:
      status: {}
  - name: v0
    served: false
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        x-unknown-extension: false
        x-unknown-extension-2: kept
        x-unknown-flag: true
status: {} # a struct: omitempty keeps it
`

const liveFormCRDWant = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  annotations:
    keep: "" # an empty annotation value is data
spec:
  group: example.com
  names:
    kind: Widget
    plural: widgets
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
          flag:
            type: boolean
            default: false
          count:
            type: integer
            minimum: 0
            default: 0
          opts:
            type: object
            default: {}
          text:
            type: string
            enum: [""]
          extra:
            type: object
            additionalProperties:
              type: string
          tuple:
            type: array
            items:
            - type: string
          dep:
            type: object
            dependencies:
              a:
                type: object
              b: [x]
            x-kubernetes-validations:
            - rule: self.a == 1
            externalDocs: {}
            not: {}
    subresources:
      status: {}
  - name: v0
    served: false
    storage: false
    schema:
      openAPIV3Schema:
        type: object
status: {} # a struct: omitempty keeps it
`

func TestLiveFormCRD(t *testing.T) {
	f := LiveForm(nil)
	got := run(t, f, liveFormCRD)
	diff(t, got, liveFormCRDWant)
	// Idempotent: a second pass finds nothing more.
	diff(t, run(t, f, got), liveFormCRDWant)
}

// The result holds nothing that the typed apiextensions.k8s.io/v1 object
// would leave out, and the typed object is the same before and after: what
// was dropped carried no meaning for the API server.
func TestLiveFormCRDKeepsItsMeaning(t *testing.T) {
	typed := func(doc string) (apiextensionsv1.CustomResourceDefinition, map[string]any) {
		t.Helper()
		var crd apiextensionsv1.CustomResourceDefinition
		if err := k8syaml.Unmarshal([]byte(doc), &crd); err != nil {
			t.Fatal(err)
		}
		enc, _ := json.Marshal(&crd)
		var m map[string]any
		_ = json.Unmarshal(enc, &m)
		return crd, m
	}
	before, _ := typed(liveFormCRD)
	out := run(t, LiveForm(nil), liveFormCRD)
	after, encoded := typed(out)
	b1, _ := json.Marshal(&before)
	b2, _ := json.Marshal(&after)
	if string(b1) != string(b2) {
		t.Errorf("the typed CRD changed:\nbefore: %s\nafter:  %s", b1, b2)
	}
	var rendered map[string]any
	if err := k8syaml.Unmarshal([]byte(out), &rendered); err != nil {
		t.Fatal(err)
	}
	var missing []string
	onlyIn(rendered, encoded, "", &missing)
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("keys in the render that the API server would not store: %v", missing)
	}
}

// Keys the v1 type does not have are dropped whatever they hold, as the API
// server and OLM v1's typed decoding drop them, and named in one warning:
// openebs 3.0.0 ships a v1 CRD with v1beta1's spec.version, windup-operator
// 0.0.11 one with spec.status under spec.
func TestLiveFormDropsFieldsTheTypeDoesNotHave(t *testing.T) {
	in := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: cstorpoolclusters.cstor.openebs.io
spec:
  group: cstor.openebs.io
  version: v1 # v1beta1's field
  names:
    kind: CStorPoolCluster
    plural: cstorpoolclusters
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-descriptors: [a]
  status: # misplaced: the CRD's status is at the top
    acceptedNames: {kind: ""}
`
	want := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: cstorpoolclusters.cstor.openebs.io
spec:
  group: cstor.openebs.io
  names:
    kind: CStorPoolCluster
    plural: cstorpoolclusters
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
`
	var warnings []string
	got := run(t, LiveForm(func(w string) { warnings = append(warnings, w) }), in)
	diff(t, got, want)
	wantWarn := "apiextensions.k8s.io/CustomResourceDefinition cstorpoolclusters.cstor.openebs.io: dropped spec.version, spec.versions[0].schema.openAPIV3Schema.x-descriptors, spec.status, which apiextensions.k8s.io/v1 does not have (the API server and OLM v1 drop it too; if you wrote this CRD, check the field's name and place)"
	if len(warnings) != 1 || warnings[0] != wantWarn {
		t.Errorf("warnings = %q, want [%q]", warnings, wantWarn)
	}
	// The typed round trip agrees: nothing left that the type does not have.
	var crd apiextensionsv1.CustomResourceDefinition
	if err := k8syaml.UnmarshalStrict([]byte(got), &crd); err != nil {
		t.Errorf("the live form still has fields the type does not: %v", err)
	}
}

// onlyIn lists the paths of keys in a that b does not have.
func onlyIn(a, b any, path string, out *[]string) {
	switch av := a.(type) {
	case map[string]any:
		bv, _ := b.(map[string]any)
		for k, v := range av {
			w, ok := bv[k]
			if !ok {
				*out = append(*out, path+"."+k)
				continue
			}
			onlyIn(v, w, path+"."+k, out)
		}
	case []any:
		bv, _ := b.([]any)
		for i := range av {
			if i < len(bv) {
				onlyIn(av[i], bv[i], path+"["+strconv.Itoa(i)+"]", out)
			}
		}
	}
}

// preserveUnknownFields: true is not empty: the API server keeps it on a CRD
// that already has it and refuses it on a new one; either way it is not ours
// to drop.
func TestLiveFormKeepsPreserveUnknownFieldsTrue(t *testing.T) {
	in := strings.Replace(liveFormCRD, "preserveUnknownFields: false # the API server drops it", "preserveUnknownFields: true", 1)
	got := run(t, LiveForm(nil), in)
	if !strings.Contains(got, "\n  preserveUnknownFields: true\n") {
		t.Errorf("preserveUnknownFields: true was dropped:\n%s", got)
	}
}

// Only apiextensions.k8s.io/v1 CRDs are read through the type: the same keys
// in other objects are data of their own.
func TestLiveFormLeavesOtherObjectsAlone(t *testing.T) {
	in := `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  labels: {}
spec:
  preserveUnknownFields: false
  properties: {}
  nullable: false
---
apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata:
  name: old.example.com
spec:
  preserveUnknownFields: false
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: op
spec:
  paused: false
  template:
    metadata:
      creationTimestamp: null
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: plain
rules: []
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: r
  namespace: ns
aggregationRule:
  clusterRoleSelectors: [{matchLabels: {a: b}}]
rules: []
`
	diff(t, run(t, LiveForm(nil), in), in)
}

func TestLiveFormAggregatedClusterRoles(t *testing.T) {
	in := `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: empty
aggregationRule:
  clusterRoleSelectors:
  - matchLabels: {rbac.example.com/aggregate-to-empty: "true"}
rules: []
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: filled
aggregationRule:
  clusterRoleSelectors:
  - matchLabels: {rbac.example.com/aggregate-to-filled: "true"}
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: none
aggregationRule:
  clusterRoleSelectors:
  - matchLabels: {rbac.example.com/aggregate-to-none: "true"}
`
	want := `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: empty
aggregationRule:
  clusterRoleSelectors:
  - matchLabels: {rbac.example.com/aggregate-to-empty: "true"}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: filled
aggregationRule:
  clusterRoleSelectors:
  - matchLabels: {rbac.example.com/aggregate-to-filled: "true"}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: none
aggregationRule:
  clusterRoleSelectors:
  - matchLabels: {rbac.example.com/aggregate-to-none: "true"}
`
	var w warnings
	diff(t, run(t, LiveForm(w.add), in), want)
	if len(w) != 1 || !strings.Contains(w[0], "ClusterRole filled") || !strings.Contains(w[0], "aggregationRule") {
		t.Errorf("want one warning, about the rules of ClusterRole filled; got %q", w)
	}
}

// Internal annotations (the custom-resource mark, kustomize's bookkeeping)
// are never sent to the cluster; they must survive, empty or not.
func TestLiveFormKeepsInternalAnnotations(t *testing.T) {
	nodes := parse(t, liveFormCRD)
	if err := nodes[0].PipeE(yaml.SetAnnotation("internal.config.kubernetes.io/note", "")); err != nil {
		t.Fatal(err)
	}
	out, err := LiveForm(nil).Filter(nodes)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out[0].GetAnnotations()["internal.config.kubernetes.io/note"]; !ok {
		t.Errorf("internal annotation dropped: %v", out[0].GetAnnotations())
	}
}

// A value of the wrong type is not the step's business: it stays, and the
// API server refuses the CRD with its own message.
func TestLiveFormLeavesWrongTypesAlone(t *testing.T) {
	in := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: bad.example.com
spec:
  preserveUnknownFields: "false"
  versions:
  - name: v1
    served: "yes"
    deprecated: 0
`
	diff(t, run(t, LiveForm(nil), in), in)
}

// Values the printer writes in a form JSON does not have are read the way
// the repo-server reads them: 0x0 is the number 0 there.
func TestLiveFormReadsYAMLAsTheRepoServer(t *testing.T) {
	in := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  versions:
  - name: v1
    additionalPrinterColumns:
    - name: A
      priority: 0x0
    - name: B
      priority: 0x1
`
	want := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  versions:
  - name: v1
    additionalPrinterColumns:
    - name: A
    - name: B
      priority: 0x1
`
	diff(t, run(t, LiveForm(nil), in), want)
}

// A custom resource of a cluster-scoped CRD of the render loses metadata.namespace (an
// alm-example may carry one; the API server ignores it); a namespaced one keeps it, and so does
// an object whose CRD is not in the render.
func TestLiveFormClusterScopedCRs(t *testing.T) {
	in := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: aaqs.aaq.kubevirt.io
spec:
  group: aaq.kubevirt.io
  scope: Cluster
  names: {kind: AAQ, plural: aaqs}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Thing, plural: things}
---
apiVersion: aaq.kubevirt.io/v1alpha1
kind: AAQ
metadata:
  name: aaq
  namespace: aaq
---
apiVersion: example.com/v1
kind: Thing
metadata:
  name: t
  namespace: ns
---
apiVersion: other.example.com/v1
kind: AAQ
metadata:
  name: x
  namespace: ns
`
	out, err := LiveForm(nil).Filter(parse(t, in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"aaq": "", "t": "ns", "x": "ns"}
	for _, n := range out[2:] {
		if got := n.GetNamespace(); got != want[n.GetName()] {
			t.Errorf("%s/%s: namespace %q, want %q", n.GetKind(), n.GetName(), got, want[n.GetName()])
		}
	}
}
