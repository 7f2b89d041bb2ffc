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
