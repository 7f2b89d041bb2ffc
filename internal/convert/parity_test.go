package convert

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestParityRegression renders OLM v1's own regression bundles with the
// parameters of its generate-manifests.go (see ../shared/olmv1-regression/
// README.md) and compares with its golden files.
func TestParityRegression(t *testing.T) {
	root := filepath.Join(sharedDir(t), "olmv1-regression")
	cases := []struct {
		bundle, name, installNs string
		watch                   []string
		config                  string // testdata/deploymentconfig/<config>.yaml
	}{
		{"argocd-operator.v0.6.0", "all-namespaces", "argocd-system", nil, ""},
		{"argocd-operator.v0.6.0", "own-namespace", "argocd-system", []string{"argocd-system"}, ""},
		{"argocd-operator.v0.6.0", "single-namespace", "argocd-system", []string{"argocd-watch"}, ""},
		{"argocd-operator.v0.6.0", "with-deploymentconfig-options", "argocd-system", nil, "with-deploymentconfig-options"},
		{"argocd-operator.v0.6.0", "with-empty-affinity", "argocd-system", nil, "with-empty-affinity"},
		{"argocd-operator.v0.6.0", "with-empty-affinity-subtype", "argocd-system", nil, "with-empty-affinity-subtype"},
		{"webhook-operator.v0.0.5", "all-webhook-types", "webhook-system", nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.bundle+"/"+tc.name, func(t *testing.T) {
			b := loadBundle(t, filepath.Join(root, "bundles", tc.bundle))
			o := Options{InstallNamespace: tc.installNs, TargetNamespaces: tc.watch, CertProvider: NoCertProvider}
			if tc.config != "" {
				o.DeploymentConfig = loadConfig(t, filepath.Join("testdata", "deploymentconfig", tc.config+".yaml"))
			}
			objs, err := Convert(b, o)
			if err != nil {
				t.Fatal(err)
			}
			targets, _ := TargetNamespaces(b.CSV, tc.installNs, tc.watch)
			want := readExpected(t, filepath.Join(root, "expected-manifests", tc.bundle, tc.name))
			if diffs := compareObjects(t, objs, want, tc.installNs, targets); len(diffs) > 0 {
				t.Errorf("%d differences from OLM v1:\n%s", len(diffs), strings.Join(diffs, "\n"))
			}
		})
	}
}

// TestParityReference renders every bundle of the shared corpus as
// ../shared/olmv1-reference/README.md says OLM v1 did (install namespace
// "<first word>-system", default targets, cert-manager) and compares.
func TestParityReference(t *testing.T) {
	shared := sharedDir(t)
	ref := filepath.Join(shared, "olmv1-reference")
	var cases []struct{ refDir, bundleDir, name string }
	corpus, _ := filepath.Glob(filepath.Join(shared, "bundles", "*", "manifests"))
	for _, m := range corpus {
		dir := filepath.Dir(m)
		name := filepath.Base(dir)
		cases = append(cases, struct{ refDir, bundleDir, name string }{filepath.Join(ref, name), dir, name})
	}
	testdata, _ := filepath.Glob(filepath.Join(shared, "olmv1-testdata", "bundles", "*", "*", "manifests"))
	for _, m := range testdata {
		dir := filepath.Dir(m)
		name := filepath.Base(filepath.Dir(dir)) + "/" + filepath.Base(dir)
		cases = append(cases, struct{ refDir, bundleDir, name string }{filepath.Join(ref, name), dir, name})
	}
	if len(cases) != 24 {
		t.Fatalf("found %d bundles in %s, want the 24 the reference README lists", len(cases), shared)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			installNs := strings.SplitN(tc.name, "-", 2)[0] + "-system"
			b := loadBundle(t, tc.bundleDir)
			o := Options{InstallNamespace: installNs, CertProvider: CertManager}
			objs, err := Convert(b, o)
			if strings.HasPrefix(tc.name, "single-namespace-operator/") {
				// OLM v1 refuses it without a watch namespace; so must we.
				if err == nil || !strings.Contains(err.Error(), "exactly one target namespace must be specified") || !strings.Contains(err.Error(), "SingleNamespace") {
					t.Fatalf("want OLM's target namespace error naming SingleNamespace, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			targets, _ := TargetNamespaces(b.CSV, installNs, nil)
			want := readExpected(t, tc.refDir)
			if diffs := compareObjects(t, objs, want, installNs, targets); len(diffs) > 0 {
				t.Errorf("%d differences from OLM v1:\n%s", len(diffs), strings.Join(diffs, "\n"))
			}
		})
	}
}
