package render

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
)

// demoWith is the demo application with extra files in its bundle.
func demoWith(t *testing.T, files map[string]string) Request {
	t.Helper()
	dir := t.TempDir()
	copyTree(t, demoDir, dir)
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, "bundle", name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	req := demoRequest(t)
	req.SourceDir = dir
	return req
}

// TestExcludeFilesGetsPastABrokenFile: cluster-aas-operator 0.1.5 ships an
// object without apiVersion. The error names the file and the spec field
// that gets past it; with that field the bundle renders, its file unparsed.
func TestExcludeFilesGetsPastABrokenFile(t *testing.T) {
	for name, broken := range map[string]string{
		"no apiVersion":  "kind: ConfigMap\nmetadata: {name: vendor-typo}\n",
		"does not parse": "apiVersion: v1\nkind: ConfigMap\ndata: {a: [unclosed\n",
	} {
		t.Run(name, func(t *testing.T) {
			req := demoWith(t, map[string]string{"manifests/vendor.yaml": broken})
			_, err := (&Renderer{}).Render(context.Background(), req)
			want := "; if the operator does not need the objects of manifests/vendor.yaml, skip the file: spec.excludeFiles: [manifests/vendor.yaml] (or use another bundle version)"
			if err == nil || !strings.HasPrefix(err.Error(), `spec.bundle "./bundle": manifests/vendor.yaml: document 1: `) || !strings.HasSuffix(err.Error(), want) {
				t.Fatalf("got %v", err)
			}
			req.Spec.ExcludeFiles = []string{"manifests/vendor.yaml"}
			res := mustRender(t, req)
			if base := mustRender(t, demoRequest(t)); !slices.Equal(res.Warnings, base.Warnings) {
				t.Errorf("warnings %q\nwant the demo's %q", res.Warnings, base.Warnings)
			}
			if strings.Contains(string(res.YAML()), "vendor-typo") {
				t.Errorf("the skipped file's object was rendered")
			}
		})
	}
}

func TestExcludeFilesNamingNothing(t *testing.T) {
	req := demoWith(t, nil)
	req.Spec.ExcludeFiles = []string{"manifests/gone.yaml"}
	res := mustRender(t, req)
	want := "spec.excludeFiles: manifests/gone.yaml: no such file in the bundle's manifests/ (it holds manifests/greeter-metrics_v1_service.yaml, manifests/greeter-operator.clusterserviceversion.yaml, manifests/greeter.example.com_greeters.yaml): the entry skips nothing; correct or remove it"
	if !slices.Contains(res.Warnings, want) {
		t.Errorf("warnings %q\nlack %q", res.Warnings, want)
	}
	req.Spec.Strict = true
	if _, err := (&Renderer{}).Render(context.Background(), req); err == nil || err.Error() != "strict: "+want {
		t.Errorf("strict: got %v", err)
	}
}

// TestExcludeFilesThroughTheImageLoader: the skip reaches bundles pulled
// from a registry, not only directories.
func TestExcludeFilesThroughTheImageLoader(t *testing.T) {
	req := demoWith(t, map[string]string{"manifests/vendor.yaml": "kind: ConfigMap\n"})
	host, _ := bundletest.NewRegistry(t)
	bundletest.PushDir(t, host, "olm-cmp/vendor-bundle", "v1", filepath.Join(req.SourceDir, "bundle"))
	req.Spec.Bundle = host + "/olm-cmp/vendor-bundle:v1"
	r := &Renderer{Loader: &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}}
	if _, err := r.Render(context.Background(), req); err == nil || !strings.Contains(err.Error(), "spec.excludeFiles: [manifests/vendor.yaml]") {
		t.Fatalf("got %v", err)
	}
	req.Spec.ExcludeFiles = []string{"manifests/vendor.yaml"}
	if _, err := r.Render(context.Background(), req); err != nil {
		t.Fatal(err)
	}
}

// TestUnreadableDependenciesRender: eventing-kogito 1.2.0's dependencies.yaml
// is mis-indented; OLM v1 renders the bundle, and so does olm-cmp, with one
// warning saying the dependencies are unknown.
func TestUnreadableDependenciesRender(t *testing.T) {
	req := demoWith(t, map[string]string{"metadata/dependencies.yaml": "dependencies:\n- type: olm.package\n  value:\n    packageName: knative-eventing\n   version: 1.0.0\n"})
	res := mustRender(t, req)
	base := mustRender(t, demoRequest(t))
	var added []string
	for _, w := range res.Warnings {
		if !slices.Contains(base.Warnings, w) {
			added = append(added, w)
		}
	}
	want := `requirement dependency:unknown (from metadata/dependencies.yaml): the packages this operator needs installed first are unknown: metadata/dependencies.yaml cannot be read (not valid YAML near line 4: did not find expected key); OLM v1 does not read it to render, and neither does olm-cmp; fix: read the file (or the operator's documentation) for the operators it needs, install them first, then accept "dependency:unknown"`
	if len(added) != 1 || added[0] != want {
		t.Fatalf("new warnings %q\nwant %q", added, want)
	}
	// The same objects: only the bundle's content digest differs.
	strip := func(y []byte) string {
		return regexp.MustCompile(`sha256:[0-9a-f]{64}`).ReplaceAllString(string(y), "")
	}
	if strip(res.YAML()) != strip(base.YAML()) {
		t.Errorf("the render differs from the demo's")
	}
}
