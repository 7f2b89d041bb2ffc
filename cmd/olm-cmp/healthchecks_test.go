package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// demoWithStatus copies examples/demo to a temporary directory, giving the Greeter CRD's status
// schema the given properties (YAML, indented for the schema), and returns the copy.
func demoWithStatus(t *testing.T, statusProps string) string {
	t.Helper()
	dir := t.TempDir()
	err := filepath.Walk("../../examples/demo", func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("../../examples/demo", p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if filepath.Base(p) == "greeter.example.com_greeters.yaml" {
			old := "          status:\n            type: object\n            x-kubernetes-preserve-unknown-fields: true\n"
			if !strings.Contains(string(b), old) {
				t.Fatalf("%s: the status schema moved; update this test", p)
			}
			b = []byte(strings.Replace(string(b), old, "          status:\n            type: object\n"+statusProps, 1))
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestHealthChecksCommand(t *testing.T) {
	dir := demoWithStatus(t, `            properties:
              observedGeneration: {type: integer}
              phase: {type: string, enum: [Pending, Running, Failed]}
              conditions:
                type: array
                items:
                  type: object
                  properties:
                    type: {type: string}
                    status: {type: string}
`)
	out, stderr, err := run(t, "health-checks", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if stderr != "" {
		t.Errorf("stderr %q: every owned kind got a check", stderr)
	}
	var cm struct {
		Kind string
		Data map[string]string
	}
	if err := yaml.Unmarshal([]byte(out), &cm); err != nil {
		t.Fatal(err)
	}
	script, ok := cm.Data["resource.customizations.health.greeter.example.com_Greeter"]
	if cm.Kind != "ConfigMap" || len(cm.Data) != 1 || !ok {
		t.Fatalf("got %s with keys of %v, want argocd-cm with the Greeter check", cm.Kind, cm.Data)
	}
	for _, want := range []string{"conditions = true,", "observedGeneration = true,", `phaseField = "phase",`,
		`healthyPhases = {["Running"] = true},`, `degradedPhases = {["Failed"] = true},`} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	again, _, _ := run(t, "health-checks", dir)
	if again != out {
		t.Error("two runs differ")
	}
	helm, _, err := run(t, "health-checks", dir, "-o", "helm")
	if err != nil || !strings.Contains(helm, "configs:\n  cm:\n    resource.customizations.health.greeter.example.com_Greeter: |\n") {
		t.Errorf("-o helm: %v\n%s", err, helm)
	}
	if _, _, err := run(t, "health-checks", dir, "-o", "table"); err == nil || err.Error() != `-o "table": use yaml (an argocd-cm patch), json or helm (argo-cd chart values)` {
		t.Errorf("-o table: got %v", err)
	}
}

func TestHealthChecksNothingToJudge(t *testing.T) {
	out, stderr, err := run(t, "health-checks", "../../examples/demo")
	if err == nil || err.Error() != "no health check to print: every kind the bundles own is listed above as skipped or cannot judge" {
		t.Errorf("got %v", err)
	}
	if out != "" {
		t.Errorf("stdout %q: want nothing", out)
	}
	if want := "cannot judge: Greeter.greeter.example.com (no status.conditions or status.phase in its schema)\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	if _, _, err := run(t, "health-checks"); err == nil {
		t.Error("no DIR: want a usage error")
	}
}

// TestHealthChecksBadInternalObjects: a CSV whose internal-objects annotation is not a JSON list
// gets one line naming the spec directory, the annotation and the fix, and nothing on stdout.
func TestHealthChecksBadInternalObjects(t *testing.T) {
	dir := demoWithStatus(t, "            properties:\n              phase: {type: string}\n")
	csv := filepath.Join(dir, "bundle", "manifests", "greeter-operator.clusterserviceversion.yaml")
	b, err := os.ReadFile(csv)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), "  annotations:\n", "  annotations:\n    operators.operatorframework.io/internal-objects: greeters.greeter.example.com\n", 1))
	if err := os.WriteFile(csv, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "health-checks", dir)
	want := dir + ": the CSV's annotation operators.operatorframework.io/internal-objects is not a JSON list of CRD names: fix the bundle's CSV"
	if err == nil || err.Error() != want || out != "" {
		t.Errorf("got %v (stdout %q), want %q", err, out, want)
	}
}

// A bundle that owns no CRD (windows-machine-config-operator) has nothing
// to check, and says so rather than pointing at an empty list above.
func TestHealthChecksNoCRDs(t *testing.T) {
	b, err := filepath.Abs("../../../shared/bundles/community-windows-machine-config-operator-8.0.0")
	if err == nil {
		_, err = os.Stat(b)
	}
	if err != nil {
		t.Skipf("../shared/bundles is absent (reference data outside the repository): %v", err)
	}
	app := t.TempDir()
	doc := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: " + b + "\n  namespace: wmco\n"
	if err := os.WriteFile(filepath.Join(app, "olm-cmp.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := run(t, "health-checks", app)
	if want := "no health check to print: the bundles own no CustomResourceDefinition"; err == nil || err.Error() != want {
		t.Errorf("want %s\ngot %v\n%s", want, err, stderr)
	}
}
