package transform

import (
	"strings"
	"testing"

	kustomizetypes "sigs.k8s.io/kustomize/api/types"
)

// requiresInput is an operator with one object of each kind the reference
// graph knows, each referring to the next.
const requiresInput = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: op
  namespace: ops
spec:
  template:
    spec:
      serviceAccountName: op-sa
      containers:
      - name: manager
        envFrom:
        - configMapRef:
            name: op-env
        - secretRef:
            name: op-optional
            optional: true
        env:
        - name: TOKEN
          valueFrom:
            secretKeyRef:
              name: op-token
              key: token
      volumes:
      - name: cert
        secret:
          secretName: op-serving-cert
      - name: bundle
        projected:
          sources:
          - configMap:
              name: op-ca
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: op-sa
  namespace: ops
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: op-env
  namespace: ops
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: op-ca
  namespace: ops
---
apiVersion: v1
kind: Secret
metadata:
  name: op-token
  namespace: ops
---
apiVersion: v1
kind: Secret
metadata:
  name: op-optional
  namespace: ops
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: op-cert
  namespace: ops
spec:
  secretName: op-serving-cert
  issuerRef:
    name: op-issuer
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: op-issuer
  namespace: ops
---
apiVersion: v1
kind: Service
metadata:
  name: op-webhook
  namespace: ops
---
apiVersion: v1
kind: Service
metadata:
  name: op-api
  namespace: ops
---
apiVersion: v1
kind: Service
metadata:
  name: op-conversion
  namespace: ops
---
apiVersion: v1
kind: Service
metadata:
  name: op-metrics
  namespace: ops
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: vop
  annotations:
    cert-manager.io/inject-ca-from: ops/op-cert
