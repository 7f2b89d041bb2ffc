package transform

import (
	"errors"
	"os"
	"testing"

	kustomizetypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
)

const patchInput = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: op-controller
  namespace: ops
  labels:
    app: op
spec:
  replicas: 1 # the bundle's default
  template:
    spec:
      containers:
      - name: manager
        image: quay.io/org/op:v1
        resources: {}
        env:
        - name: A
          value: "1"
      - name: proxy
        image: quay.io/org/proxy:v1
---
apiVersion: v1
kind: Service
metadata:
  name: op-metrics
  namespace: ops
  labels:
    app: op
  annotations:
    team: a
spec:
  ports:
  - port: 8443
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: op-config
  namespace: ops
data: {}
`

func target(group, version, kind, name string) *kustomizetypes.Selector {
	return &kustomizetypes.Selector{ResId: resid.ResId{Gvk: resid.Gvk{Group: group, Version: version, Kind: kind}, Name: name}}
}

func TestPatches(t *testing.T) {
	files := map[string]string{
		"patches/replicas.yaml": "- op: replace\n  path: /spec/replicas\n  value: 3\n",
	}
	readFile := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, os.ErrNotExist
	}
	for _, tc := range []struct {
		name    string
		patches []kustomizetypes.Patch
		want    string
	}{
		{"strategic merge by id: containers merge by name, comments and {} kept", []kustomizetypes.Patch{{Patch: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: op-controller
spec:
  template:
    spec:
      containers:
      - name: manager
        env:
        - name: B
          value: "2"
`}}, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: op-controller
  namespace: ops
  labels:
    app: op
spec:
  replicas: 1 # the bundle's default
  template:
    spec:
      containers:
      - name: manager
        image: quay.io/org/op:v1
        resources: {}
        env:
        - name: B
          value: "2"
        - name: A
          value: "1"
      - name: proxy
        image: quay.io/org/proxy:v1
`},
		{"strategic merge with a label target; the patch's name is ignored", []kustomizetypes.Patch{{
			Target: &kustomizetypes.Selector{LabelSelector: "app=op"},
			Patch:  "apiVersion: v1\nkind: Whatever\nmetadata:\n  name: ignored\n  annotations:\n    argocd.argoproj.io/sync-wave: \"5\"\n",
		}}, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: op-controller
  namespace: ops
  labels:
    app: op
  annotations:
    argocd.argoproj.io/sync-wave: "5"
spec:
  replicas: 1 # the bundle's default
  template:
    spec:
      containers:
      - name: manager
        image: quay.io/org/op:v1
        resources: {}
        env:
        - name: A
          value: "1"
      - name: proxy
        image: quay.io/org/proxy:v1
---
apiVersion: v1
kind: Service
metadata:
  name: op-metrics
  namespace: ops
  labels:
    app: op
  annotations:
    team: a
    argocd.argoproj.io/sync-wave: "5"
spec:
  ports:
  - port: 8443
`},
		{"$patch: delete removes the object", []kustomizetypes.Patch{{
			Patch: "apiVersion: v1\nkind: Service\nmetadata:\n  name: op-metrics\n$patch: delete\n",
		}}, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: op-controller
  namespace: ops
  labels:
    app: op
spec:
  replicas: 1 # the bundle's default
  template:
    spec:
      containers:
      - name: manager
        image: quay.io/org/op:v1
        resources: {}
        env:
        - name: A
          value: "1"
      - name: proxy
        image: quay.io/org/proxy:v1
`},
		{"JSON 6902 in JSON, regex name target; then a second patch sees the first", []kustomizetypes.Patch{
			{Target: target("", "v1", "Service|ConfigMap", "op-.*"), Patch: `[{"op": "add", "path": "/metadata/annotations", "value": {"x": "y"}}]`},
			{Target: target("", "", "ConfigMap", ""), Patch: "- op: add\n  path: /data/k\n  value: v\n"},
		}, `apiVersion: v1
kind: Service
metadata:
  annotations:
    x: "y"
  labels:
    app: op
  name: op-metrics
  namespace: ops
spec:
  ports:
  - port: 8443
---
apiVersion: v1
data:
  k: v
kind: ConfigMap
metadata:
  annotations:
    x: "y"
  name: op-config
  namespace: ops
`},
		{"JSON 6902 from a file, group and namespace target", []kustomizetypes.Patch{{
			Path:   "patches/replicas.yaml",
			Target: &kustomizetypes.Selector{ResId: resid.ResId{Gvk: resid.Gvk{Group: "apps"}, Namespace: "ops"}},
		}}, `apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app: op
  name: op-controller
  namespace: ops
spec:
  replicas: 3
  template:
    spec:
      containers:
      - env:
        - name: A
          value: "1"
        image: quay.io/org/op:v1
        name: manager
        resources: {}
      - image: quay.io/org/proxy:v1
        name: proxy
`},
		{"allowNameChange", []kustomizetypes.Patch{{
			Target:  target("", "", "ConfigMap", ""),
			Patch:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: renamed\n",
			Options: map[string]bool{"allowNameChange": true},
		}}, `apiVersion: v1
kind: ConfigMap
metadata:
  name: renamed
  namespace: ops
data: {}
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Patches(tc.patches, readFile).Filter(parse(t, patchInput))
			if err != nil {
				t.Fatal(err)
			}
			// Show only what changed.
			var changed []string
			orig := parse(t, patchInput)
			for _, n := range out {
				same := false
				for _, o := range orig {
					if o.MustString() == n.MustString() {
						same = true
					}
				}
				if !same {
					changed = append(changed, n.MustString())
				}
			}
			got := ""
			for i, c := range changed {
				if i > 0 {
					got += "---\n"
				}
				got += c
			}
			if tc.name == "$patch: delete removes the object" {
				got = render(t, out[:1])
				if len(out) != 2 {
					t.Errorf("%d objects left, want 2", len(out))
				}
			}
			diff(t, got, tc.want)
		})
	}
}

