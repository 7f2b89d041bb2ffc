package healthcheck_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
	"sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/internal/healthcheck"
	"github.com/olm-cmp/olm-cmp/internal/render"
	olmspec "github.com/olm-cmp/olm-cmp/internal/spec"
)

const sharedDir = "../../../shared/bundles"

// sharedBundles are the corpus bundles whose generated checks test/argocd-v3 runs through Argo
// CD's Lua engine (testdata/argocd-cm.yaml, on the samples in testdata/samples).
var sharedBundles = []struct{ dir, namespace string }{
	{"dynatrace-operator-1.10.2", "dynatrace"},
	{"gitlab-operator-kubernetes-3.3.0", "gitlab-system"},
	{"community-kubevirt-hyperconverged-1.18.1", "kubevirt-hyperconverged"},
}

func requireShared(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(sharedDir); err != nil {
		t.Skipf("reference bundles not available (%s missing): this test runs where ../shared sits beside the repository", sharedDir)
	}
}

// sharedSources renders the shared bundles as health-checks does (Resolve, Load, RenderLoaded)
// and returns their sources.
func sharedSources(t *testing.T) []healthcheck.Source {
	t.Helper()
	requireShared(t)
	var out []healthcheck.Source
	r := &render.Renderer{}
	for _, b := range sharedBundles {
		abs, err := filepath.Abs(filepath.Join(sharedDir, b.dir))
		if err != nil {
			t.Fatal(err)
		}
		req := render.Request{Spec: olmspec.Spec{Bundle: abs, Namespace: b.namespace}}
		ctx := context.Background()
		rv, err := r.Resolve(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		bundle, err := r.Load(ctx, rv)
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.RenderLoaded(ctx, rv, bundle)
		if err != nil {
			t.Fatal(err)
		}
		s, err := healthcheck.NewSource(b.dir, bundle.CSV, res.Manifests)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestSharedBundles: the checks and outcome lines for dynatrace, gitlab and kubevirt are the
// committed ones (which test/argocd-v3 evaluates), and generating them twice gives the same bytes.
func TestSharedBundles(t *testing.T) {
	sources := sharedSources(t)
	rep, err := healthcheck.Plan(sources)
	if err != nil {
		t.Fatal(err)
	}
	out, err := healthcheck.Render(rep.Checks, healthcheck.FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := healthcheck.Plan(sharedSources(t))
	out2, _ := healthcheck.Render(again.Checks, healthcheck.FormatYAML)
	if !bytes.Equal(out, out2) {
		t.Error("two runs differ")
	}
	var lines strings.Builder
	for _, o := range rep.Outcomes {
		lines.WriteString(o.Line() + "\n")
	}
	healthcheck.GoldenFile(t, "testdata/argocd-cm.yaml", out)
	healthcheck.GoldenFile(t, "testdata/outcomes.txt", []byte(lines.String()))
	var keys []string
	for _, c := range rep.Checks {
		keys = append(keys, strings.TrimPrefix(c.Key, "resource.customizations.health."))
	}
	for _, want := range []string{"dynatrace.com_DynaKube", "apps.gitlab.com_GitLab", "hco.kubevirt.io_HyperConverged"} {
		if !strings.Contains(strings.Join(keys, " "), want) {
			t.Errorf("no check for %s (have %v)", want, keys)
		}
	}
}

// TestSamplesMatchSchemas: every status sample in testdata/samples is an object its CRD's
// storage-version schema accepts (types, enums, required fields), so the Lua tests judge
// statuses the operator could write.
func TestSamplesMatchSchemas(t *testing.T) {
	sources := sharedSources(t)
	crds := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, s := range sources {
		for _, c := range s.CRDs {
			crds[c.Spec.Group+"_"+c.Spec.Names.Kind] = c
		}
	}
	dirs, err := filepath.Glob("testdata/samples/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no samples (%v)", err)
	}
	for _, dir := range dirs {
		crd := crds[filepath.Base(dir)]
		if crd == nil {
			t.Errorf("%s: no CRD for it in the shared bundles", dir)
			continue
		}
		var version apiextensionsv1.CustomResourceDefinitionVersion
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				version = v
			}
		}
		// The CRD schema read as OpenAPI (the x-kubernetes extensions aside), validated with
		// kube-openapi, the validator the API server's is built on.
		raw, err := json.Marshal(version.Schema.OpenAPIV3Schema)
		if err != nil {
			t.Fatal(err)
		}
		var schema spec.Schema
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		validator := validate.NewSchemaValidator(&schema, nil, "", strfmt.Default)
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var obj map[string]any
			if err := yaml.Unmarshal(b, &obj); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if obj["apiVersion"] != crd.Spec.Group+"/"+version.Name {
				t.Errorf("%s: apiVersion %v, want the storage version %s/%s", f, obj["apiVersion"], crd.Spec.Group, version.Name)
			}
			// the schema does not know metadata's fields beyond name and namespace
			if res := validator.Validate(withoutMetadata(obj)); !res.IsValid() {
				t.Errorf("%s: %v", f, res.Errors)
			}
		}
	}
}

func withoutMetadata(obj map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		if k != "metadata" {
			out[k] = v
		}
	}
	return out
}
