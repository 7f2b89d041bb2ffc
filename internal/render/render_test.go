package render

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/spec"
)

const demoDir = "../../examples/demo"

func demoRequest(t testing.TB) Request {
	t.Helper()
	f, err := spec.Load(demoDir)
	if err != nil {
		t.Fatal(err)
	}
	return Request{Spec: f.Spec, Name: f.Metadata.Name, SourceDir: demoDir}
}

func mustRender(t testing.TB, req Request) *Result {
	t.Helper()
	res, err := (&Renderer{}).Render(context.Background(), req)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return res
}

// parse re-reads the stream the way a consumer would.
func parse(t testing.TB, stream []byte) []*yaml.RNode {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(stream), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatalf("output is not valid YAML: %v", err)
	}
	return nodes
}

func find(nodes []*yaml.RNode, kind, name string) *yaml.RNode {
	for _, n := range nodes {
		if n.GetKind() == kind && (name == "" || n.GetName() == name) {
			return n
		}
	}
	return nil
}

func wave(t testing.TB, n *yaml.RNode) int {
	t.Helper()
	v, ok := n.GetAnnotations()["argocd.argoproj.io/sync-wave"]
	if !ok {
		t.Fatalf("%s/%s has no sync-wave", n.GetKind(), n.GetName())
	}
	w, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s/%s sync-wave %q: %v", n.GetKind(), n.GetName(), v, err)
	}
	return w
}

