package doccmd

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// Output the docs quote must be what the binary prints: docs/http-api.md's
// Warning header is the warning a render of examples/demo with
// `exclude: [ConsoleYAMLSample]` gives, in the header's form.
func TestHTTPAPIWarningExample(t *testing.T) {
	dir := filepath.Join(root, "examples", "demo")
	f, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	req := render.Request{Spec: f.Spec, Name: f.Metadata.Name, SourceDir: dir}
	req.Spec.Exclude = []string{"ConsoleYAMLSample"}
	res, err := (&render.Renderer{}).Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(res.Warnings, func(w string) bool { return strings.HasPrefix(w, `exclude "ConsoleYAMLSample"`) })
	if i < 0 {
		t.Fatalf("no exclude warning among %q", res.Warnings)
	}
	header := `Warning: 299 - "` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(res.Warnings[i]) + `"`
	doc, err := os.ReadFile(filepath.Join(root, "docs", "http-api.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "\n"+header+"\n") {
		t.Errorf("docs/http-api.md does not show the header the binary sends:\n%s", header)
	}
}

// The sync wave docs give extra manifests is the one the binary gives: a
// custom resource in the crs wave, a ConfigMap with the operator, not "the
// last wave" for every extra manifest.
func TestExtraManifestWavesAsDocumented(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(root, "examples", "demo")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra-config\ndata: {a: b}\n"
	if err := os.WriteFile(filepath.Join(dir, "extra-config.yaml"), []byte(cm), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&render.Renderer{}).Render(context.Background(), render.Request{Spec: f.Spec, Name: f.Metadata.Name, SourceDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	wave := func(kind, name string) string {
		for _, doc := range strings.Split(string(res.YAML()), "\n---\n") {
			if strings.Contains(doc, "\nkind: "+kind+"\n") && strings.Contains(doc, "\n  name: "+name+"\n") {
				_, rest, ok := strings.Cut(doc, "argocd.argoproj.io/sync-wave: ")
				if ok {
					w, _, _ := strings.Cut(rest, "\n")
					return strings.Trim(w, `"'`)
				}
			}
		}
		t.Fatalf("no %s %s in the render", kind, name)
		return ""
	}
	if got := wave("Greeter", "from-git"); got != "0" {
		t.Errorf("the extra Greeter is in wave %s, want crs (0)", got)
	}
	if got := wave("ConfigMap", "extra-config"); got != "-2" {
		t.Errorf("the extra ConfigMap is in wave %s, want operator (-2)", got)
	}
	for _, p := range []string{"docs/spec.md", "README.md", "examples/demo/greeter-extra.yaml"} {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.ToLower(string(b)), "extra manifest, applied in\n# the last sync wave") || strings.Contains(string(b), "extra manifests go to the last wave") {
			t.Errorf("%s says every extra manifest goes to the last wave", p)
		}
	}
}
