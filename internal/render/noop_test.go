package render

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kustomizetypes "sigs.k8s.io/kustomize/api/types"
)

const demoDeployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: greeter-operator-controller\nspec:\n  template:\n    spec:\n"

// noopRequest is the demo with one entry of each field that selects
// objects, each matching nothing.
func noopRequest(t *testing.T) Request {
	req := demoRequest(t)
	req.Spec.Exclude = []string{"Deploymnet"}
	req.Spec.Images = map[string]string{"quay.io/olmcmp/": "mirror.example.com/olm-cmp/"}
	req.Spec.Accept = []string{"api:nothing.example.com"}
	req.Spec.Patches = []kustomizetypes.Patch{{Patch: demoDeployment + "      containers:\n      - name: sidecar\n        $patch: delete\n"}}
	req.Spec.ClusterAPIs = []string{"cert-manager.io/v1"} // the demo's one finding
	req.Spec.Config.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "greeter"}}
	return req
}

var noopMessages = []string{
	`config.selector selects nothing: OLM applies config to every Deployment of the bundle; remove it, and change a single Deployment with a patch instead`,
	`exclude "Deploymnet" matched no object; did you mean Deployment?`,
	`images "quay.io/olmcmp/" matched no image; images rendered: quay.io/olm-cmp/greeter-operator:v0.2.0`,
	`patches[0]: apps/Deployment greeter-system/greeter-operator-controller: $patch: delete of spec.template.spec.containers[name=sidecar] deletes nothing: no container has name=sidecar; existing: manager`,
	`accept "api:nothing.example.com" matched no finding; the report has no findings`,
}

// TestSpecEntriesMatchingNothing: every spec entry that selects nothing is
// a warning naming it; under strict, one error with a line per entry.
func TestSpecEntriesMatchingNothing(t *testing.T) {
	res := mustRender(t, noopRequest(t))
	if got := strings.Join(res.Warnings, "\n"); got != strings.Join(noopMessages, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", got, strings.Join(noopMessages, "\n"))
	}
	req := noopRequest(t)
	req.Spec.Strict = true
	_, err := (&Renderer{}).Render(context.Background(), req)
	want := "strict: " + strings.Join(noopMessages, "\nstrict: ")
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n%v\nwant:\n%s", err, want)
	}
	// Fixed, strict renders.
	req.Spec.Exclude, req.Spec.Accept, req.Spec.Patches = []string{"ConfigMap"}, nil, nil
	req.Spec.Config.Selector = nil
	req.Spec.Images = map[string]string{"quay.io/olm-cmp/": "mirror.example.com/olm-cmp/"}
	if _, err := (&Renderer{}).Render(context.Background(), req); err != nil {
		t.Fatal(err)
	}
}

// TestRenderRefuses: the traps a render used to pass with exit 0.
func TestRenderRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Request)
		want string
	}{
		{"a misspelt container in a patch", func(r *Request) {
			r.Spec.Patches = []kustomizetypes.Patch{{Patch: demoDeployment + "      containers:\n      - name: manger\n        image: quay.io/olm-cmp/greeter-operator:v0.2.1\n"}}
		}, "patches[0]: apps/Deployment greeter-system/greeter-operator-controller: spec.template.spec.containers[name=manger] matches no container; existing: manager — did you mean manager? Fix the name (a strategic-merge patch would add a new container holding only image; to add a container named manger next to manager, use a JSON 6902 patch with op: add)"},
		{"the only Deployment excluded, its webhook kept", func(r *Request) {
			r.Spec.Exclude = []string{"Deployment"}
		}, `Deployment greeter-system/greeter-operator-controller is dropped because exclude "Deployment" matches it, but ValidatingWebhookConfiguration vgreeter.greeter.example.com sends its admission requests to Service greeter-system/greeter-operator-controller-service, whose pods only it runs: remove "Deployment" from exclude (to change the object, patch it instead), or exclude ValidatingWebhookConfiguration/vgreeter.greeter.example.com too`},
		{"a cluster list without apiextensions.k8s.io/v1 (refused before its CRD could be dropped under its CRs)", func(r *Request) {
			r.APIVersions = []string{"v1", "apps/v1", "rbac.authorization.k8s.io/v1", "admissionregistration.k8s.io/v1", "cert-manager.io/v1"}
		}, "KUBE_API_VERSIONS (the API versions the cluster serves): the list looks partial: it lacks apiextensions.k8s.io/v1, which every cluster serves; give the cluster's whole list, as `kubectl api-versions` prints it (comma-separated: kubectl api-versions | paste -sd, -)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := demoRequest(t)
			tc.edit(&req)
			res, err := (&Renderer{}).Render(context.Background(), req)
			if err == nil {
				t.Fatalf("rendered %d objects", len(res.Manifests))
			}
			if err.Error() != tc.want {
				t.Errorf("error:\n%v\nwant:\n%s", err, tc.want)
			}
		})
	}
}
