package render

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// extraDir is a copy of the demo with these extra files beside the spec.
func extraDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	copyTree(t, demoDir, dir)
	for n, body := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func configMap(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\ndata: {a: b}\n"
}

// extraNames are the "Kind/name" of a result's objects that came from
// the files of extraDir: ConfigMaps other than the settle hook, and the
// demo's own extra manifest, Greeter/from-git.
func extraNames(t *testing.T, res *Result) []string {
	var out []string
	for _, js := range res.JSON {
		var o struct {
			Kind     string
			Metadata struct{ Name string }
		}
		if err := json.Unmarshal([]byte(js), &o); err != nil {
			t.Fatal(err)
		}
		if o.Kind == "ConfigMap" && !strings.HasSuffix(o.Metadata.Name, "-sync-settled") || o.Kind == "Greeter" && o.Metadata.Name == "from-git" {
			out = append(out, o.Kind+"/"+o.Metadata.Name)
		}
	}
	slices.Sort(out)
	return out
}

// spec.extraManifests: include keeps the files its globs match, exclude
// drops the files its globs match; unset, every YAML/JSON file joins. A
// glob matching no file is a warning, an error under strict.
func TestExtraManifestsSelection(t *testing.T) {
	files := map[string]string{"a-cr.yaml": configMap("a"), "b-cr.yml": configMap("b"), "values.yaml": configMap("values")}
	for _, c := range []struct {
		name     string
		em       *spec.ExtraManifests
		want     []string
		warnings []string
	}{
		{name: "default", want: []string{"ConfigMap/a", "ConfigMap/b", "ConfigMap/values", "Greeter/from-git"}},
		{name: "include", em: &spec.ExtraManifests{Include: []string{"*-cr.y*ml"}}, want: []string{"ConfigMap/a", "ConfigMap/b"}},
		{name: "exclude", em: &spec.ExtraManifests{Exclude: []string{"values.yaml", "greeter-*"}}, want: []string{"ConfigMap/a", "ConfigMap/b"}},
		{name: "include and exclude", em: &spec.ExtraManifests{Include: []string{"*.yaml"}, Exclude: []string{"values.yaml"}}, want: []string{"ConfigMap/a", "Greeter/from-git"}},
		{name: "nothing", em: &spec.ExtraManifests{Exclude: []string{"*"}}, want: nil},
		{name: "unmatched", em: &spec.ExtraManifests{Include: []string{"a-cr.yaml", "crs.yaml"}, Exclude: []string{"out.yaml"}}, want: []string{"ConfigMap/a"},
			warnings: []string{
				`spec.extraManifests.include "crs.yaml" matches no *.yaml, *.yml or *.json file beside olm-cmp.yaml (there are a-cr.yaml, b-cr.yml, greeter-extra.yaml, values.yaml): correct or remove it`,
				`spec.extraManifests.exclude "out.yaml" matches no *.yaml, *.yml or *.json file beside olm-cmp.yaml (there are a-cr.yaml, b-cr.yml, greeter-extra.yaml, values.yaml): correct or remove it`,
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := demoRequest(t)
			req.SourceDir = extraDir(t, files)
			req.Spec.ExtraManifests = c.em
			res := mustRender(t, req)
			if got := extraNames(t, res); !slices.Equal(got, c.want) {
				t.Errorf("extra manifests: got %v, want %v", got, c.want)
			}
			for _, w := range c.warnings {
				if !slices.Contains(res.Warnings, w) {
					t.Errorf("no warning %q in %q", w, res.Warnings)
				}
			}
			if len(c.warnings) == 0 && slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "extraManifests") }) {
				t.Errorf("a glob that matched warned: %q", res.Warnings)
			}
			if len(c.warnings) > 0 {
				req.Spec.Strict = true
				_, err := (&Renderer{}).Render(context.Background(), req)
				if err == nil || !strings.Contains(err.Error(), "strict: "+c.warnings[0]) {
					t.Errorf("strict: want the unmatched glob as an error, got %v", err)
				}
			}
		})
	}
	// Without a source directory the field selects nothing: said so.
	req := demoRequest(t)
	abs, err := filepath.Abs(filepath.Join(demoDir, "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	req.SourceDir, req.Spec.Bundle = "", abs
	req.Spec.ExtraManifests = &spec.ExtraManifests{Include: []string{"x.yaml"}}
	res := mustRender(t, req)
	if !slices.ContainsFunc(res.Warnings, func(w string) bool {
		return strings.HasPrefix(w, "spec.extraManifests selects nothing: there is no source directory")
	}) {
		t.Errorf("no warning about a field with nothing to select: %q", res.Warnings)
	}
}

// Extra manifests that repeat an object: the error names the file(s) the
// copies came from and the fix that fits.
func TestRenderedTwiceNamesTheFile(t *testing.T) {
	sa := "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: greeter-operator, namespace: greeter-system}\n"
	for _, c := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"bundle and a file", map[string]string{"sa.yaml": sa},
			"ServiceAccount. greeter-system/greeter-operator is rendered twice: from the bundle and from the extra manifest sa.yaml: remove it from sa.yaml, or leave the file out with spec.extraManifests: {exclude: [sa.yaml]}"},
		{"two files", map[string]string{"a.yaml": configMap("dup"), "b.json": `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"}}`},
			"ConfigMap. dup is rendered twice: the extra manifests a.yaml and b.json hold it: remove it from all but one"},
		{"one file twice", map[string]string{"a.yaml": configMap("dup") + "---\n" + configMap("dup")},
			"ConfigMap. dup is rendered twice: the extra manifest a.yaml holds it twice: remove one copy"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := demoRequest(t)
			req.SourceDir = extraDir(t, c.files)
			_, err := (&Renderer{}).Render(context.Background(), req)
			if err == nil || err.Error() != c.want {
				t.Errorf("got  %v\nwant %s", err, c.want)
			}
		})
	}
}

