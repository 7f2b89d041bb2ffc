package deploy_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/internal/cmpserver"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// TestPluginDocSaysWherePluginYAMLIs: docs/plugin.md's path of plugin.yaml is
// the one the Dockerfile copies it to and serve reads by default; the native
// component mounts nothing there (the image's copy is read), the classic
// one mounts its ConfigMap there.
func TestPluginDocSaysWherePluginYAMLIs(t *testing.T) {
	doc := readText(t, "../docs/plugin.md")
	if !strings.Contains(doc, "image holds it at `"+cmpserver.DefaultConfigPath+"`") {
		t.Errorf("docs/plugin.md does not say the image holds plugin.yaml at %s", cmpserver.DefaultConfigPath)
	}
	if df := readText(t, "../Dockerfile"); !regexp.MustCompile(`(?m)^COPY plugin\.yaml ` + regexp.QuoteMeta(cmpserver.DefaultConfigPath) + `$`).MatchString(df) {
		t.Errorf("the Dockerfile does not copy plugin.yaml to %s", cmpserver.DefaultConfigPath)
	}
	native := readText(t, "kustomize/components/olm-cmp/repo-server-sidecar.yaml")
	if strings.Contains(native, "cmp-server/config") {
		t.Error("the native component mounts something at cmp-server/config: docs/plugin.md says it reads the image's plugin.yaml")
	}
	classic := readText(t, "kustomize/components/olm-cmp-classic/repo-server-sidecar.yaml")
	if !strings.Contains(classic, "mountPath: "+cmpserver.DefaultConfigPath+"\n") {
		t.Errorf("the classic component does not mount its plugin.yaml at %s", cmpserver.DefaultConfigPath)
	}
}

// TestPluginDocApplication: docs/plugin.md's Application names the plugin
// as plugin.yaml announces it and a path, and its parameters are spec fields.
func TestPluginDocApplication(t *testing.T) {
	doc := readText(t, "../docs/plugin.md")
	var app struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Spec       struct {
			Source struct {
				Path   string `json:"path"`
				Plugin struct {
					Name       string `json:"name"`
					Parameters []struct {
						Name string `json:"name"`
					} `json:"parameters"`
				} `json:"plugin"`
			} `json:"source"`
		} `json:"spec"`
	}
	found := false
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(doc, -1) {
		if !strings.Contains(m[1], "kind: Application\n") {
			continue
		}
		found = true
		if err := yaml.Unmarshal([]byte(m[1]), &app); err != nil {
			t.Fatalf("docs/plugin.md's Application does not parse: %v", err)
		}
		break
	}
	var plugin struct {
		Metadata struct{ Name string }    `json:"metadata"`
		Spec     struct{ Version string } `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(readText(t, "../plugin.yaml")), &plugin); err != nil {
		t.Fatal(err)
	}
	want := plugin.Metadata.Name + "-" + plugin.Spec.Version
	src := app.Spec.Source
	if !found || app.APIVersion != "argoproj.io/v1alpha1" || src.Path == "" || src.Plugin.Name != want {
		t.Fatalf("docs/plugin.md's Application: found %v, %+v; want plugin %s and a path", found, app, want)
	}
	for _, p := range src.Plugin.Parameters {
		if _, ok := spec.FindParam(p.Name); !ok {
			t.Errorf("docs/plugin.md's Application sets the parameter %q, which is no spec field", p.Name)
		}
	}
}

func readText(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
