package transform

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	kustomizetypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	k8syaml "sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/internal/spec"
)

var testWaves = spec.SyncWaves{}.Effective()

const wavesInput = `apiVersion: v1
kind: Namespace
metadata:
  name: ops
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: etcdclusters.etcd.example.com
  annotations:
    argocd.argoproj.io/sync-options: Replace=true, Prune=confirm
spec:
  group: etcd.example.com
  names:
    kind: EtcdCluster
  versions:
  - name: v1
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: op
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: op
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: op
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: op # the operator
spec: {}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: pinned
  annotations:
    argocd.argoproj.io/sync-wave: "7"
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: selfsigned
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: vwc
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1.example.com
---
apiVersion: etcd.example.com/v1
kind: EtcdCluster
metadata:
  name: example
---
apiVersion: other.example.com/v1
kind: Foo
metadata:
  name: marked
  annotations:
    internal.olm-cmp.dev/custom-resource: "true"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: marked-builtin
  annotations:
    internal.olm-cmp.dev/custom-resource: "true"
    keep: me
---
apiVersion: other.example.com/v1
kind: Bar
metadata:
  name: unmarked
`

func TestSyncWaves(t *testing.T) {
	want := `apiVersion: v1
kind: Namespace
metadata:
  name: ops
  annotations:
    argocd.argoproj.io/sync-wave: '-4'
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: etcdclusters.etcd.example.com
  annotations:
    argocd.argoproj.io/sync-options: Replace=true,Prune=confirm,Delete=false
    argocd.argoproj.io/sync-wave: '-4'
spec:
  group: etcd.example.com
  names:
    kind: EtcdCluster
  versions:
  - name: v1
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: op
  annotations:
    argocd.argoproj.io/sync-wave: '-3'
    argocd.argoproj.io/sync-options: 'PruneLast=true'
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: op
  annotations:
    argocd.argoproj.io/sync-wave: '-3'
    argocd.argoproj.io/sync-options: 'PruneLast=true'
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: op
  annotations:
    argocd.argoproj.io/sync-wave: '-3'
    argocd.argoproj.io/sync-options: 'PruneLast=true'
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: op # the operator
  annotations:
    argocd.argoproj.io/sync-wave: '-2'
spec: {}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: pinned
  annotations:
    argocd.argoproj.io/sync-wave: "7"
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: selfsigned
  annotations:
    argocd.argoproj.io/sync-wave: '-2'
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: vwc
  annotations:
    argocd.argoproj.io/sync-wave: '-1'
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1.example.com
  annotations:
    argocd.argoproj.io/sync-wave: '-1'
---
apiVersion: etcd.example.com/v1
kind: EtcdCluster
metadata:
  name: example
  annotations:
    argocd.argoproj.io/sync-wave: '0'
---
apiVersion: other.example.com/v1
kind: Foo
metadata:
  name: marked
  annotations:
    argocd.argoproj.io/sync-wave: '0'
    argocd.argoproj.io/sync-options: 'SkipDryRunOnMissingResource=true'
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: marked-builtin
  annotations:
    keep: me
    argocd.argoproj.io/sync-wave: '-2'
---
apiVersion: other.example.com/v1
kind: Bar
metadata:
  name: unmarked
  annotations:
    argocd.argoproj.io/sync-wave: '-2'
`
	got := run(t, SyncWaves(testWaves, true), wavesInput)
	diff(t, got, want)
	// Idempotent.
	diff(t, run(t, SyncWaves(testWaves, true), got), want)

	// keepCRDs false: no Delete/Prune options; custom waves.
	w := spec.Waves{CRDs: -10, RBAC: -5, Operator: 1, Webhooks: 2, CRs: 3}
	got = run(t, SyncWaves(w, false), wavesInput)
	for _, s := range []string{
		"argocd.argoproj.io/sync-options: Replace=true, Prune=confirm\n    argocd.argoproj.io/sync-wave: '-10'",
		"name: op\n  annotations:\n    argocd.argoproj.io/sync-wave: '-5'",
		"name: op # the operator\n  annotations:\n    argocd.argoproj.io/sync-wave: '1'",
		"name: vwc\n  annotations:\n    argocd.argoproj.io/sync-wave: '2'",
		"name: example\n  annotations:\n    argocd.argoproj.io/sync-wave: '3'",
	} {
		if !strings.Contains(got, s) {
			t.Errorf("missing %q in\n%s", s, got)
		}
	}
}

