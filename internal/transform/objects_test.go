package transform

import (
	"strings"
	"testing"
)

func TestNamespace(t *testing.T) {
	in := `apiVersion: v1
kind: ServiceAccount
metadata:
  name: op
  namespace: ops
`
	diff(t, run(t, Namespace("ops"), in), `apiVersion: v1
kind: Namespace
metadata:
  name: ops
---
`+in)
	// A namespace named like a number stays a string.
	diff(t, run(t, Namespace("123"), in), `apiVersion: v1
kind: Namespace
metadata:
  name: "123"
---
`+in)
	// Present already (with labels of its own): unchanged.
	have := `apiVersion: v1
kind: Namespace
metadata:
  name: ops
  labels:
    pod-security.kubernetes.io/enforce: restricted
---
` + in
	diff(t, run(t, Namespace("ops"), have), have)
	if msg := runErr(t, Namespace(""), in); msg != "namespace: no name" {
		t.Errorf("error %q", msg)
	}
}

const serviceAccountsInput = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: op
  namespace: ops
imagePullSecrets:
- name: existing # keep me
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: bare
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: flow
imagePullSecrets: []
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: null-list
imagePullSecrets:
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: not-an-sa
data: {}
`

func TestImagePullSecrets(t *testing.T) {
	want := `apiVersion: v1
kind: ServiceAccount
metadata:
  name: op
  namespace: ops
imagePullSecrets:
- name: existing # keep me
- name: a
- name: b
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: bare
imagePullSecrets:
- name: a
- name: b
- name: existing
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: flow
imagePullSecrets:
- name: a
- name: b
- name: existing
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: null-list
imagePullSecrets:
- name: a
- name: b
- name: existing
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: not-an-sa
data: {}
`
	// Unsorted, duplicated input gives sorted, unique additions.
	f := ImagePullSecrets([]string{"existing", "b", "a", "b"})
	got := run(t, f, serviceAccountsInput)
	diff(t, got, want)
	// Idempotent.
	diff(t, run(t, f, got), want)
	// None: untouched.
	diff(t, run(t, ImagePullSecrets(nil), serviceAccountsInput), serviceAccountsInput)

	bad := "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: x\nimagePullSecrets: oops\n"
	if msg := runErr(t, f, bad); msg != "imagePullSecrets: ServiceAccount x: imagePullSecrets is not a list" {
		t.Errorf("error %q", msg)
	}
}

func TestServiceAccounts(t *testing.T) {
	got := run(t, ServiceAccounts("ops", []string{"operand", "op", "bare", "operand", "other"}, []string{"pull"}), serviceAccountsInput)
	// op (same namespace) and bare (no namespace) exist; operand and other are added.
	want := serviceAccountsInput + `---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: operand
  namespace: ops
imagePullSecrets:
- name: pull
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: other
  namespace: ops
`
	want = strings.Replace(want, "  name: other\n  namespace: ops\n", "  name: other\n  namespace: ops\nimagePullSecrets:\n- name: pull\n", 1)
	diff(t, got, want)
	// No pull secrets: no imagePullSecrets field.
	diff(t, run(t, ServiceAccounts("ops", []string{"x"}, nil), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"),
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: x\n  namespace: ops\n")
}

func TestAuthReaderBinding(t *testing.T) {
	in := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: b
  namespace: ops
spec:
  template:
    spec:
      serviceAccountName: zeta
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: a
  namespace: ops
spec:
  template:
    spec:
      serviceAccountName: alpha
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: c
  namespace: ops
spec:
  template:
    spec:
      serviceAccountName: alpha
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: legacy
spec:
  template:
    spec:
      serviceAccount: old
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: plain
  namespace: ops
spec:
  template:
    spec: {}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: elsewhere
  namespace: other
spec:
  template:
    spec:
      serviceAccountName: not-me
`
	want := in + `---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: my-op-auth-reader
  namespace: kube-system
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: extension-apiserver-authentication-reader
subjects:
- kind: ServiceAccount
  name: alpha
  namespace: ops
- kind: ServiceAccount
  name: default
  namespace: ops
- kind: ServiceAccount
  name: old
  namespace: ops
- kind: ServiceAccount
  name: zeta
  namespace: ops
`
	got := run(t, AuthReaderBinding("ops", "My_Op"), in)
	diff(t, got, want)
	// Present already: nothing added.
	diff(t, run(t, AuthReaderBinding("ops", "My_Op"), got), want)
	// No Deployment: nothing added.
	sa := "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: x\n"
	diff(t, run(t, AuthReaderBinding("ops", "op"), sa), sa)
	if msg := runErr(t, AuthReaderBinding("", "op"), sa); msg != "authReaderBinding: namespace and name are required" {
		t.Errorf("error %q", msg)
	}
}

func TestAuthReaderBindingName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"etcd", "etcd-auth-reader"},
		{"My.Operator_v2", "my-operator-v2-auth-reader"},
		{"--x--", "x-auth-reader"},
		{"!!!", "operator-auth-reader"},
		{strings.Repeat("a", 300), strings.Repeat("a", 253-len("-auth-reader")) + "-auth-reader"},
	} {
		if got := authReaderBindingName(tc.in); got != tc.want {
			t.Errorf("authReaderBindingName(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := authReaderBindingName(tc.in); len(got) > 253 {
			t.Errorf("too long: %d", len(got))
		}
	}
}

// TestNamespaceMetadata: namespaceLabels and namespaceAnnotations go on the
// install Namespace, whoever renders it; a value they replace is a warning;
// without the Namespace (createNamespace: false) they report that they
// apply to nothing.
func TestNamespaceMetadata(t *testing.T) {
	sa := "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: op\n  namespace: ops\n"
	ns := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ops\n  labels:\n    pod-security.kubernetes.io/enforce: restricted\n    team: a\n---\n"
	labels := map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}
	annotations := map[string]string{"example.com/owner": "team-a"}
	var warnings, unmatched []string
	f := NamespaceMetadata("ops", labels, annotations, func(s string) { warnings = append(warnings, s) }, func(s string) { unmatched = append(unmatched, s) })
	diff(t, run(t, f, ns+sa), `apiVersion: v1
kind: Namespace
metadata:
  name: ops
  labels:
    pod-security.kubernetes.io/enforce: privileged
    team: a
  annotations:
    example.com/owner: 'team-a'
---
`+sa)
	want := `spec.namespaceLabels: pod-security.kubernetes.io/enforce="privileged" replaces pod-security.kubernetes.io/enforce="restricted" on the Namespace ops the render holds (from the bundle or an extra manifest)`
	if len(warnings) != 1 || warnings[0] != want || len(unmatched) != 0 {
		t.Errorf("warnings %q, unmatched %q; want the warning %q", warnings, unmatched, want)
	}
	warnings = nil
	diff(t, run(t, f, sa), sa)
	want = "spec.namespaceLabels and spec.namespaceAnnotations apply to no object: the render has no Namespace ops (createNamespace: false); set them where the namespace is created (kubectl label namespace ops KEY=VALUE), or let the render create it (remove createNamespace: false)"
	if len(unmatched) != 1 || unmatched[0] != want || len(warnings) != 0 {
		t.Errorf("unmatched %q, warnings %q; want %q", unmatched, warnings, want)
	}
}