func TestDemoRendersWhatUsersNeed(t *testing.T) {
	res := mustRender(t, demoRequest(t))
	nodes := parse(t, res.YAML())
	if len(nodes) != len(res.Manifests) {
		t.Fatalf("%d manifests but %d documents in the stream", len(res.Manifests), len(nodes))
	}
	if res.Package != "greeter-operator" || res.Version != "0.2.0" {
		t.Errorf("package/version = %s/%s", res.Package, res.Version)
	}

	ns := find(nodes, "Namespace", "greeter-system")
	crd := find(nodes, "CustomResourceDefinition", "greeters.greeter.example.com")
	dep := find(nodes, "Deployment", "greeter-operator-controller")
	sa := find(nodes, "ServiceAccount", "greeter-operator")
	vwc := find(nodes, "ValidatingWebhookConfiguration", "")
	example := find(nodes, "Greeter", "hello")
	extra := find(nodes, "Greeter", "from-git")
	authReader := find(nodes, "RoleBinding", "greeter-operator-auth-reader")
	for name, n := range map[string]*yaml.RNode{"Namespace": ns, "CRD": crd, "Deployment": dep, "ServiceAccount": sa,
		"ValidatingWebhookConfiguration": vwc, "alm-example CR": example, "extra manifest": extra, "RoleBinding": authReader} {
		if n == nil {
			t.Fatalf("%s missing from the render", name)
		}
	}

	// Strict wave order CRDs < RBAC < operator < webhooks < CRs.
	if !(wave(t, ns) == wave(t, crd) && wave(t, crd) < wave(t, sa) && wave(t, sa) < wave(t, dep) &&
		wave(t, dep) < wave(t, vwc) && wave(t, vwc) < wave(t, example) && wave(t, example) == wave(t, extra)) {
		t.Errorf("waves out of order: ns=%d crd=%d sa=%d dep=%d webhook=%d cr=%d extra=%d",
			wave(t, ns), wave(t, crd), wave(t, sa), wave(t, dep), wave(t, vwc), wave(t, example), wave(t, extra))
	}
	// Stream order follows the waves; the settle hook comes last, with no wave (it runs in the
	// PostSync phase, after every wave).
	hook := nodes[len(nodes)-1]
	if hook.GetKind() != "ConfigMap" || hook.GetName() != "greeter-operator-sync-settled" ||
		hook.GetAnnotations()["argocd.argoproj.io/hook"] != "PostSync" || hook.GetNamespace() != "greeter-system" {
		t.Errorf("the last object is %s/%s in %q (hook %q), want the PostSync hook ConfigMap greeter-operator-sync-settled in greeter-system",
			hook.GetKind(), hook.GetName(), hook.GetNamespace(), hook.GetAnnotations()["argocd.argoproj.io/hook"])
	}
	if _, ok := hook.GetAnnotations()["argocd.argoproj.io/sync-wave"]; ok {
		t.Error("the settle hook has a sync wave")
	}
	last := -1 << 31
	for _, n := range nodes[:len(nodes)-1] {
		if w := wave(t, n); w < last {
			t.Errorf("%s/%s (wave %d) after wave %d", n.GetKind(), n.GetName(), w, last)
		} else {
			last = w
		}
	}

	// The CRD keeps `{}`, its status subresource, and loses its status.
	crdText, _ := crd.String()
	if !strings.Contains(crdText, "status: {}") {
		t.Errorf("CRD lost subresources.status {}:\n%s", crdText)
	}
	if crd.Field("status") != nil {
		t.Error("CRD status must not be emitted")
	}
	if opts := crd.GetAnnotations()["argocd.argoproj.io/sync-options"]; !strings.Contains(opts, "Delete=false") {
		t.Errorf("CRD sync-options %q lack Delete=false (keepCRDs defaults to true)", opts)
	}

	// Pull secret by name on the ServiceAccount; no secret material anywhere.
	if s, _ := sa.Pipe(yaml.Lookup("imagePullSecrets")); s == nil || !strings.Contains(s.MustString(), "registry-pull-secret") {
		t.Errorf("ServiceAccount lacks the pull secret")
	}
	if find(nodes, "Secret", "") != nil {
		t.Error("the render must not contain Secrets for pull secrets")
	}

	// Image mirror and deployment config.
	depText, _ := dep.String()
	if !strings.Contains(depText, "mirror.example.com/olm-cmp/greeter-operator:v0.2.0") || strings.Contains(depText, "quay.io/olm-cmp") {
		t.Errorf("image not rewritten:\n%s", depText)
	}
	if !strings.Contains(depText, "LOG_LEVEL") {
		t.Error("config.env not applied")
	}
	if got := dep.GetNamespace(); got != "greeter-system" {
		t.Errorf("Deployment namespace %q", got)
	}

	// Auth-reader binding in kube-system.
	if authReader.GetNamespace() != "kube-system" || !strings.Contains(authReader.MustString(), "extension-apiserver-authentication-reader") {
		t.Errorf("auth reader binding wrong:\n%s", authReader.MustString())
	}

	// Provenance on every object.
	for _, n := range nodes {
		if n.GetAnnotations()[AnnotationBundle] != "greeter-operator.v0.2.0" {
			t.Errorf("%s/%s lacks %s", n.GetKind(), n.GetName(), AnnotationBundle)
		}
	}
	// The webhook's namespaced CR lands in the install namespace.
	if example.GetNamespace() != "greeter-system" {
		t.Errorf("alm-example CR namespace %q", example.GetNamespace())
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	a := mustRender(t, demoRequest(t)).YAML()
	for i := 0; i < 3; i++ {
		if b := mustRender(t, demoRequest(t)).YAML(); !bytes.Equal(a, b) {
			t.Fatal("two renders of the same input differ")
		}
	}
}

func TestRenderErrorsNameTheProblem(t *testing.T) {
	base := demoRequest(t)
	for _, tc := range []struct {
		name   string
		mutate func(*Request)
		want   string
	}{
		{"missing bundle dir", func(r *Request) { r.Spec.Bundle = "./nope" }, `spec.bundle "./nope": bundle directory not found`},
		{"no namespace", func(r *Request) { r.Spec.Namespace = "" }, "spec.namespace is required"},
		{"unknown example kind", func(r *Request) { r.Spec.Examples = []string{"Nope"} }, "Nope"},
		{"version on a dir", func(r *Request) { r.Spec.Version = "1.0" }, "only image references take a version"},
		{"image without loader", func(r *Request) { r.Spec.Bundle = "quay.io/x/y:1" }, "no registry access"},
		{"escape root", func(r *Request) {
			r.Spec.Bundle = "../../examples/demo/bundle"
			r.RootDir = demoDir + "/bundle/manifests"
		}, "inside the repository"},
		{"bad exclude", func(r *Request) { r.Spec.Exclude = []string{"a/b/c/d"} }, "spec.exclude[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := base
			tc.mutate(&req)
			res, err := (&Renderer{}).Render(context.Background(), req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want error containing %q, got %v", tc.want, err)
			}
			if res != nil {
				t.Error("a failed render must return no output")
			}
		})
	}
}

func TestBadExtraManifestFailsWholeRender(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, demoDir, dir)
	if err := os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("kind: Greeter\nmetadata: {name: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	req := demoRequest(t)
	req.SourceDir = dir
	_, err := (&Renderer{}).Render(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "broken.yaml") {
		t.Fatalf("want an error naming broken.yaml, got %v", err)
	}
}

