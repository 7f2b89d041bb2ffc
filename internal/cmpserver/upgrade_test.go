package cmpserver

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/engine"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// demoBundleDir is the bundle every upgrade case pushes, edited per version.
const demoBundleDir = "../../examples/demo/bundle"

// pushGreeter pushes the demo bundle as version v (see
// bundletest.PushDemoVersion) and returns the image's digest.
func pushGreeter(t *testing.T, host, v, replaces string, crdEdits ...string) string {
	t.Helper()
	return bundletest.PushDemoVersion(t, host, demoBundleDir, v, replaces, crdEdits...)
}

// TestUpgradeFromThroughThePlugin (issue 11 item 5): spec.upgradeFrom, in
// olm-cmp.yaml or as the Argo CD parameter, makes GenerateManifest run the
// safety checks from that version. An unsafe upgrade fails with
// InvalidArgument (a render error: the request must change), every finding
// on its own line and no server path in the message Argo CD shows; a safe
// one returns the manifests with their provenance annotations.
func TestUpgradeFromThroughThePlugin(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	pushGreeter(t, host, "0.1.0", "greeter-operator.v0.0.9")
	safeDigest := pushGreeter(t, host, "0.2.0", "greeter-operator.v0.1.0")
	// Unsafe: message is removed and replicas becomes a string.
	pushGreeter(t, host, "0.3.0", "greeter-operator.v0.2.0",
		"              message:\n                type: string\n", "",
		"replicas:\n                type: integer", "replicas:\n                type: string")

	cacheDir, workDir := t.TempDir(), t.TempDir()
	loader := &bundle.ImageLoader{CacheDir: cacheDir, Insecure: []string{host}}
	ts := startServer(t, engine.NewEngine(engine.EngineOptions{Loader: loader}), func(o *ServerOptions) { o.WorkDir = workDir })
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}

	// repo is a repository whose apps/greeter renders version to, naming
	// from as upgradeFrom in olm-cmp.yaml unless it is empty.
	repo := func(t *testing.T, to, from string) []byte {
		dir := t.TempDir()
		app := filepath.Join(dir, "apps", "greeter")
		if err := os.MkdirAll(app, 0o755); err != nil {
			t.Fatal(err)
		}
		y := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: " + host + "/demo/greeter-bundle\n  version: " + to + "\n  namespace: greeter-system\n"
		if from != "" {
			y += "  upgradeFrom: " + from + "\n"
		}
		if err := os.WriteFile(filepath.Join(app, spec.FileName), []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		return tgzOf(t, dir)
	}
	const crd = "CRD greeters.greeter.example.com version v1alpha1"
	unsafeLines := []string{
		`spec.upgradeFrom "v0.2.0": the upgrade from greeter-operator.v0.2.0 to greeter-operator.v0.3.0 is unsafe; fix the bundle or the spec, or acknowledge each error you have judged safe in spec.acknowledge (rule, crd, version, path and a reason):`,
		"error: existingFieldRemoval: " + crd + " path .spec.message: field removed: objects that set it lose it",
		"error: type: " + crd + " path .spec.replicas: ",
	}
	for _, tc := range []struct {
		name      string
		to        string
		fileFrom  string     // upgradeFrom in olm-cmp.yaml
		paramFrom string     // upgradeFrom as the Argo CD parameter
		wantCode  codes.Code // with wantLines; default InvalidArgument
		wantLines []string   // the error's lines, each a prefix; nil: renders
	}{
		// In the file, the header names its line; a parameter has none.
		{name: "unsafe, in the file", to: "v0.3.0", fileFrom: "v0.2.0", wantLines: append([]string{"apps/greeter/olm-cmp.yaml: line 7: " + unsafeLines[0]}, unsafeLines[1:]...)},
		{name: "unsafe, as a parameter", to: "v0.3.0", paramFrom: "v0.2.0", wantLines: unsafeLines},
		// The parameter wins over the file, as every override does.
		{name: "unsafe, parameter over a safe file", to: "v0.3.0", fileFrom: "v0.3.0", paramFrom: "v0.2.0", wantLines: unsafeLines},
		// A tag the registry lacks keeps the registry's code: NotFound.
		{name: "FROM not published", to: "v0.2.0", paramFrom: "v0.0.1", wantCode: codes.NotFound, wantLines: []string{`spec.upgradeFrom "v0.0.1": `}},
		{name: "safe, in the file", to: "v0.2.0", fileFrom: "v0.1.0"},
		{name: "safe, as a parameter", to: "v0.2.0", paramFrom: "v0.1.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := call{tgz: repo(t, tc.to, tc.fileFrom), appRelPath: "apps/greeter"}
			if tc.paramFrom != "" {
				c.params = []map[string]any{{"name": "upgradeFrom", "string": tc.paramFrom}}
			}
			resp, err := ts.generate(ctxT(t), t, c)
			if tc.wantLines != nil {
				if err == nil {
					t.Fatalf("rendered %d manifests; want the unsafe upgrade refused", len(resp.GetManifests()))
				}
				if resp != nil && len(resp.Manifests) > 0 {
					t.Errorf("%d manifests returned with the error", len(resp.Manifests))
				}
				st := status.Convert(err)
				if want := cmp.Or(tc.wantCode, codes.InvalidArgument); st.Code() != want {
					t.Errorf("code %v, want %v: %s", st.Code(), want, st.Message())
				}
				msg := st.Message()
				lines := strings.Split(msg, "\n")
				if len(lines) != len(tc.wantLines) {
					t.Errorf("%d lines, want %d (a header and one line per finding):\n%s", len(lines), len(tc.wantLines), msg)
				}
				for i := range min(len(lines), len(tc.wantLines)) {
					if !strings.HasPrefix(lines[i], tc.wantLines[i]) {
						t.Errorf("line %d is %q, want it to start with %q", i+1, lines[i], tc.wantLines[i])
					}
				}
				for _, p := range []string{workDir, cacheDir, cwd, os.TempDir()} {
					if strings.Contains(msg, p) {
						t.Errorf("the message shows the server path %s:\n%s", p, msg)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Manifests) == 0 {
				t.Fatal("no manifests")
			}
			kinds := map[string]bool{}
			for _, m := range resp.Manifests {
				var o struct {
					Kind     string
					Metadata struct {
						Name        string
						Annotations map[string]string
					}
				}
				if err := json.Unmarshal([]byte(m), &o); err != nil {
					t.Fatal(err)
				}
				kinds[o.Kind] = true
				a := o.Metadata.Annotations
				if a[render.AnnotationDigest] != safeDigest || a[render.AnnotationPackage] != "greeter-operator@0.2.0" {
					t.Errorf("%s %s: provenance %s=%q %s=%q, want %s and greeter-operator@0.2.0",
						o.Kind, o.Metadata.Name, render.AnnotationDigest, a[render.AnnotationDigest], render.AnnotationPackage, a[render.AnnotationPackage], safeDigest)
				}
			}
			for _, k := range []string{"CustomResourceDefinition", "Deployment"} {
				if !kinds[k] {
					t.Errorf("no %s rendered (kinds %v)", k, kinds)
				}
			}
		})
	}
}
