package e2e

import (
	"testing"
)

// These need no cluster: the pod runner's kubelet rules and the denial parser.

func TestExpandVars(t *testing.T) {
	vars := map[string]string{"RUNTIME_NAMESPACE": "flux", "EMPTY": ""}
	for in, want := range map[string]string{
		"--storage-adv-addr=source-controller.$(RUNTIME_NAMESPACE).svc": "--storage-adv-addr=source-controller.flux.svc",
		"$(UNDEFINED) stays":    "$(UNDEFINED) stays",
		"$$(RUNTIME_NAMESPACE)": "$(RUNTIME_NAMESPACE)", // $$ escapes
		"a$(EMPTY)b":            "ab",
		"$RUNTIME_NAMESPACE":    "$RUNTIME_NAMESPACE", // only $(…) expands
	} {
		if got := expandVars(in, vars); got != want {
			t.Errorf("expandVars(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestImageName(t *testing.T) {
	for in, want := range map[string]string{
		"ghcr.io/fluxcd/source-controller:v1.3.0": "source-controller",
		"upbound/crossplane:v1.5.1-up.1":          "crossplane",
		"localhost:5000/op@sha256:0123":           "op",
		"quay.io/rhobs/observability-operator":    "observability-operator",
		"registry:5000/a/b/c:tag@sha256:ab":       "c",
	} {
		if got := imageName(in); got != want {
			t.Errorf("imageName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestQuantity(t *testing.T) {
	for in, want := range map[string]float64{"1": 1, "500m": 0.5, "1Gi": 1 << 30, "64": 64, "256Mi": 256 << 20, "2k": 2000} {
		if got := quantity(t, in); got != want {
			t.Errorf("quantity(%q) = %v, want %v", in, got, want)
		}
	}
}

// resourceFieldRef: limits, else node allocatable; divisor "0" (the API server's default) is 1.
func TestResourceField(t *testing.T) {
	p := &runningPod{t: t, pod: map[string]any{"spec": map[string]any{}},
		node: map[string]any{"status": map[string]any{"allocatable": map[string]any{"cpu": "64", "memory": "256Gi"}}}}
	c := map[string]any{"name": "manager", "resources": map[string]any{"limits": map[string]any{"cpu": "1500m", "memory": "1Gi"}}}
	for _, tc := range []struct {
		c    map[string]any
		ref  map[string]any
		want string
	}{
		{c, map[string]any{"resource": "limits.cpu", "divisor": "0"}, "2"},
		{c, map[string]any{"resource": "limits.memory", "divisor": "0"}, "1073741824"},
		{c, map[string]any{"resource": "limits.memory", "divisor": "1Mi"}, "1024"},
		{map[string]any{"name": "x"}, map[string]any{"resource": "limits.cpu"}, "64"},
	} {
		if got := p.resourceField(tc.c, tc.ref); got != tc.want {
			t.Errorf("resourceField(%v) = %s, want %s", tc.ref, got, tc.want)
		}
	}
}

// The API server's denial, as crossplane logged it (plain) and as a JSON logger quotes it.
func TestDenialDetail(t *testing.T) {
	for _, line := range []string{
		`crossplane: error: cannot initialize core: cannot apply crd: cannot get object: customresourcedefinitions.apiextensions.k8s.io "x" is forbidden: User "system:serviceaccount:op-crossplane:crossplane" cannot get resource "customresourcedefinitions" in API group "apiextensions.k8s.io" at the cluster scope`,
		`{"level":"error","error":"secrets is forbidden: User \"system:serviceaccount:op-crossplane:crossplane\" cannot get resource \"customresourcedefinitions\" in API group \"apiextensions.k8s.io\""}`,
	} {
		m := denialDetail.FindStringSubmatch(line)
		if m == nil || m[1] != "op-crossplane" || m[2] != "crossplane" || m[3] != "get" || m[4] != "customresourcedefinitions" || m[5] != "apiextensions.k8s.io" {
			t.Errorf("denial not parsed (%q) from %s", m, line)
		}
		if !denial.MatchString(line) {
			t.Errorf("not seen as a denial: %s", line)
		}
	}
}