func TestImageRefWithVersion(t *testing.T) {
	d := "sha256:" + strings.Repeat("a", 64)
	for _, tc := range []struct{ ref, version, digest, want, pin, err string }{
		{"quay.io/a/b", "1.0", "", "quay.io/a/b:1.0", "", ""},
		{"localhost:5000/a/b", "1.0", "", "localhost:5000/a/b:1.0", "", ""},
		{"quay.io/a/b:1.0", "1.0", "", "quay.io/a/b:1.0", "", ""},
		{"quay.io/a/b:2.0", "1.0", "", "", "", "conflicts with the tag"},
		// A digest reference and a version: the version is the tag the pin
		// is checked against when resolved.
		{"quay.io/a/b@" + d, "1.0", "", "quay.io/a/b:1.0", d, ""},
		{"quay.io/a/b:1.0@" + d, "1.0", "", "quay.io/a/b:1.0", d, ""},
		{"quay.io/a/b:1.0@" + d, "1.1", "", "", "", "spec.version is 1.1 but spec.bundle \"quay.io/a/b:1.0@" + d + "\" is pinned to its tag 1.0"},
		{"quay.io/a/b", "1.0", d, "quay.io/a/b:1.0", d, ""},
		{"quay.io/a/b", "", d, "quay.io/a/b@" + d, d, ""},
		{"quay.io/a/b@sha256:" + strings.Repeat("b", 64), "", d, "", "", "differ"},
		{"quay.io/a/b", "not a tag!", "", "", "", "not usable as the tag"},
		{"quay.io/a/b c", "", "", "", "", "nor an image reference"},
		{"quay.io/a/b:2.0", "", "", "quay.io/a/b:2.0", "", ""},
	} {
		got, err := imageRef(tc.ref, tc.version, tc.digest)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %s: want error %q, got %v", tc.ref, tc.version, tc.err, err)
			}
			continue
		}
		if err != nil || got.ref() != tc.want || got.digest != tc.pin {
			t.Errorf("%s + %s + %s = %q pinned %q, %v; want %q pinned %q", tc.ref, tc.version, tc.digest, got.ref(), got.digest, err, tc.want, tc.pin)
		}
	}
}

func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestDuplicateObjectIsAnError(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, demoDir, dir)
	// The extra manifest repeats the alm-example the spec already renders.
	dup := "apiVersion: greeter.example.com/v1alpha1\nkind: Greeter\nmetadata:\n  name: hello\n  namespace: greeter-system\n"
	if err := os.WriteFile(filepath.Join(dir, "dup.yaml"), []byte(dup), 0o644); err != nil {
		t.Fatal(err)
	}
	req := demoRequest(t)
	req.SourceDir = dir
	req.Spec.Bundle = "./bundle"
	_, err := (&Renderer{}).Render(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "Greeter.greeter.example.com greeter-system/hello is rendered twice") {
		t.Fatalf("want the duplicate error, got %v", err)
	}
}

func TestUnpinned(t *testing.T) {
	d := "sha256:" + strings.Repeat("a", 64)
	for _, tc := range []struct{ in, want spec.Spec }{
		{spec.Spec{Bundle: "quay.io/a/b", Version: "1.0", Digest: d}, spec.Spec{Bundle: "quay.io/a/b", Version: "1.0"}},
		{spec.Spec{Bundle: "quay.io/a/b:1.0@" + d}, spec.Spec{Bundle: "quay.io/a/b:1.0"}},
		{spec.Spec{Bundle: "quay.io/a/b@" + d, Version: "1.0"}, spec.Spec{Bundle: "quay.io/a/b", Version: "1.0"}},
		// Pinned by digest alone: nothing else to resolve.
		{spec.Spec{Bundle: "quay.io/a/b@" + d}, spec.Spec{Bundle: "quay.io/a/b@" + d}},
		{spec.Spec{Catalog: "quay.io/a/c:v4@" + d, Package: "p", Version: "1.0.0", Digest: d}, spec.Spec{Catalog: "quay.io/a/c:v4", Package: "p", Version: "1.0.0"}},
		{spec.Spec{Catalog: "quay.io/a/c@" + d, Package: "p"}, spec.Spec{Catalog: "quay.io/a/c@" + d, Package: "p"}},
		{spec.Spec{Bundle: "./bundle"}, spec.Spec{Bundle: "./bundle"}},
	} {
		if got := Unpinned(tc.in); string(got.Normalized()) != string(tc.want.Normalized()) {
			t.Errorf("Unpinned(%+v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}
