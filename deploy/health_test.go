package deploy_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The health checks' source of truth is deploy/argocd/health/<group>_<Kind>.lua (with the shared
// _<family>.lua parts they include). Everything
// below is generated from those files and must match them byte for byte; after editing a
// script run
//
//	go test ./deploy -run TestHealthCustomizations -update
var update = flag.Bool("update", false, "rewrite the files generated from deploy/argocd/health/*.lua")

const (
	healthDir = "argocd/health"
	// healthKeyPrefix is Argo CD's per-kind argocd-cm key: resource.customizations.health.<group>_<Kind>
	// (util/settings splits the last part at "_" into group and kind).
	healthKeyPrefix = "resource.customizations.health."
	// helmMarker starts the generated part of helm/values.yaml; everything after it is generated.
	helmMarker = "# ---- generated from deploy/argocd/health/*.lua by `go test ./deploy -run TestHealthCustomizations -update`: do not edit below ----\n"
)

// The argocd-cm patch exists three times: kustomize refuses files outside a kustomization's own
// directory (a remote component is fetched on its own), so each component carries a copy.
var cmPatchCopies = []string{
	"argocd/resource-customizations.yaml",
	"kustomize/components/olm-cmp/argocd-cm-health.yaml",
	"kustomize/components/olm-cmp-classic/argocd-cm-health.yaml",
}

type healthScript struct {
	file string // <group>_<Kind>.lua
	key  string // argocd-cm data key
	lua  string
}

// includeLine puts a shared part (_<family>.lua beside the scripts) in place: Argo CD runs each
// argocd-cm script on its own, with nothing to load, so what checks of one operator family share
// is written once and copied into each script here.
var includeLine = regexp.MustCompile(`(?m)^-- #include (_[a-z]+\.lua)\n`)

// expandIncludes replaces each include line of a script with the named file (one level: a
// shared part includes nothing).
func expandIncludes(t *testing.T, file, s string) string {
	t.Helper()
	return includeLine.ReplaceAllStringFunc(s, func(line string) string {
		name := includeLine.FindStringSubmatch(line)[1]
		b, err := os.ReadFile(filepath.Join(healthDir, name))
		if err != nil {
			t.Errorf("%s: %v", file, err)
			return line
		}
		if includeLine.Match(b) {
			t.Errorf("%s: a shared part must not include another", name)
		}
		return string(b)
	})
}

