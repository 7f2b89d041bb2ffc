package spec

import (
	"strings"
	"testing"
)

// TestHugeValuesAreNotEchoed: a value the user wrote comes back in an error
// at most 120 characters long, with its size, escaped; Argo CD stores the
// message in the Application's status.
func TestHugeValuesAreNotEchoed(t *testing.T) {
	huge := strings.Repeat("x", 200000)
	alts := make([]string, 5000)
	for i := range alts {
		alts[i] = "=1.0." + strings.Repeat("9", 10) + "x"
	}
	cases := []struct {
		name string
		s    Spec
		want string
	}{
		{"namespace", Spec{Bundle: "quay.io/x/y:v1", Namespace: huge}, `spec.namespace "` + strings.Repeat("x", 120) + `"… (200000 bytes): `},
		{"clusterAPIs", Spec{Bundle: "quay.io/x/y:v1", Namespace: "n", ClusterAPIs: []string{strings.Repeat("y", 100000)}}, `spec.clusterAPIs[0] "` + strings.Repeat("y", 120) + `"… (100000 bytes): `},
		{"version range", Spec{Catalog: "quay.io/x/c:v1", Package: "p", Namespace: "n", Version: strings.Join(alts, " || ")}, `spec.version "=1.0.9999999999x || `},
		{"control characters", Spec{Bundle: "quay.io/x/y:v1", Namespace: "a\x1b[2J\nb"}, `spec.namespace "a\x1b[2J\nb": `},
	}
	for _, c := range cases {
		err := c.s.Validate()
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		msg := err.Error()
		if len(msg) > 1500 || !strings.Contains(msg, c.want) || strings.ContainsAny(msg, "\x1b") {
			t.Errorf("%s: %d bytes: %.400q, want %q", c.name, len(msg), msg, c.want)
		}
	}
}

// TestHugeOverrideIsNotEchoed: a 200 KB plugin env value for a boolean
// field is not repeated whole.
func TestHugeOverrideIsNotEchoed(t *testing.T) {
	v := strings.Repeat("z", 200000)
	_, err := ApplyOverrides(Spec{Bundle: "quay.io/x/y:v1", Namespace: "n"}, []Override{{Name: "strict", Source: "plugin env ARGOCD_ENV_strict", String: &v}})
	if err == nil || len(err.Error()) > 600 || !strings.Contains(err.Error(), `"… (200000 bytes)`) {
		t.Errorf("%d bytes: %.300v", len(err.Error()), err)
	}
}