// A file holding olm-cmp's output (any olm-cmp.dev/ annotation) is
// refused, naming the file, the object and the fix; excluded, it is not read.
func TestOwnOutputRefused(t *testing.T) {
	own := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations: {olm-cmp.dev/source: ./bundle, olm-cmp.dev/digest: sha256:00}\n"
	req := demoRequest(t)
	req.SourceDir = extraDir(t, map[string]string{"z-out.yaml": own})
	_, err := (&Renderer{}).Render(context.Background(), req)
	want := "extra manifest z-out.yaml holds olm-cmp's own output (ConfigMap/c carries the annotation olm-cmp.dev/digest): move the file out of the directory of olm-cmp.yaml (render --output-dir writes elsewhere), or leave it out with spec.extraManifests: {exclude: [z-out.yaml]}, or list the extra manifests you want with spec.extraManifests: {include: [...]}"
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
	req.Spec.ExtraManifests = &spec.ExtraManifests{Exclude: []string{"*-out.yaml"}}
	mustRender(t, req)
}

// An example an extra manifest repeats, or a bundle object an example
// repeats: the error says which two sources hold the copies.
func TestRenderedTwiceExample(t *testing.T) {
	req := demoRequest(t)
	req.SourceDir = extraDir(t, map[string]string{"hello.yaml": "apiVersion: greeter.example.com/v1alpha1\nkind: Greeter\nmetadata: {name: hello, namespace: greeter-system}\n"})
	_, err := (&Renderer{}).Render(context.Background(), req)
	want := "Greeter.greeter.example.com greeter-system/hello is rendered twice: from spec.examples and from the extra manifest hello.yaml: remove it from hello.yaml, or leave the file out with spec.extraManifests: {exclude: [hello.yaml]}"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// Another tool's YAML beside the spec (a kustomization.yaml, a Helm values
// file) is no manifest: the error says how to leave the file out.
func TestOtherToolsYAMLNamesTheFix(t *testing.T) {
	for name, body := range map[string]string{
		"kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [x.yaml]\n",
		"values.yaml":        "replicaCount: 2\n",
	} {
		req := demoRequest(t)
		req.SourceDir = extraDir(t, map[string]string{name: body})
		_, err := (&Renderer{}).Render(context.Background(), req)
		fix := ": if it is not meant as a manifest (another tool's file), leave it out with spec.extraManifests: {exclude: [" + name + "]}"
		if err == nil || !strings.HasPrefix(err.Error(), "extra manifest "+name+": document 1 ") || !strings.HasSuffix(err.Error(), fix) {
			t.Errorf("%s: got %v, want the fix%s", name, err, fix)
		}
		req.Spec.ExtraManifests = &spec.ExtraManifests{Exclude: []string{name}}
		mustRender(t, req)
	}
}

// An Argo CD Application among the extra manifests is rendered (an
// app-of-apps may mean it) with a warning naming the file and the exclude
// that leaves it out: most often it is the operator's own Application.
func TestArgoApplicationWarns(t *testing.T) {
	req := demoRequest(t)
	req.SourceDir = extraDir(t, map[string]string{"application.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: demo, namespace: argocd}\nspec: {project: default}\n"})
	res := mustRender(t, req)
	want := "extra manifest application.yaml holds an Argo CD Application (demo): the Application rendering this directory will create it; if it is this operator's own Application, leave the file out with spec.extraManifests: {exclude: [application.yaml]}"
	if !slices.Contains(res.Warnings, want) {
		t.Errorf("warnings %q lack %q", res.Warnings, want)
	}
	req.Spec.ExtraManifests = &spec.ExtraManifests{Exclude: []string{"application.yaml"}}
	if res := mustRender(t, req); slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "Argo CD Application") }) {
		t.Errorf("excluded, still warned: %q", res.Warnings)
	}
}

// TestSecondSpecRefused: a second olm-cmp spec beside olm-cmp.yaml (a
// copy, another application's) is no object for the cluster: it was
// rendered, and reported as an unserved olm-cmp.dev API to install.
func TestSecondSpecRefused(t *testing.T) {
	req := demoRequest(t)
	req.SourceDir = extraDir(t, map[string]string{"old.yaml": "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: greeter}\nspec: {bundle: ./bundle}\n"})
	_, err := (&Renderer{}).Render(context.Background(), req)
	want := `extra manifest old.yaml holds an olm-cmp spec (OperatorBundle "greeter"), not an object for the cluster: olm-cmp renders olm-cmp.yaml only; move the file to a directory of its own (an application of its own), or leave it out with spec.extraManifests: {exclude: [old.yaml]}`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	req.Spec.ExtraManifests = &spec.ExtraManifests{Exclude: []string{"old.yaml"}}
	mustRender(t, req)
}
