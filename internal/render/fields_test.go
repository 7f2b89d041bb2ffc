package render

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	kustomizetypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// fieldsExtra is the extra manifest of fieldsRequest: a workload and a
// ServiceAccount, so images and imagePullSecrets have something to act on.
const fieldsExtra = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: extra-worker
  namespace: greeter-system
spec:
  selector:
    matchLabels: {app: extra-worker}
  template:
    metadata:
      labels: {app: extra-worker}
    spec:
      serviceAccountName: greeter-operator
      containers:
      - name: worker
        image: quay.io/olm-cmp/worker:1
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: extra-sa
  namespace: greeter-system
`

// fieldsRequest is the demo with one object of every kind olm-cmp adds (see
// addedObjects), and no images or pull secrets of its own.
func fieldsRequest(t *testing.T) Request {
	t.Helper()
	dir := t.TempDir()
	copyTree(t, demoDir+"/bundle", filepath.Join(dir, "bundle"))
	if err := os.WriteFile(filepath.Join(dir, "extra.yaml"), []byte(fieldsExtra), 0o644); err != nil {
		t.Fatal(err)
	}
	req := demoRequest(t)
	req.SourceDir = dir
	req.Spec.Bundle = "./bundle"
	req.Spec.ImagePullSecrets = nil
	req.Spec.Images = nil
	req.Spec.ServiceAccounts = []string{"operand-sa"}
	req.Spec.AuthReaderBinding = true
	req.Spec.Examples = []string{"Greeter"}
	return req
}

// addedObjects are the objects olm-cmp adds to the bundle's, one per kind.
var addedObjects = []struct{ what, kind, namespace, name string }{
	{"namespace", "Namespace", "", "greeter-system"},
	{"auth-reader binding", "RoleBinding", "kube-system", "greeter-operator-auth-reader"},
	{"extra ServiceAccount", "ServiceAccount", "greeter-system", "operand-sa"},
	{"certificate", "Certificate", "greeter-system", "greeter-operator-controller-service-cert"},
	{"issuer", "Issuer", "greeter-system", "greeter-operator-controller-service-cert-selfsigned-issuer"},
	{"example CR", "Greeter", "greeter-system", "hello"},
	{"extra manifest workload", "Deployment", "greeter-system", "extra-worker"},
	{"extra manifest ServiceAccount", "ServiceAccount", "greeter-system", "extra-sa"},
	{"settle hook", "ConfigMap", "greeter-system", "greeter-operator-sync-settled"},
}

func findObject(nodes []*yaml.RNode, kind, namespace, name string) *yaml.RNode {
	for _, n := range nodes {
		if n.GetKind() == kind && n.GetNamespace() == namespace && n.GetName() == name {
			return n
		}
	}
	return nil
}

// TestEveryFieldReachesEveryAddedObject: exclude, patches, images and
// imagePullSecrets act on each object olm-cmp adds. Where a field has
// nothing to act on (no pod template for images, not a ServiceAccount for
// imagePullSecrets), the object must come out exactly as without the field.
func TestEveryFieldReachesEveryAddedObject(t *testing.T) {
	base := fieldsRequest(t)
	baseNodes := parse(t, mustRender(t, base).YAML())
	for _, o := range addedObjects {
		if findObject(baseNodes, o.kind, o.namespace, o.name) == nil {
			t.Fatalf("the fixture does not render %s %s/%s", o.kind, o.namespace, o.name)
		}
	}
	unchanged := func(t *testing.T, before, after *yaml.RNode) {
		t.Helper()
		if after == nil || before.MustString() != after.MustString() {
			t.Errorf("changed by a field with nothing to act on:\n%s", after.MustString())
		}
	}
	fields := []struct {
		field string
		set   func(req *Request, kind, namespace, name string)
		// check the object after the render; err is the render's error
		check func(t *testing.T, kind string, before, after *yaml.RNode, err error)
	}{
		{"exclude", func(req *Request, kind, _, name string) {
			req.Spec.Exclude = []string{kind + "/" + name}
		}, func(t *testing.T, kind string, _, after *yaml.RNode, err error) {
			if kind == "Certificate" || kind == "Issuer" {
				// the Deployment mounts the Certificate's Secret, and the
				// Certificate needs its Issuer: the render refuses
				if err == nil || !strings.Contains(err.Error(), kind+" greeter-system/") {
					t.Errorf("excluding the %s: %v, want it named in the error", kind, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if after != nil {
				t.Error("still rendered")
			}
		}},
		{"patches", func(req *Request, kind, namespace, name string) {
			req.Spec.Patches = []kustomizetypes.Patch{{
				Target: patchTarget(kind, namespace, name),
				Patch:  `[{"op": "add", "path": "/metadata/annotations/test.olm-cmp.dev~1patched", "value": "yes"}]`,
			}}
		}, func(t *testing.T, _ string, _, after *yaml.RNode, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if after.GetAnnotations()["test.olm-cmp.dev/patched"] != "yes" {
				t.Errorf("not patched:\n%s", after.MustString())
			}
		}},
		{"images", func(req *Request, _, _, _ string) {
			req.Spec.Images = map[string]string{"quay.io/olm-cmp/": "mirror.example.com/olm-cmp/"}
		}, func(t *testing.T, kind string, before, after *yaml.RNode, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if kind != "Deployment" {
				unchanged(t, before, after)
				return
			}
			if img, _ := after.GetString("spec.template.spec.containers[0].image"); img != "mirror.example.com/olm-cmp/worker:1" {
				t.Errorf("image %q", img)
			}
		}},
		{"imagePullSecrets", func(req *Request, _, _, _ string) {
			req.Spec.ImagePullSecrets = []string{"pull"}
		}, func(t *testing.T, kind string, before, after *yaml.RNode, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if kind != "ServiceAccount" {
				unchanged(t, before, after)
				return
			}
			if s, _ := after.GetString("imagePullSecrets[0].name"); s != "pull" {
				t.Errorf("pull secret %q:\n%s", s, after.MustString())
			}
		}},
	}
	for _, f := range fields {
		for _, o := range addedObjects {
			t.Run(f.field+"/"+o.what, func(t *testing.T) {
				req := fieldsRequest(t)
				f.set(&req, o.kind, o.namespace, o.name)
				res, err := (&Renderer{}).Render(context.Background(), req)
				var after *yaml.RNode
				if err == nil {
					after = findObject(parse(t, res.YAML()), o.kind, o.namespace, o.name)
				}
				before := findObject(baseNodes, o.kind, o.namespace, o.name)
				f.check(t, o.kind, before, after, err)
			})
		}
	}
}

// patchTarget selects one object for a patch.
func patchTarget(kind, namespace, name string) *kustomizetypes.Selector {
	return &kustomizetypes.Selector{ResId: resid.ResId{Gvk: resid.Gvk{Kind: kind}, Name: name, Namespace: namespace}}
}

// TestExcludeNamespace: `exclude: [Namespace]` removes the Namespace olm-cmp
// adds, without a "matched no object" warning.
func TestExcludeNamespace(t *testing.T) {
	req := fieldsRequest(t)
	req.Spec.Exclude = []string{"Namespace"}
	res := mustRender(t, req)
	if n := find(parse(t, res.YAML()), "Namespace", ""); n != nil {
		t.Errorf("Namespace %s still rendered", n.GetName())
	}
	for _, w := range res.Warnings {
		if strings.Contains(w, "matched no object") {
			t.Errorf("warning: %s", w)
		}
	}
}

// TestPatchMovesSyncWave: a JSON 6902 patch of the sync-wave annotation
// moves the object to that wave, and the stream is ordered by it.
func TestPatchMovesSyncWave(t *testing.T) {
	req := fieldsRequest(t)
	req.Spec.Patches = []kustomizetypes.Patch{{
		Target: patchTarget("Deployment", "", "greeter-operator-controller"),
		Patch:  "- op: replace\n  path: /metadata/annotations/argocd.argoproj.io~1sync-wave\n  value: \"5\"\n",
	}}
	nodes := parse(t, mustRender(t, req).YAML())
	d := find(nodes, "Deployment", "greeter-operator-controller")
	if w := wave(t, d); w != 5 {
		t.Fatalf("wave %d, want 5", w)
	}
	// every non-hook object after it has a wave of at least 5
	i := slices.Index(nodes, d)
	for _, n := range nodes[i+1:] {
		if _, hook := n.GetAnnotations()["argocd.argoproj.io/hook"]; !hook && wave(t, n) < 5 {
			t.Errorf("%s %s (wave %d) comes after the wave-5 Deployment", n.GetKind(), n.GetName(), wave(t, n))
		}
	}
}

// TestPatchAddsWorkloadIdentityAnnotation: Azure workload identity's
// client-id annotation added with a JSON 6902 `add` to a ServiceAccount the
// bundle ships without annotations.
func TestPatchAddsWorkloadIdentityAnnotation(t *testing.T) {
	req := fieldsRequest(t)
	// the bundle gives it none: every annotation it has is olm-cmp's
	sa := find(parse(t, mustRender(t, req).YAML()), "ServiceAccount", "greeter-operator")
	for k := range sa.GetAnnotations() {
		if !strings.HasPrefix(k, "olm-cmp.dev/") && !strings.HasPrefix(k, "argocd.argoproj.io/") {
			t.Fatalf("the fixture's ServiceAccount has an annotation of its own: %s", k)
		}
	}
	req.Spec.Patches = []kustomizetypes.Patch{{
		Target: patchTarget("ServiceAccount", "", "greeter-operator"),
		Patch:  "- op: add\n  path: /metadata/annotations/azure.workload.identity~1client-id\n  value: 00000000-0000-0000-0000-000000000000\n",
	}}
	sa = find(parse(t, mustRender(t, req).YAML()), "ServiceAccount", "greeter-operator")
	if got := sa.GetAnnotations()["azure.workload.identity/client-id"]; got != "00000000-0000-0000-0000-000000000000" {
		t.Errorf("client-id %q:\n%s", got, sa.MustString())
	}
}

// TestDroppedRequiredObjectFails: a webhook bundle rendered for a cluster
// without cert-manager.io, or with the operator's ServiceAccount excluded,
// fails naming both objects and the fix; excluding an object nothing needs
// renders.
func TestDroppedRequiredObjectFails(t *testing.T) {
	served := []string{"v1", "apps/v1", "rbac.authorization.k8s.io/v1", "apiextensions.k8s.io/v1",
		"admissionregistration.k8s.io/v1", "greeter.example.com/v1alpha1"}
	cases := []struct {
		name    string
		edit    func(*Request)
		err     string
		warning string
	}{
		{"no cert-manager.io", func(r *Request) { r.APIVersions = served },
			"Certificate greeter-system/greeter-operator-controller-service-cert is dropped because the cluster does not serve cert-manager.io/v1, " +
				"but Deployment greeter-system/greeter-operator-controller mounts its Secret greeter-operator-controller-service-cert, " +
				"and ValidatingWebhookConfiguration vgreeter.greeter.example.com takes its CA bundle from it (cert-manager.io/inject-ca-from): " +
				"install cert-manager, or set certificateProvider: none and supply the Secret", ""},
		{"operator ServiceAccount excluded", func(r *Request) { r.Spec.Exclude = []string{"ServiceAccount/greeter-operator"} },
			`ServiceAccount greeter-system/greeter-operator is dropped because exclude "ServiceAccount/greeter-operator" matches it, ` +
				`but Deployment greeter-system/extra-worker runs as it, and Deployment greeter-system/greeter-operator-controller runs as it: remove "ServiceAccount/greeter-operator" from exclude (to change the object, patch it instead)`, ""},
		{"unreferenced Service excluded", func(r *Request) { r.Spec.Exclude = []string{"Service/greeter-metrics"} }, "", ""},
		{"ClusterRole of a kept binding excluded", func(r *Request) { r.Spec.Exclude = []string{"ClusterRole"} }, "",
			"but ClusterRoleBinding greeter-operator.v-"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := fieldsRequest(t)
			c.edit(&req)
			res, err := (&Renderer{}).Render(context.Background(), req)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error:\n%v\nwant it to contain:\n%s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.warning != "" && !strings.Contains(strings.Join(res.Warnings, "\n"), c.warning) {
				t.Errorf("warnings %q, want one containing %q", res.Warnings, c.warning)
			}
		})
	}
}
