package deploy_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/spec"
	"sigs.k8s.io/yaml"
)

var argoKind = regexp.MustCompile(`(?m)^kind:\s*(Application|ApplicationSet|AppProject)\s*$`)

var seedOperators = []string{"lws-operator", "cert-manager-operator", "sail-operator"}

// TestExamples: every seed operator directory has a valid olm-cmp.yaml (strict parse +
// validation, as the plugin does) and an Application pointing at that directory through the
// plugin; the ApplicationSet has one element per operator whose version matches the directory's.
func TestExamples(t *testing.T) {
	appSetVersions := map[string]string{}
	var as map[string]any
	b, err := os.ReadFile("../examples/applicationset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &as); err != nil {
		t.Fatal(err)
	}
	gens, _ := dig(t, as, "spec", "generators").([]any)
	if len(gens) != 1 {
		t.Fatalf("applicationset: want one list generator, got %v", gens)
	}
	for _, el := range dig(t, gens[0], "list", "elements").([]any) {
		m := el.(map[string]any)
		appSetVersions[m["name"].(string)], _ = m["version"].(string)
	}
	tmplPlugin := dig(t, as, "spec", "template", "spec", "source", "plugin").(map[string]any)

	for _, op := range seedOperators {
		t.Run(op, func(t *testing.T) {
			dir := filepath.Join("..", "examples", op)
			f, err := spec.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Spec.Validate(); err != nil {
				t.Fatalf("%s/olm-cmp.yaml: %v", dir, err)
			}
			// every other top-level YAML file is an extra manifest, rendered into the Application:
			// an Application or ApplicationSet there would overwrite itself on sync
			tops, _ := filepath.Glob(filepath.Join(dir, "*.y*ml"))
			for _, top := range tops {
				b, err := os.ReadFile(top)
				if err != nil {
					t.Fatal(err)
				}
				if argoKind.Match(b) {
					t.Errorf("%s: Argo CD objects must not sit next to olm-cmp.yaml (they would become extra manifests)", top)
				}
			}
			if f.Metadata.Name != op {
				t.Errorf("metadata.name %q, want %q", f.Metadata.Name, op)
			}
			if len(f.Spec.Examples) == 0 {
				t.Errorf("no examples: the operator's CR is part of what users need")
			}
			if v, ok := appSetVersions[op]; !ok {
				t.Errorf("applicationset has no element for %s", op)
			} else if v != f.Spec.Version {
				t.Errorf("applicationset version %q != olm-cmp.yaml version %q", v, f.Spec.Version)
			}

			var app map[string]any
			b, err := os.ReadFile(filepath.Join(dir, "argocd", "application.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal(b, &app); err != nil {
				t.Fatal(err)
			}
			if app["kind"] != "Application" || dig(t, app, "metadata", "name") != op {
				t.Errorf("application.yaml: kind %v name %v", app["kind"], dig(t, app, "metadata", "name"))
			}
			if p := dig(t, app, "spec", "source", "path"); p != "examples/"+op {
				t.Errorf("application source.path %v", p)
			}
			if ns := dig(t, app, "spec", "destination", "namespace"); ns != f.Spec.Namespace {
				t.Errorf("application destination.namespace %v != spec.namespace %s", ns, f.Spec.Namespace)
			}
			plugin := dig(t, app, "spec", "source", "plugin").(map[string]any)
			if plugin["name"] != tmplPlugin["name"] {
				t.Errorf("plugin name %v differs from the ApplicationSet's %v", plugin["name"], tmplPlugin["name"])
			}
		})
	}
	t.Run("cert-manager-operator without OpenShift stand-ins", func(t *testing.T) {
		f, err := spec.Load("../examples/cert-manager-operator")
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range f.Spec.Exclude {
			if e == "console.openshift.io/*" {
				found = true
			}
		}
		if !found {
			t.Error("cert-manager-operator must exclude console.openshift.io/*")
		}
		// cert-manager-operator 1.20 skips config.openshift.io APIs the cluster does not serve;
		// a stand-in for one of them (Infrastructure) makes it wait for another (APIServer)
		// forever, so the example ships none.
		extras, err := filepath.Glob("../examples/cert-manager-operator/*.yaml")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range extras {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), "group: config.openshift.io") {
				t.Errorf("%s defines a config.openshift.io CRD: a partial stand-in stops cert-manager-operator 1.20's controllers", p)
			}
		}
	})
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