func TestPatchesErrors(t *testing.T) {
	twoNamespaces := patchInput + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: op-config\n  namespace: other\n"
	readFile := func(string) ([]byte, error) { return nil, errors.New("open patches/x.yaml: no such file") }
	for _, tc := range []struct {
		name    string
		in      string
		patches []kustomizetypes.Patch
		want    string
	}{
		{"no object matches by id", patchInput, []kustomizetypes.Patch{
			{Patch: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: op-config\ndata:\n  a: b\n"},
			{Patch: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typo\ndata:\n  a: b\n"},
		}, "patches[1]: no object matches ConfigMap typo (apiVersion v1); objects of that kind: ops/op-config"},
		{"wrong version is no match", patchInput, []kustomizetypes.Patch{
			{Patch: "apiVersion: apps/v1beta1\nkind: Deployment\nmetadata:\n  name: op-controller\n"},
		}, "patches[0]: no object matches apps/Deployment op-controller (apiVersion apps/v1beta1); objects of that kind: ops/op-controller (apiVersion apps/v1)"},
		{"no object of the kind", patchInput, []kustomizetypes.Patch{
			{Patch: "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: op\n"},
		}, "patches[0]: no object matches apps/StatefulSet op (apiVersion apps/v1)"},
		{"ambiguous id", twoNamespaces, []kustomizetypes.Patch{
			{Patch: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: op-config\n"},
		}, "patches[0]: 2 objects match ConfigMap op-config: set metadata.namespace in the patch or use a target"},
		{"target matches nothing", patchInput, []kustomizetypes.Patch{
			{Target: target("apps", "", "StatefulSet", "op-.*"), Patch: "- op: remove\n  path: /spec/replicas\n"},
		}, `patches[0]: target {group="apps" kind="StatefulSet" name="op-.*"} matches no object`},
		{"target of a kind there is, misspelt name", patchInput, []kustomizetypes.Patch{
			{Target: target("", "", "Deployment", "op-controler"), Patch: "- op: remove\n  path: /spec/replicas\n"},
		}, `patches[0]: target {kind="Deployment" name="op-controler"} matches no object; objects of that kind: ops/op-controller`},
		{"JSON patch without target", patchInput, []kustomizetypes.Patch{
			{Patch: `[{"op": "remove", "path": "/spec/replicas"}]`},
		}, "patches[0]: a JSON 6902 patch needs a target"},
		{"JSON patch fails", patchInput, []kustomizetypes.Patch{
			{Target: target("", "", "ConfigMap", ""), Patch: `[{"op": "remove", "path": "/spec/nope"}]`},
		}, "patches[0]: ConfigMap ops/op-config: remove /spec/nope: the object has no \"spec\"; it has apiVersion, data, kind, metadata"},
		{"JSON patch through a list", patchInput, []kustomizetypes.Patch{
			{Target: target("apps", "", "Deployment", ""), Patch: `[{"op": "replace", "path": "/spec/replicas", "value": 2}, {"op": "replace", "path": "/spec/template/spec/containers/2/image", "value": "y"}]`},
		}, "patches[0]: apps/Deployment ops/op-controller: replace /spec/template/spec/containers/2/image: /spec/template/spec/containers has no \"2\"; its items are 0 (manager), 1 (proxy)"},
		{"neither kind of patch", patchInput, []kustomizetypes.Patch{
			{Patch: "just a string"},
		}, "patches[0]: neither a strategic-merge patch (missing Resource metadata) nor a JSON 6902 patch (json: cannot unmarshal string into Go value of type jsonpatch.Patch)"},
		{"several objects with a target", patchInput, []kustomizetypes.Patch{
			{Target: target("", "", "ConfigMap", ""), Patch: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"},
		}, "patches[0]: a patch with a target must hold one strategic-merge patch, not several"},
		{"patch and path", patchInput, []kustomizetypes.Patch{{Patch: "x: y", Path: "p.yaml"}}, "patches[0]: patch and path are both set"},
		{"neither patch nor path", patchInput, []kustomizetypes.Patch{{Patch: "  \n"}}, "patches[0]: one of patch or path is required"},
		{"unreadable file", patchInput, []kustomizetypes.Patch{{Path: "patches/x.yaml"}}, "patches[0]: path \"patches/x.yaml\": open patches/x.yaml: no such file"},
		{"bad target regex", patchInput, []kustomizetypes.Patch{
			{Target: target("", "", "", "op-("), Patch: `[{"op": "remove", "path": "/spec"}]`},
		}, "patches[0]: target: error parsing regexp: missing closing ): `^(?:op-()$`"},
		{"bad label selector", patchInput, []kustomizetypes.Patch{
			{Target: &kustomizetypes.Selector{LabelSelector: "a in (b"}, Patch: `[{"op": "remove", "path": "/spec"}]`},
		}, "patches[0]: target labelSelector: unable to parse requirement: found '', expected: ',' or ')'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := runErr(t, Patches(tc.patches, readFile), tc.in)
			if msg != tc.want {
				t.Errorf("error:\n%s\nwant:\n%s", msg, tc.want)
			}
		})
	}
	msg := runErr(t, Patches([]kustomizetypes.Patch{{Path: "x.yaml"}}, nil), patchInput)
	if msg != `patches[0]: path "x.yaml": patch files cannot be read here` {
		t.Errorf("error %q", msg)
	}
}