// healthScripts reads deploy/argocd/health/*.lua (not the shared _*.lua parts), sorted by name,
// with their includes in place, and checks each can be inlined as a YAML literal block that
// reads back as the identical string.
func healthScripts(t *testing.T) []healthScript {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(healthDir, "*.lua"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no %s/*.lua", healthDir)
	}
	sort.Strings(files)
	var out []healthScript
	for _, f := range files {
		base := strings.TrimSuffix(filepath.Base(f), ".lua")
		if strings.HasPrefix(base, "_") { // a shared part, included by the scripts
			continue
		}
		group, kind, ok := strings.Cut(base, "_")
		if !ok || group == "" || kind == "" || strings.Contains(kind, "_") || !strings.Contains(group, ".") {
			t.Errorf("%s: want <group>_<Kind>.lua with a dotted API group", f)
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := expandIncludes(t, f, string(b))
		// A literal block keeps every line as is and, with default chomping, exactly one final
		// newline; a leading space would need an indentation indicator; tabs and CRs do not
		// survive every YAML reader.
		switch {
		case !strings.HasSuffix(s, "\n") || strings.HasSuffix(s, "\n\n"):
			t.Errorf("%s: must end with exactly one newline", f)
		case strings.HasPrefix(s, " ") || strings.HasPrefix(s, "\n"):
			t.Errorf("%s: must not start with a space or an empty line", f)
		case strings.ContainsAny(s, "\t\r"):
			t.Errorf("%s: no tabs or carriage returns", f)
		}
		out = append(out, healthScript{file: f, key: healthKeyPrefix + base, lua: s})
	}
	return out
}

func indent(s, prefix string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if strings.TrimSpace(line) != "" {
			b.WriteString(prefix)
		}
		b.WriteString(line)
	}
	return b.String()
}

// renderCMPatch is deploy/argocd/resource-customizations.yaml (and its component copies).
func renderCMPatch(scripts []healthScript) []byte {
	var b bytes.Buffer
	b.WriteString(`# Argo CD health checks for the custom resources of olm-cmp's seed operators (docs/plugin.md,
# "Health checks"): a patch of argocd-cm, one resource.customizations.health.<group>_<Kind> key
# per kind. GENERATED from deploy/argocd/health/*.lua: edit those, then run
#   go test ./deploy -run TestHealthCustomizations -update
# The kustomize components carry identical copies (argocd-cm-health.yaml). By hand:
#   kubectl -n argocd patch configmap argocd-cm --type merge --patch-file resource-customizations.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
data:
`)
	for _, s := range scripts {
		b.WriteString("  " + s.key + ": |\n")
		b.WriteString(indent(s.lua, "    "))
	}
	return b.Bytes()
}

// renderHelmTail is the generated end of helm/values.yaml: the argo-cd chart copies configs.cm
// into argocd-cm's data.
func renderHelmTail(scripts []healthScript) []byte {
	var b bytes.Buffer
	b.WriteString(helmMarker)
	b.WriteString("# Health checks for the seed operators' custom resources (docs/plugin.md, \"Health checks\").\n")
	b.WriteString("configs:\n  cm:\n")
	for _, s := range scripts {
		b.WriteString("    " + s.key + ": |\n")
		b.WriteString(indent(s.lua, "      "))
	}
	return b.Bytes()
}

// helmValues splits helm/values.yaml at the marker; with -update the generated tail is rewritten.
func helmValues(t *testing.T, tail []byte) (head, gotTail []byte) {
	t.Helper()
	const path = "helm/values.yaml"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte(helmMarker))
	if i < 0 {
		if !*update {
			t.Fatalf("%s: no generated section (run with -update)", path)
		}
		i = len(b)
		if i > 0 && b[i-1] != '\n' {
			b = append(b, '\n')
			i++
		}
	}
	head, gotTail = b[:i], b[i:]
	if *update {
		if err := os.WriteFile(path, append(append([]byte{}, head...), tail...), 0o644); err != nil {
			t.Fatal(err)
		}
		gotTail = tail
	}
	return head, gotTail
}

func wantData(scripts []healthScript) map[string]string {
	m := map[string]string{}
	for _, s := range scripts {
		m[s.key] = s.lua
	}
	return m
}

// TestHealthCustomizations: the argocd-cm patch, its kustomize copies and the Helm values are
// exactly what deploy/argocd/health/*.lua generate, and read back (as YAML) as those scripts.
func TestHealthCustomizations(t *testing.T) {
	scripts := healthScripts(t)
	want := wantData(scripts)
	patch := renderCMPatch(scripts)
	for _, p := range cmPatchCopies {
		if *update {
			if err := os.WriteFile(p, patch, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, patch) {
			t.Errorf("%s is stale: run go test ./deploy -run TestHealthCustomizations -update", p)
			continue
		}
		// not only the same bytes as the generator's: YAML must read the scripts back intact
		var cm struct {
			Kind     string
			Metadata struct{ Name string }
			Data     map[string]string
		}
		if err := yaml.Unmarshal(got, &cm); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if cm.Kind != "ConfigMap" || cm.Metadata.Name != "argocd-cm" {
			t.Errorf("%s: %s/%s, want ConfigMap/argocd-cm", p, cm.Kind, cm.Metadata.Name)
		}
		if !reflect.DeepEqual(cm.Data, want) {
			t.Errorf("%s: data does not read back as the .lua files", p)
		}
	}

	tail := renderHelmTail(scripts)
	_, gotTail := helmValues(t, tail)
	if !bytes.Equal(gotTail, tail) {
		t.Errorf("helm/values.yaml: the generated section is stale: run go test ./deploy -run TestHealthCustomizations -update")
	}
	b, err := os.ReadFile("helm/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var values struct {
		Configs struct {
			CM map[string]any `json:"cm"`
		} `json:"configs"`
	}
	if err := yaml.Unmarshal(b, &values); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for k, v := range values.Configs.CM {
		if strings.HasPrefix(k, healthKeyPrefix) {
			got[k], _ = v.(string)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("helm/values.yaml configs.cm health keys do not read back as the .lua files")
	}
}

// TestHealthKustomize: installing either component puts every health check into argocd-cm.
func TestHealthKustomize(t *testing.T) {
	want := wantData(healthScripts(t))
	for _, example := range []string{"argocd", "argocd-classic"} {
		t.Run(example, func(t *testing.T) {
			var data map[string]string
			for _, r := range renderExample(t, example).Resources() {
				if r.GetKind() != "ConfigMap" || r.GetName() != "argocd-cm" {
					continue
				}
				if ns := r.GetNamespace(); ns != "argocd" {
					t.Errorf("argocd-cm namespace %q, want argocd", ns)
				}
				if l := r.GetLabels()["app.kubernetes.io/part-of"]; l != "argocd" {
					t.Errorf("argocd-cm lost its part-of label (Argo CD ignores it without): %v", r.GetLabels())
				}
				data = r.GetDataMap()
			}
			if data == nil {
				t.Fatal("no ConfigMap/argocd-cm in the output")
			}
			if !reflect.DeepEqual(data, want) {
				var keys []string
				for k := range data {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				t.Errorf("argocd-cm data keys %v: want exactly the health checks of %s, script for script", keys, healthDir)
			}
		})
	}
}

// TestHealthSamples: every script has status samples and every sample directory a script; each
// sample is a <group>/<Kind> object; healthy.yaml and progressing.yaml exist in each (the e2e
// suite writes them as the operators' status, test/e2e/argosync_test.go).
func TestHealthSamples(t *testing.T) {
	scripts := map[string]bool{}
	for _, s := range healthScripts(t) {
		scripts[strings.TrimSuffix(filepath.Base(s.file), ".lua")] = true
	}
	dirs, err := os.ReadDir(filepath.Join(healthDir, "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, d := range dirs {
		name := d.Name()
		if !d.IsDir() || !scripts[name] {
			t.Errorf("testdata/%s: no %s.lua for it", name, name)
			continue
		}
		seen[name] = true
		group, kind, _ := strings.Cut(name, "_")
		files, _ := filepath.Glob(filepath.Join(healthDir, "testdata", name, "*.yaml"))
		have := map[string]bool{}
		for _, f := range files {
			have[filepath.Base(f)] = true
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var obj struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name       string `json:"name"`
					Generation int64  `json:"generation"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal(b, &obj); err != nil {
				t.Errorf("%s: %v", f, err)
			}
			g, _, _ := strings.Cut(obj.APIVersion, "/")
			if g != group || obj.Kind != kind || obj.Metadata.Name == "" || obj.Metadata.Generation < 1 {
				t.Errorf("%s: %s %s %q generation %d, want a %s/%s with a name and a generation", f, obj.APIVersion, obj.Kind, obj.Metadata.Name, obj.Metadata.Generation, group, kind)
			}
		}
		for _, must := range []string{"healthy.yaml", "progressing.yaml", "no-status.yaml"} {
			if !have[must] {
				t.Errorf("testdata/%s: no %s", name, must)
			}
		}
	}
	for s := range scripts {
		if !seen[s] {
			t.Errorf("%s.lua: no testdata/%s samples", s, s)
		}
	}
}