webhooks:
- name: vop.example.com
  clientConfig:
    service:
      name: op-webhook
      namespace: ops
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1.op.example.com
spec:
  service:
    name: op-api
    namespace: ops
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.op.example.com
spec:
  group: op.example.com
  names:
    kind: Widget
  conversion:
    strategy: Webhook
    webhook:
      clientConfig:
        service:
          name: op-conversion
          namespace: ops
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: op-role
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: op-role
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: op-role
`

// TestRequiredObjects: dropping an object a kept one needs fails, naming
// both and the way out; dropping an optional or unreferenced one does not.
func TestRequiredObjects(t *testing.T) {
	cases := []struct {
		name    string
		exclude []string
		err     string // "" for none
		warn    string // a warning that must be there; "" for none
	}{
		{"service account", []string{"ServiceAccount/op-sa"},
			`ServiceAccount ops/op-sa is dropped because exclude "ServiceAccount/op-sa" matches it, but Deployment ops/op runs as it: remove "ServiceAccount/op-sa" from exclude (to change the object, patch it instead)`, ""},
		{"certificate making a mounted secret, and a webhook's CA", []string{"Certificate/op-cert"},
			`Certificate ops/op-cert is dropped because exclude "Certificate/op-cert" matches it, but Deployment ops/op mounts its Secret op-serving-cert, and ValidatingWebhookConfiguration vop takes its CA bundle from it (cert-manager.io/inject-ca-from): remove "Certificate/op-cert" from exclude, or set certificateProvider: none and supply the Secret`, ""},
		{"issuer", []string{"Issuer"},
			`Issuer ops/op-issuer is dropped because exclude "Issuer" matches it, but Certificate ops/op-cert is issued by it`, ""},
		{"configmap env", []string{"ConfigMap/op-env"},
			`ConfigMap ops/op-env is dropped because exclude "ConfigMap/op-env" matches it, but Deployment ops/op takes its environment from it`, ""},
		{"projected configmap", []string{"ConfigMap/op-ca"},
			`ConfigMap ops/op-ca is dropped because exclude "ConfigMap/op-ca" matches it, but Deployment ops/op mounts it`, ""},
		{"secret key env", []string{"Secret/op-token"},
			`Secret ops/op-token is dropped because exclude "Secret/op-token" matches it, but Deployment ops/op takes its environment from it`, ""},
		{"webhook service", []string{"Service/op-webhook"},
			`Service ops/op-webhook is dropped because exclude "Service/op-webhook" matches it, but ValidatingWebhookConfiguration vop sends its admission requests to it`, ""},
		{"APIService service", []string{"Service/op-api"},
			`Service ops/op-api is dropped because exclude "Service/op-api" matches it, but APIService v1.op.example.com serves its API through it`, ""},
		{"conversion webhook service", []string{"Service/op-conversion"},
			`Service ops/op-conversion is dropped because exclude "Service/op-conversion" matches it, but CustomResourceDefinition widgets.op.example.com sends its conversion requests to it`, ""},
		{"role of a kept binding warns", []string{"ClusterRole/op-role"}, "",
			`ClusterRole op-role is dropped because exclude "ClusterRole/op-role" matches it, but ClusterRoleBinding op-role grants it: remove "ClusterRole/op-role" from exclude (to change the object, patch it instead)`},
		{"optional secret", []string{"Secret/op-optional"}, "", ""},
		{"unreferenced service", []string{"Service/op-metrics"}, "", ""},
		{"the needing object goes too", []string{"Deployment", "ServiceAccount"}, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var w warnings
			drops := &Drops{}
			out, err := Apply(parse(t, requiresInput), excludeRecording(c.exclude, w.add, drops), RequiredObjects(drops, w.add))
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case c.err != "" && err == nil:
				t.Fatalf("no error, want %q", c.err)
			case c.err != "" && !strings.Contains(err.Error(), c.err):
				t.Fatalf("error:\n%v\nwant it to contain:\n%s", err, c.err)
			case c.err == "" && len(out) == 0:
				t.Fatal("no objects")
			}
			if c.warn != "" && !strings.Contains(strings.Join(w, "\n"), c.warn) {
				t.Errorf("warnings %q, want %q", w, c.warn)
			}
			if c.warn == "" && len(w) > 0 {
				t.Errorf("unexpected warnings %q", w)
			}
		})
	}
}

// TestRequiredObjectsReportsEveryProblem: one line per problem, sorted.
func TestRequiredObjectsReportsEveryProblem(t *testing.T) {
	drops := &Drops{}
	_, err := Apply(parse(t, requiresInput), excludeRecording([]string{"Service/op-webhook", "ServiceAccount"}, nil, drops), RequiredObjects(drops, nil))
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "Service ops/op-webhook") || !strings.HasPrefix(lines[1], "ServiceAccount ops/op-sa") {
		t.Errorf("want two sorted lines, got:\n%v", err)
	}
}

// TestRequiredObjectsAfterAPIVersions: the cluster does not serve
// cert-manager.io: the Certificate goes, and the Deployment mounting its
// Secret fails the render with cert-manager's way out.
func TestRequiredObjectsAfterAPIVersions(t *testing.T) {
	served := []string{"v1", "apps/v1", "rbac.authorization.k8s.io/v1", "apiextensions.k8s.io/v1",
		"admissionregistration.k8s.io/v1", "apiregistration.k8s.io/v1"}
	var w warnings
	drops := &Drops{}
	_, err := Apply(parse(t, requiresInput), apiVersionsRecording(served, w.add, drops), RequiredObjects(drops, w.add))
	want := `Certificate ops/op-cert is dropped because the cluster does not serve cert-manager.io/v1, but Deployment ops/op mounts its Secret op-serving-cert, and ValidatingWebhookConfiguration vop takes its CA bundle from it (cert-manager.io/inject-ca-from): install cert-manager, or set certificateProvider: none and supply the Secret`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error:\n%v\nwant it to contain:\n%s", err, want)
	}
	// Without the Deployment and the webhook, nothing needs the Certificate:
	// dropping it is a warning.
	w, drops = nil, &Drops{}
	_, err = Apply(parse(t, requiresInput), Exclude([]string{"Deployment", "ValidatingWebhookConfiguration"}, nil),
		apiVersionsRecording(served, w.add, drops), RequiredObjects(drops, w.add))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(w, "\n"), "dropped cert-manager.io/Certificate ops/op-cert: the cluster does not serve cert-manager.io/v1") {
		t.Errorf("warnings %q", w)
	}
}

// TestRequiredObjectsAfterPatchDelete: a `$patch: delete` counts as a drop.
func TestRequiredObjectsAfterPatchDelete(t *testing.T) {
	drops := &Drops{}
	patch := kustomizetypes.Patch{Patch: "apiVersion: v1\nkind: Service\nmetadata:\n  name: op-api\n$patch: delete\n"}
	_, err := Apply(parse(t, requiresInput), patchesRecording([]kustomizetypes.Patch{patch}, nil, drops, nil), RequiredObjects(drops, nil))
	want := `Service ops/op-api is dropped because patches[0] deletes it, but APIService v1.op.example.com serves its API through it: change patches[0] so that it keeps the object, or exclude APIService/v1.op.example.com too`
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n%v\nwant:\n%s", err, want)
	}
}

// TestRequiredObjectsNamesAFew: a message names the workloads first and at
// most maxUses objects, counting the others.
func TestRequiredObjectsNamesAFew(t *testing.T) {
	in := requiresInput
	for _, name := range []string{"a", "b", "c", "d"} {
		in += "---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata:\n  name: m" + name +
			"\n  annotations:\n    cert-manager.io/inject-ca-from: ops/op-cert\n"
	}
	drops := &Drops{}
	_, err := Apply(parse(t, in), excludeRecording([]string{"Certificate"}, nil, drops), RequiredObjects(drops, nil))
	want := `Certificate ops/op-cert is dropped because exclude "Certificate" matches it, but Deployment ops/op mounts its Secret op-serving-cert, ` +
		`and MutatingWebhookConfiguration ma takes its CA bundle from it (cert-manager.io/inject-ca-from), ` +
		`and MutatingWebhookConfiguration mb takes its CA bundle from it (cert-manager.io/inject-ca-from) (and 3 more objects need it): ` +
		`remove "Certificate" from exclude, or set certificateProvider: none and supply the Secret`
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n%v\nwant:\n%s", err, want)
	}
}

// backendsInput: a webhook configuration and an APIService calling Services
// whose only pods are the operator Deployment's, and a custom resource of a
// CRD of the render.
const backendsInput = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: op
  namespace: ops
spec:
  selector:
    matchLabels: {app: op}
  template:
    metadata:
      labels: {app: op, tier: control}
    spec:
      serviceAccountName: op-sa
      containers:
      - name: manager
        image: x.io/op:1
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: op-sa
  namespace: ops
---
apiVersion: v1
kind: Service
metadata:
  name: op-webhook
  namespace: ops
spec:
  selector: {app: op}
---
apiVersion: v1
kind: Service
metadata:
  name: op-metrics
  namespace: ops
spec:
  selector: {app: op}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: vop.example.com
webhooks:
- name: vop.example.com
  clientConfig:
    service: {name: op-webhook, namespace: ops}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.op.example.com
spec:
  group: op.example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
---
apiVersion: op.example.com/v1
kind: Widget
metadata:
  name: sample
  namespace: ops
`

