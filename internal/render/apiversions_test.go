package render

import (
	"context"
	"strings"
	"testing"
)

func TestCheckAPIVersions(t *testing.T) {
	full := []string{"v1", "apps/v1", "rbac.authorization.k8s.io/v1", "apiextensions.k8s.io/v1", "admissionregistration.k8s.io/v1"}
	for _, tc := range []struct {
		name string
		list []string
		err  string
	}{
		{"unknown cluster", nil, ""},
		{"the whole list", append(full, "cert-manager.io/v1"), ""},
		{"Argo CD's group/version/kind entries", []string{"v1/Pod", "apps/v1/Deployment", "rbac.authorization.k8s.io/v1/Role", "apiextensions.k8s.io/v1/CustomResourceDefinition", "admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration"}, ""},
		{"empty", []string{}, "src: the list looks partial: it lacks v1, apps/v1, rbac.authorization.k8s.io/v1, apiextensions.k8s.io/v1, admissionregistration.k8s.io/v1, which every cluster serves"},
		{"as three docs showed it", []string{"v1", "apps/v1"}, "src: the list looks partial: it lacks rbac.authorization.k8s.io/v1, apiextensions.k8s.io/v1, admissionregistration.k8s.io/v1, which every cluster serves; give the cluster's whole list, as `kubectl api-versions` prints it"},
		{"a prefix is not a group", append(full[1:], "v1beta1"), "it lacks v1,"},
	} {
		err := CheckAPIVersions("src", tc.list)
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
	// Every transport's list reaches Resolve.
	req := demoRequest(t)
	req.APIVersions = []string{"v1", "apps/v1"}
	if _, err := (&Renderer{}).Render(context.Background(), req); err == nil || !strings.Contains(err.Error(), "KUBE_API_VERSIONS (the API versions the cluster serves): the list looks partial") {
		t.Errorf("render with a partial list: %v", err)
	}
}

// An --api-versions entry reads as Argo CD lists them: a version of the
// core API, a group/version, or either with /Kind; a kind without its
// version, a mistyped group or an empty entry does not.
func TestIsAPIListEntry(t *testing.T) {
	for e, want := range map[string]bool{
		"v1": true, "apps/v1": true, "cert-manager.io/v1": true, "v1/Pod": true, "apps/v1/Deployment": true,
		"apps/Deployment": false, "": false, "Apps/v1": false, "apps/v1/deployment": false,
		"apps/v1/Deploy-ment": false, "a/b/c/d": false, "apps/V1": false,
	} {
		if got := IsAPIListEntry(e); got != want {
			t.Errorf("IsAPIListEntry(%q) = %v, want %v", e, got, want)
		}
	}
}
