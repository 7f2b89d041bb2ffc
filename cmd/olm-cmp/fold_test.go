package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRBACOnlyFindingsFolded: the api findings of groups only RBAC rules
// name are one warning line in a render, naming the groups; -v prints each
// on its own; the other findings are untouched either way.
func TestRBACOnlyFindingsFolded(t *testing.T) {
	dir := t.TempDir()
	spec := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: demo}\nspec:\n  bundle: " + mustAbs(t, "../../examples/demo/bundle") + "\n  namespace: demo\n"
	role := "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: extra}\nrules:\n- apiGroups: [a.example.com, b.example.com, c.example.com]\n  resources: ['*']\n  verbs: [get]\n"
	os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), []byte(spec), 0o644)
	os.WriteFile(filepath.Join(dir, "role.yaml"), []byte(role), 0o644)

	_, stderr, err := run(t, "render", dir)
	if err != nil {
		t.Fatal(err)
	}
	folded := "warning: 3 API groups that only the operator's RBAC rules name (no object of the render, no required CRD; usual for an operator, which uses them where they are served): a.example.com, b.example.com, c.example.com; -v prints each with its fix, spec.accept entries (api:GROUP) answer them\n"
	if !strings.Contains(stderr, folded) || strings.Contains(stderr, "requirement api:a.example.com") || !strings.Contains(stderr, "required: certificates:cert-manager.io/v1") {
		t.Errorf("stderr:\n%s\nwant the line\n%s", stderr, folded)
	}
	_, stderr, err = run(t, "render", dir, "-v")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr, "3 API groups") || strings.Count(stderr, "warning: requirement api:") != 3 {
		t.Errorf("-v stderr:\n%s", stderr)
	}
}
