package spec

import (
	"fmt"
	"strings"
	"testing"
)

// TestValidateNamespaceMetadata: namespaceLabels and namespaceAnnotations
// are checked as the API server checks a Namespace (and its PodSecurity
// admission plugin the pod-security.kubernetes.io labels), each problem
// naming its key and the fix.
func TestValidateNamespaceMetadata(t *testing.T) {
	cases := []struct {
		labels, annotations map[string]string
		want                string // "" = valid
	}{
		{map[string]string{"pod-security.kubernetes.io/enforce": "privileged", "pod-security.kubernetes.io/enforce-version": "v1.34", "team": ""}, map[string]string{"example.com/owner": "a b c"}, ""},
		{map[string]string{"pod-security.kubernetes.io/warn-version": "latest", "pod-security.kubernetes.io/audit": "restricted"}, nil, ""},
		{map[string]string{"Bad Key": "x"}, nil, `spec.namespaceLabels["Bad Key"]: not a label key`},
		{map[string]string{"team": "a b"}, nil, `spec.namespaceLabels.team "a b": not a label value`},
		{map[string]string{"pod-security.kubernetes.io/enforce": "Privileged"}, nil, `spec.namespaceLabels["pod-security.kubernetes.io/enforce"] "Privileged": not a Pod Security level: privileged, baseline or restricted`},
		{map[string]string{"pod-security.kubernetes.io/enforce-version": "1.34"}, nil, `"1.34": not a Pod Security version: latest, or a Kubernetes minor version such as v1.34`},
		{map[string]string{"pod-security.kubernetes.io/enfoce": "privileged"}, nil, `not a Pod Security label: the keys are pod-security.kubernetes.io/{enforce,audit,warn} and their -version`},
		{nil, map[string]string{"olm-cmp.dev/bundle": "x"}, `spec.namespaceAnnotations["olm-cmp.dev/bundle"]: olm-cmp writes the olm-cmp.dev/ annotations itself`},
		{nil, map[string]string{"argocd.argoproj.io/sync-wave": "1"}, `the Namespace's wave is spec.syncWaves.crds`},
		{nil, map[string]string{"a/b/c": "x"}, `spec.namespaceAnnotations["a/b/c"]: not an annotation key`},
		{nil, map[string]string{"big": strings.Repeat("x", 300_000)}, "spec.namespaceAnnotations: 300003 bytes in all, over the API server's limit of 262144"},
		{map[string]string{"kubernetes.io/metadata.name": "other"}, nil, `spec.namespaceLabels["kubernetes.io/metadata.name"]: the API server sets this label to the namespace's name itself`},
		{manyLabels(MaxNamespaceMetadata + 1), nil, "spec.namespaceLabels: 257 entries, over the 256 olm-cmp takes"},
		{map[string]string{strings.Repeat("k", 3000): "v"}, nil, `spec.namespaceLabels["kkkkkkkk`},
	}
	for i, c := range cases {
		s := Spec{Bundle: "quay.io/x/b:1", Namespace: "ns", NamespaceLabels: c.labels, NamespaceAnnotations: c.annotations}
		err := s.Validate()
		if err != nil && len(err.Error()) > 1000 { // a key is cut, not repeated whole
			t.Errorf("case %d: a %d-byte message", i, len(err.Error()))
		}
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("case %d: got %v, want %q", i, err, c.want)
		}
	}
}

// TestNormalizedHasNamespaceMetadata: the cache key changes with them.
func TestNormalizedHasNamespaceMetadata(t *testing.T) {
	a := Spec{Bundle: "x", Namespace: "n"}
	b := Spec{Bundle: "x", Namespace: "n", NamespaceLabels: map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}}
	c := Spec{Bundle: "x", Namespace: "n", NamespaceAnnotations: map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}}
	if string(a.Normalized()) == string(b.Normalized()) || string(b.Normalized()) == string(c.Normalized()) {
		t.Errorf("normalized equal: %s, %s, %s", a.Normalized(), b.Normalized(), c.Normalized())
	}
}

func manyLabels(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m[fmt.Sprintf("k%d", i)] = "v"
	}
	return m
}
