package convert

import (
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// The literals below come from OLM v1's regression golden files
// (olmv1-regression/expected-manifests/webhook-operator.v0.0.5/all-webhook-types
// and argocd-operator.v0.6.0/all-namespaces), not from our output.

func TestHashedNameMatchesOLMGolden(t *testing.T) {
	// webhook-operator.v0.0.5's permissions[0], lifted in AllNamespaces mode
	// (namespaces rule appended), as its CSV and golden ClusterRole show it.
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	p := v1alpha1.StrategyDeploymentPermissions{
		ServiceAccountName: "webhook-operator-controller-manager",
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: all},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: all},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
			{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}},
		},
	}
	got, err := hashedName("webhook-operator.v0.0.5-webhook-operator-controller-manager", p)
	if err != nil {
		t.Fatal(err)
	}
	if want := "webhook-operator.v-1zfvwth88plw3th2midra1jqduroo1q7omiagjujsiu3"; got != want {
		t.Errorf("got %s, want %s (OLM v1 golden)", got, want)
	}
}

func TestObjectNameForBaseAndSuffix(t *testing.T) {
	for _, tc := range []struct{ base, suffix, want string }{
		// OLM v1 golden: the base is cut to fit 63 characters, leaving a trailing ".".
		{"argocd-operator.v0.6.0-argocd-operator-controller-manager", "3gkm3u8zfarktdile5wekso69zs9bgzb988mhjm0y6p", "argocd-operator.v0.-3gkm3u8zfarktdile5wekso69zs9bgzb988mhjm0y6p"},
		// OLM v1 golden: Service and Certificate names of webhook-operator.
		{"webhook-operator-controller-manager", "service", "webhook-operator-controller-manager-service"},
		{"webhook-operator-controller-manager-service-cert", "selfsigned-issuer", "webhook-operator-controller-manager-service-c-selfsigned-issuer"},
		{"short", "x", "short-x"},
	} {
		if got := ObjectNameForBaseAndSuffix(tc.base, tc.suffix); got != tc.want {
			t.Errorf("(%q, %q) = %q, want %q", tc.base, tc.suffix, got, tc.want)
		}
	}
	// OLM would panic on a suffix of 63+ characters; we must not.
	long := "0123456789012345678901234567890123456789012345678901234567890123456789"
	if got := ObjectNameForBaseAndSuffix("base", long); got != "-"+long {
		t.Errorf("long suffix: got %q", got)
	}
}

func TestDeepHashObjectIsBase36SHA224(t *testing.T) {
	// sha224("null\n") in base 36: the encoder's trailing newline is hashed too.
	h, err := DeepHashObject(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) < 40 || len(h) > 44 {
		t.Errorf("hash %q: want ~43 base-36 digits", h)
	}
	if _, err := DeepHashObject(func() {}); err == nil {
		t.Error("want an error (not a panic) for an unencodable value")
	}
}