// TestRequiredObjectsBehindAService: dropping the only workload whose pods a
// kept webhook's Service selects fails, naming the webhook and both ways
// out; a Service nobody calls may lose its pods, and another workload with
// the labels keeps the webhook served.
func TestRequiredObjectsBehindAService(t *testing.T) {
	drops := &Drops{}
	_, err := Apply(parse(t, backendsInput), excludeRecording([]string{"Deployment"}, nil, drops), RequiredObjects(drops, nil))
	want := `Deployment ops/op is dropped because exclude "Deployment" matches it, but ValidatingWebhookConfiguration vop.example.com sends its admission requests to Service ops/op-webhook, whose pods only it runs: remove "Deployment" from exclude (to change the object, patch it instead), or exclude ValidatingWebhookConfiguration/vop.example.com too`
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n%v\nwant:\n%s", err, want)
	}
	// The way out the message gives works.
	drops = &Drops{}
	if _, err := Apply(parse(t, backendsInput), excludeRecording([]string{"Deployment", "ValidatingWebhookConfiguration/vop.example.com"}, nil, drops), RequiredObjects(drops, nil)); err != nil {
		t.Fatal(err)
	}
	// Another workload runs pods with the labels: still served.
	other := "---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: op2\n  namespace: ops\nspec:\n  template:\n    metadata:\n      labels: {app: op}\n    spec:\n      serviceAccountName: op-sa\n      containers: [{name: m, image: x.io/op:1}]\n"
	drops = &Drops{}
	if _, err := Apply(parse(t, backendsInput+other), excludeRecording([]string{"Deployment"}, nil, drops), RequiredObjects(drops, nil)); err != nil {
		t.Fatal(err)
	}
	// The cluster does not serve apps/v1: the same check, with that cause.
	drops = &Drops{}
	served := []string{"v1", "apiextensions.k8s.io/v1", "admissionregistration.k8s.io/v1"}
	_, err = Apply(parse(t, backendsInput), apiVersionsRecording(served, nil, drops), RequiredObjects(drops, nil))
	if err == nil || !strings.Contains(err.Error(), "Deployment ops/op is dropped because the cluster does not serve apps/v1, but ValidatingWebhookConfiguration vop.example.com sends its admission requests to Service ops/op-webhook, whose pods only it runs") {
		t.Fatalf("error: %v", err)
	}
}