// configMapOfSize returns a ConfigMap whose last-applied estimate is size.
func configMapOfSize(t *testing.T, size int) *yaml.RNode {
	t.Helper()
	base := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n  annotations:\n    argocd.argoproj.io/sync-wave: \"0\"\ndata:\n  x: \"\"\n"
	n := yaml.MustParse(base)
	s0, err := lastAppliedSize(n)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.PipeE(yaml.Lookup("data"), yaml.SetField("x", yaml.NewStringRNode(strings.Repeat("a", size-s0)))); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestServerSideApplyThreshold(t *testing.T) {
	limit := MaxAnnotationsSize - SSAMargin
	for _, tc := range []struct {
		size int
		ssa  bool
	}{{limit - 1, false}, {limit, false}, {limit + 1, true}, {MaxAnnotationsSize * 4, true}} {
		n := configMapOfSize(t, tc.size)
		if got, _ := lastAppliedSize(n); got != tc.size {
			t.Fatalf("size %d, want %d", got, tc.size)
		}
		out, err := SyncWaves(testWaves, true).Filter([]*yaml.RNode{n})
		if err != nil {
			t.Fatal(err)
		}
		opts := out[0].GetAnnotations()[SyncOptionsAnnotation]
		if (opts == OptServerSideApply) != tc.ssa {
			t.Errorf("size %d: sync-options %q, want SSA %v", tc.size, opts, tc.ssa)
		}
	}
}

// TestLastAppliedSize checks the estimate against an independent computation:
// the manifest as Argo CD parses it (sigs.k8s.io/yaml), encoded as kubectl
// does (json.Encoder), plus every annotation's key and value.
func TestLastAppliedSize(t *testing.T) {
	in := `apiVersion: v1
kind: ConfigMap
metadata:
  name: c # comment
  annotations:
    a: "<html> & stuff"
    kubectl.kubernetes.io/last-applied-configuration: '{"old": true}'
data:
  num: "1"
  s: é
  empty: ""
binaryData: {}
`
	n := yaml.MustParse(in)
	got, err := lastAppliedSize(n)
	if err != nil {
		t.Fatal(err)
	}
	j, err := k8syaml.YAMLToJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(j, &obj); err != nil {
		t.Fatal(err)
	}
	ann := obj["metadata"].(map[string]any)["annotations"].(map[string]any)
	delete(ann, lastAppliedConfigKey)
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(obj); err != nil {
		t.Fatal(err)
	}
	want := len(lastAppliedConfigKey) + buf.Len() + len("a") + len("<html> & stuff")
	if got != want {
		t.Errorf("lastAppliedSize = %d, want %d", got, want)
	}
	// The object itself is not changed.
	diff(t, n.MustString(), in)
}

func TestMergeSyncOptions(t *testing.T) {
	for _, tc := range []struct{ old, want string }{
		{"", "ServerSideApply=true,Delete=false"},
		{"Delete=true", "Delete=true,ServerSideApply=true"},
		{" ServerSideApply=false ,, Validate=false", "ServerSideApply=false,Validate=false,Delete=false"},
		{"ServerSideApply=true,Delete=false", "ServerSideApply=true,Delete=false"},
	} {
		n := yaml.MustParse("kind: X\nmetadata:\n  name: x\n")
		if tc.old != "" {
			n.PipeE(yaml.SetAnnotation(SyncOptionsAnnotation, tc.old))
		}
		if err := mergeSyncOptions(n, []string{OptServerSideApply, OptDeleteFalse}); err != nil {
			t.Fatal(err)
		}
		if got := n.GetAnnotations()[SyncOptionsAnnotation]; got != tc.want {
			t.Errorf("merge into %q = %q, want %q", tc.old, got, tc.want)
		}
	}
}

func TestMarkCR(t *testing.T) {
	in := "apiVersion: x.example.com/v1\nkind: X\nmetadata:\n  name: x\n"
	nodes, err := Apply(parse(t, in), MarkCR())
	if err != nil {
		t.Fatal(err)
	}
	if !isMarkedCR(nodes[0]) {
		t.Fatal("not marked")
	}
	// Serialize never shows the mark.
	diff(t, render(t, nodes), in)
	// Once serialized, the mark is gone: an unknown kind lands in the operator wave.
	diff(t, run(t, SyncWaves(testWaves, true), render(t, nodes)), "apiVersion: x.example.com/v1\nkind: X\nmetadata:\n  name: x\n  annotations:\n    argocd.argoproj.io/sync-wave: '-2'\n")
	// SyncWaves consumes it: CR wave, and its CRD is not in the render.
	nodes, err = Apply(nodes, SyncWaves(testWaves, true))
	if err != nil {
		t.Fatal(err)
	}
	diff(t, nodes[0].MustString(), "apiVersion: x.example.com/v1\nkind: X\nmetadata:\n  name: x\n  annotations:\n    argocd.argoproj.io/sync-wave: '0'\n    argocd.argoproj.io/sync-options: 'SkipDryRunOnMissingResource=true'\n")
}

// TestSyncOptionsAfterPatches: WaveStep runs before the user's steps and
// OptionsStep after them; the final options follow the final objects.
func TestSyncOptionsAfterPatches(t *testing.T) {
	const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names:
    kind: Widget
  versions:
  - name: v1
`
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n"
	bigData := `[{"op": "add", "path": "/data", "value": {"k": "` + strings.Repeat("x", MaxAnnotationsSize) + `"}}]`
	cases := []struct {
		name    string
		objects string
		marked  string // objects MarkCR marks (an example or extra manifest)
		between func(t *testing.T) []kio.Filter
		kind    string
		want    string // the final sync-options annotation
	}{
		{"a patch's Replace keeps our CRD options but not SSA", crd, "", func(t *testing.T) []kio.Filter {
			return []kio.Filter{Patches([]kustomizetypes.Patch{{Patch: "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n  annotations:\n    argocd.argoproj.io/sync-options: Replace=true\n"}}, nil)}
		}, "CustomResourceDefinition", "Replace=true,Delete=false,Prune=false"},
		{"a patch's value wins for its key", crd, "", func(t *testing.T) []kio.Filter {
			return []kio.Filter{Patches([]kustomizetypes.Patch{{Patch: "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n  annotations:\n    argocd.argoproj.io/sync-options: Prune=true\n"}}, nil)}
		}, "CustomResourceDefinition", "Prune=true,ServerSideApply=true,Delete=false"},
		{"a CR whose CRD is excluded skips the dry run", crd, "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n", func(t *testing.T) []kio.Filter {
			return []kio.Filter{Exclude([]string{"CustomResourceDefinition"}, nil)}
		}, "Widget", OptSkipDryRun},
		{"a patch that grows an object past the limit", cm, "", func(t *testing.T) []kio.Filter {
			return []kio.Filter{Patches([]kustomizetypes.Patch{{Patch: bigData, Target: &kustomizetypes.Selector{ResId: resid.ResId{Gvk: resid.Gvk{Kind: "ConfigMap"}}}}}, nil)}
		}, "ConfigMap", OptServerSideApply},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nodes := parse(t, c.objects)
			if c.marked != "" {
				crs, err := MarkCR().Filter(parse(t, c.marked))
				if err != nil {
					t.Fatal(err)
				}
				nodes = append(nodes, crs...)
			}
			s := NewSyncWaves(testWaves, true)
			filters := append([]kio.Filter{s.WaveStep()}, c.between(t)...)
			out, err := Apply(nodes, append(filters, s.OptionsStep())...)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range out {
				if n.GetKind() != c.kind {
					continue
				}
				if got := n.GetAnnotations()[SyncOptionsAnnotation]; got != c.want {
					t.Errorf("sync-options %q, want %q", got, c.want)
				}
				if _, ok := n.GetAnnotations()[CRMarker]; ok {
					t.Error("the internal CR mark is still there")
				}
				return
			}
			t.Fatalf("no %s in the output", c.kind)
		})
	}
}
