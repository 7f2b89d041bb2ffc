package transform

import (
	"strings"
	"testing"
)

// The universal-crossplane 1.5.1-up.1 bundle's shape: a ClusterRoleBinding of
// its own ServiceAccount, written with the suggested namespace.
const crossplaneBindings = `apiVersion: v1
kind: ServiceAccount
metadata: {name: crossplane, namespace: xp}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: rbac-manager, namespace: xp}
spec: {template: {spec: {serviceAccountName: rbac-manager}}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: crossplane}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: crossplane}
subjects:
- {kind: ServiceAccount, name: crossplane, namespace: upbound-system}
- {kind: ServiceAccount, name: rbac-manager, namespace: upbound-system}
- {kind: ServiceAccount, name: somebody-else, namespace: upbound-system}
- {kind: ServiceAccount, name: crossplane, namespace: kube-system}
- {kind: Group, name: upbound:edit, apiGroup: rbac.authorization.k8s.io}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: bootstrapper, namespace: xp}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: bootstrapper}
subjects:
- {kind: ServiceAccount, name: crossplane, namespace: upbound-system}
`

func TestBundleSubjectsMovesOwnServiceAccounts(t *testing.T) {
	var w warnings
	got := run(t, BundleSubjects("xp", "upbound-system", w.add), crossplaneBindings)
	for _, want := range []string{
		"- {kind: ServiceAccount, name: crossplane, namespace: xp}",
		"- {kind: ServiceAccount, name: rbac-manager, namespace: xp}",              // a Deployment's SA
		"- {kind: ServiceAccount, name: somebody-else, namespace: upbound-system}", // not the render's
		"- {kind: ServiceAccount, name: crossplane, namespace: kube-system}",       // not the suggested namespace
		"- {kind: Group, name: 'upbound:edit', apiGroup: rbac.authorization.k8s.io}",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "{kind: ServiceAccount, name: crossplane, namespace: xp}"); n != 2 {
		t.Errorf("the ServiceAccount crossplane is bound in xp %d times, want 2 (both bindings):\n%s", n, got)
	}
	if len(w) != 3 {
		t.Fatalf("want one warning per rewritten subject, got %d: %q", len(w), w)
	}
	if want := "rbac.authorization.k8s.io/ClusterRoleBinding crossplane: subject ServiceAccount upbound-system/crossplane is the bundle's own ServiceAccount, which this render installs in xp: bound there instead"; !strings.HasPrefix(w[0], want) {
		t.Errorf("warning:\n%s\nwant prefix:\n%s", w[0], want)
	}
}

func TestBundleSubjectsNoOp(t *testing.T) {
	for _, c := range []struct{ ns, suggested string }{
		{"upbound-system", "upbound-system"}, // installed where the bundle expects
		{"xp", ""},                           // no suggested namespace
	} {
		var w warnings
		if got := run(t, BundleSubjects(c.ns, c.suggested, w.add), crossplaneBindings); got != render(t, parse(t, crossplaneBindings)) || len(w) != 0 {
			t.Errorf("%+v: changed the objects or warned (%q):\n%s", c, w, got)
		}
	}
}
