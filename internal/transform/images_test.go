package transform

import (
	"strings"
	"testing"
)

func TestImagesRewrite(t *testing.T) {
	f := Images(map[string]string{
		"quay.io/org":           "mirror.example.com/quay/org",
		"quay.io/org/special":   "special.example.com/s",
		"registry.redhat.io/":   "rh.example.com/",
		"docker.io/library/bb":  "mirror.example.com/bb",
		"ghcr.io/x/img:v1":      "ghcr.example.com/x/img:v1-patched",
		"gcr.io/p/img@sha256:a": "never",
	}).(imagesFilter)
	for _, tc := range []struct{ in, want string }{
		{"quay.io/org/op:v1", "mirror.example.com/quay/org/op:v1"},
		{"quay.io/org/op@sha256:abc", "mirror.example.com/quay/org/op@sha256:abc"},
		{"quay.io/org", "mirror.example.com/quay/org"},
		// longest prefix wins
		{"quay.io/org/special/x:1", "special.example.com/s/x:1"},
		// boundary: not a prefix of another path segment
		{"quay.io/organization/op:v1", ""},
		{"quay.io/org/specialist:1", "mirror.example.com/quay/org/specialist:1"},
		// a prefix ending in '/' matches anything after it
		{"registry.redhat.io/ubi9/ubi:latest", "rh.example.com/ubi9/ubi:latest"},
		{"docker.io/library/bb:1.36", "mirror.example.com/bb:1.36"},
		{"docker.io/library/bbox:1", ""},
		// a prefix with a tag matches only that tag
		{"ghcr.io/x/img:v1", "ghcr.example.com/x/img:v1-patched"},
		{"ghcr.io/x/img:v1.2", ""},
		{"other.io/a/b", ""},
	} {
		got, rule := f.rewrite(tc.in)
		if rule < 0 {
			got = ""
		}
		if got != tc.want {
			t.Errorf("rewrite(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestImages(t *testing.T) {
	in := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: op
spec:
  template:
    spec:
      initContainers:
      - name: init
        image: quay.io/org/init:1 # pinned by CI
      containers:
      - name: manager
        image: "quay.io/org/op:v1"
        resources: {}
        env:
        - name: RELATED_IMAGE_OPERAND
          value: quay.io/org/operand@sha256:0123
        - name: WATCH_NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.annotations['olm.targetNamespaces']
        - name: ARGS
          value: --image quay.io/org/x
        - name: REGISTRY
          value: quay.io/organization
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: cleanup
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: c
            image: quay.io/org/cleanup:2
---
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: c
    image: quay.io/org/p:1
---
apiVersion: example.com/v1
kind: Operand
metadata:
  name: cr
spec:
  template:
    spec:
      containers:
      - image: quay.io/org/untouched:1
`
	want := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: op
spec:
  template:
    spec:
      initContainers:
      - name: init
        image: m.example.com/init:1 # pinned by CI
      containers:
      - name: manager
        image: "m.example.com/op:v1"
        resources: {}
        env:
        - name: RELATED_IMAGE_OPERAND
          value: m.example.com/operand@sha256:0123
        - name: WATCH_NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.annotations['olm.targetNamespaces']
        - name: ARGS
          value: --image quay.io/org/x
        - name: REGISTRY
          value: quay.io/organization
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: cleanup
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: c
            image: m.example.com/cleanup:2
---
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: c
    image: m.example.com/p:1
---
apiVersion: example.com/v1
kind: Operand
metadata:
  name: cr
spec:
  template:
    spec:
      containers:
      - image: quay.io/org/untouched:1
`
	diff(t, run(t, Images(map[string]string{"quay.io/org": "m.example.com"}), in), want)
	// No rewrites: untouched, byte for byte.
	diff(t, run(t, Images(nil), in), in)
}

// TestImagesUnmatched: a prefix that rewrites no image (a typo, or one a
// longer prefix always wins over) is reported, listing the images rendered;
// one that rewrites only an env value is used.
func TestImagesUnmatched(t *testing.T) {
	in := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: op\nspec:\n  template:\n    spec:\n      containers:\n" +
		"      - name: manager\n        image: quay.io/org/op:v1\n        env:\n        - name: RELATED_IMAGE_X\n          value: ghcr.io/x/operand:1\n" +
		"      - name: proxy\n        image: gcr.io/kubebuilder/kube-rbac-proxy:v0.13\n"
	var w warnings
	run(t, imagesReporting(map[string]string{
		"quay.io/orgg":      "m.example.com/a", // typo
		"quay.io":           "m.example.com/b", // always beaten by the longer one
		"quay.io/org/":      "m.example.com/c/",
		"ghcr.io/x":         "m.example.com/d", // an env value only
		"docker.io/library": "m.example.com/e",
	}, w.add), in)
	want := []string{
		`images "docker.io/library" matched no image; images rendered: gcr.io/kubebuilder/kube-rbac-proxy:v0.13, quay.io/org/op:v1`,
		`images "quay.io" matched no image; images rendered: gcr.io/kubebuilder/kube-rbac-proxy:v0.13, quay.io/org/op:v1`,
		`images "quay.io/orgg" matched no image; images rendered: gcr.io/kubebuilder/kube-rbac-proxy:v0.13, quay.io/org/op:v1`,
	}
	if strings.Join(w, "\n") != strings.Join(want, "\n") {
		t.Errorf("no-ops:\n%s\nwant:\n%s", strings.Join(w, "\n"), strings.Join(want, "\n"))
	}
}