// TestRequiredObjectsCRWithoutCRD: a custom resource whose CRD the cluster
// drops fails, naming both; when the user excludes the CRD (installed
// separately), it is a warning that says so.
func TestRequiredObjectsCRWithoutCRD(t *testing.T) {
	served := []string{"v1", "apps/v1", "admissionregistration.k8s.io/v1"}
	var w warnings
	drops := &Drops{}
	_, err := Apply(parse(t, backendsInput), apiVersionsRecording(served, w.add, drops), RequiredObjects(drops, w.add))
	want := `CustomResourceDefinition widgets.op.example.com is dropped because the cluster does not serve apiextensions.k8s.io/v1, but Widget ops/sample is a custom resource of a kind it defines: `
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error:\n%v\nwant one line starting:\n%s", err, want)
	}
	w, drops = nil, &Drops{}
	if _, err := Apply(parse(t, backendsInput), excludeRecording([]string{"CustomResourceDefinition"}, nil, drops), RequiredObjects(drops, w.add)); err != nil {
		t.Fatal(err)
	}
	wantWarn := `CustomResourceDefinition widgets.op.example.com is dropped because exclude "CustomResourceDefinition" matches it, but Widget ops/sample is a custom resource of a kind it defines: remove "CustomResourceDefinition" from exclude (to change the object, patch it instead), or install the CRD on the cluster some other way before the sync`
	if strings.Join(w, "\n") != wantWarn {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(w, "\n"), wantWarn)
	}
	// The cluster serves the CR's API: its CRD is there, nothing to say.
	w, drops = nil, &Drops{served: []string{"op.example.com/v1"}}
	if _, err := Apply(parse(t, backendsInput), excludeRecording([]string{"CustomResourceDefinition"}, nil, drops), RequiredObjects(drops, w.add)); err != nil || len(w) > 0 {
		t.Fatalf("err %v, warnings %q", err, w)
	}
	// Both go: nothing to say.
	w, drops = nil, &Drops{}
	if _, err := Apply(parse(t, backendsInput), excludeRecording([]string{"CustomResourceDefinition", "Widget"}, nil, drops), RequiredObjects(drops, w.add)); err != nil || len(w) > 0 {
		t.Fatalf("err %v, warnings %q", err, w)
	}
}
