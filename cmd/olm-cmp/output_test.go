package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/olm-cmp/olm-cmp/internal/badinput"
	"github.com/olm-cmp/olm-cmp/internal/output"
)

// demoCopy is a copy of examples/demo the test may change.
func demoCopy(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "app")
	badinput.CopyDir(t, "../../examples/demo", dir)
	return dir
}

// yamlObjects reads a YAML stream into "Kind/name" identities, in order.
func yamlObjects(t *testing.T, stream string) []string {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(stream), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range nodes {
		ids = append(ids, n.GetKind()+"/"+n.GetName())
	}
	return ids
}

// -o json is one JSON document, a v1 List of the same objects, in the same
// order, as the YAML stream.
func TestRenderJSONList(t *testing.T) {
	yamlOut, _, err := run(t, "render", "../../examples/demo")
	if err != nil {
		t.Fatal(err)
	}
	jsonOut, _, err := run(t, "render", "../../examples/demo", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Items      []map[string]any `json:"items"`
	}
	dec := json.NewDecoder(strings.NewReader(jsonOut))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&list); err != nil {
		t.Fatalf("-o json is not one JSON document: %v", err)
	}
	if dec.More() {
		t.Error("-o json printed more than one JSON document")
	}
	if list.APIVersion != "v1" || list.Kind != "List" {
		t.Errorf("want a v1 List, got %s %s", list.APIVersion, list.Kind)
	}
	var ids []string
	for _, it := range list.Items {
		ids = append(ids, it["kind"].(string)+"/"+it["metadata"].(map[string]any)["name"].(string))
	}
	if want := yamlObjects(t, yamlOut); !slices.Equal(ids, want) {
		t.Errorf("JSON items differ from the YAML stream:\n json %v\n yaml %v", ids, want)
	}
	if _, _, err := run(t, "render", "../../examples/demo", "-o", "toml"); err == nil || err.Error() != `--output "toml": use yaml or json` {
		t.Errorf("-o toml: %v", err)
	}
}

// --output-dir writes one file per object, named by wave, kind and name,
// plus the marker; a second render replaces the directory whole; a
// directory olm-cmp did not write is refused, an empty one taken.
func TestRenderOutputDir(t *testing.T) {
	app := demoCopy(t)
	out := filepath.Join(t.TempDir(), "out")
	yamlOut, _, err := run(t, "render", app)
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := run(t, "render", app, "--output-dir", out)
	if err != nil {
		t.Fatal(err)
	}
	if stdout != "" {
		t.Errorf("--output-dir wrote to stdout: %q", stdout)
	}
	want := yamlObjects(t, yamlOut)
	if !strings.Contains(stderr, "wrote 17 objects to "+out) || len(want) != 17 {
		t.Errorf("stderr lacks the count (%d objects): %s", len(want), stderr)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	var joined strings.Builder
	for _, e := range entries {
		if e.Name() == output.Marker {
			continue
		}
		files = append(files, e.Name())
		data, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		joined.WriteString("---\n")
		joined.Write(data)
	}
	if len(files) != len(want) {
		t.Fatalf("%d files for %d objects: %v", len(files), len(want), files)
	}
	for _, f := range []string{"00-customresourcedefinition-greeters.greeter.example.com.yaml", "00-namespace-greeter-system.yaml", "02-deployment-greeter-operator-controller.yaml", "04-greeter-from-git.yaml"} {
		if !slices.Contains(files, f) {
			t.Errorf("no file %s in %v", f, files)
		}
	}
	// ls order is apply order: the files hold the stream's objects, sorted
	// by wave.
	got := yamlObjects(t, joined.String())
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Errorf("the files hold other objects than the stream:\n%v\n%v", got, want)
	}
	safe := regexp.MustCompile(`^[0-9]{2}-[a-z0-9._-]+\.yaml$`)
	for _, f := range files {
		if !safe.MatchString(f) {
			t.Errorf("file name %q is not filesystem-safe", f)
		}
	}

	// Again, into the same directory with a stale file: replaced whole.
	os.WriteFile(filepath.Join(out, "99-stale.yaml"), []byte("x: 1\n"), 0o644)
	if _, _, err := run(t, "render", app, "--output-dir", out, "-n", "other"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "99-stale.yaml")); err == nil {
		t.Error("the stale file survived: the directory was not replaced")
	}
	if _, err := os.Stat(filepath.Join(out, "00-namespace-other.yaml")); err != nil {
		t.Errorf("the second render is not there: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".out.*")); len(left) > 0 {
		t.Errorf("temporary directories left behind: %v", left)
	}

	// A failing render leaves the directory as it was.
	before, _ := os.ReadDir(out)
	if _, _, err := run(t, "render", app, "--output-dir", out, "--certificate-provider", "bogus"); err == nil {
		t.Fatal("a bad --certificate-provider rendered")
	}
	after, _ := os.ReadDir(out)
	if len(before) != len(after) {
		t.Errorf("a failed render changed the directory: %d entries, then %d", len(before), len(after))
	}

	// Not olm-cmp's: refused, untouched.
	mine := filepath.Join(t.TempDir(), "mine")
	os.Mkdir(mine, 0o755)
	os.WriteFile(filepath.Join(mine, "notes.txt"), []byte("keep me\n"), 0o644)
	_, _, err = run(t, "render", app, "--output-dir", mine)
	if err == nil || !strings.Contains(err.Error(), "--output-dir "+mine+": the directory holds files olm-cmp did not write (it has no .olm-cmp-output file)") {
		t.Errorf("a foreign directory: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(mine, "notes.txt")); string(data) != "keep me\n" {
		t.Error("the foreign directory was changed")
	}
	// A file: refused. An empty directory: taken.
	file := filepath.Join(mine, "notes.txt")
	if _, _, err := run(t, "render", app, "--output-dir", file); err == nil || !strings.Contains(err.Error(), "exists and is not a directory") {
		t.Errorf("a file as --output-dir: %v", err)
	}
	// A symbolic link to a directory: refused (the swap would replace the
	// link, not the directory), naming the directory to give instead.
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(empty0(t), link)
	if _, _, err := run(t, "render", app, "--output-dir", link); err == nil || !strings.Contains(err.Error(), "--output-dir "+link+": a symbolic link: give the directory itself") {
		t.Errorf("a symbolic link as --output-dir: %v", err)
	}
	if _, _, err := run(t, "render", app, "--output-dir", filepath.Join(mine, "no", "out")); err == nil || !strings.Contains(err.Error(), "its parent directory "+filepath.Join(mine, "no")+" does not exist: create it first") {
		t.Errorf("a missing parent: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	os.Mkdir(empty, 0o755)
	if _, _, err := run(t, "render", app, "--output-dir", empty, "-o", "json"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(empty, "02-deployment-greeter-operator-controller.json"))
	if err != nil || !json.Valid(data) {
		t.Errorf("-o json --output-dir: a .json file per object: %v %q", err, data)
	}
}

// --quiet: the requirement findings become one line per category, under
// the word inspect uses; other warnings stay. `make demo` runs exactly this
// render: its one line is the one below.
func TestRenderQuiet(t *testing.T) {
	_, loud, err := run(t, "render", "../../examples/demo")
	if err != nil {
		t.Fatal(err)
	}
	_, quiet, err := run(t, "render", "../../examples/demo", "--quiet")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(loud, "required: certificates:cert-manager.io/v1 (from ") {
		t.Errorf("render without --quiet lacks the finding: %s", loud)
	}
	want := "required: 1 certificates requirement not met: olm-cmp inspect ../../examples/demo lists them\n"
	if quiet != want {
		t.Errorf("--quiet stderr:\n got %q\nwant %q", quiet, want)
	}
}

// The severity word of a requirement finding is the same in render,
// generate and inspect: the cert-manager finding of the demo is required in
// all three; a warning-severity finding a warning.
func TestSeverityWordsAgree(t *testing.T) {
	app := demoCopy(t)
	_, renderErr, err := run(t, "render", app)
	if err != nil {
		t.Fatal(err)
	}
	inspectOut, _, err := run(t, "inspect", app)
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	if err := os.Chdir(app); err != nil {
		t.Fatal(err)
	}
	_, generateErr, err := run(t, "generate")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"certificates:cert-manager.io/v1"} {
		m := regexp.MustCompile(`(?m)^  (\S+)\s+` + regexp.QuoteMeta(key) + `$`).FindStringSubmatch(inspectOut)
		if m == nil {
			t.Fatalf("inspect does not list %s:\n%s", key, inspectOut)
		}
		line := m[1] + ": requirement " + key + " (from "
		if m[1] == "required" {
			line = "required: " + key + " (from "
		}
		if !strings.Contains(renderErr, line) {
			t.Errorf("render does not call %s %q:\n%s", key, m[1], renderErr)
		}
		if !strings.Contains(generateErr, line) {
			t.Errorf("generate does not call %s %q:\n%s", key, m[1], generateErr)
		}
	}
}

// The trap of issue 18: `render . > out.yaml` beside olm-cmp.yaml. The
// next render refuses the file, naming it and the fix; the fix works.
func TestRenderOwnOutputBesideTheSpec(t *testing.T) {
	app := demoCopy(t)
	out, _, err := run(t, "render", app)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(app, "out.yaml"), []byte(out), 0o644)
	got, _, err := run(t, "render", app)
	if err == nil || !strings.HasPrefix(err.Error(), "extra manifest out.yaml holds olm-cmp's own output (Namespace/greeter-system carries the annotation olm-cmp.dev/bundle): move the file out of the directory of olm-cmp.yaml") || got != "" {
		t.Fatalf("want the own-output refusal and no output, got %v, %d bytes", err, len(got))
	}
	spec, _ := os.ReadFile(filepath.Join(app, "olm-cmp.yaml"))
	os.WriteFile(filepath.Join(app, "olm-cmp.yaml"), append(spec, "  extraManifests: {exclude: [out.yaml]}\n"...), 0o644)
	again, stderr, err := run(t, "render", app)
	if err != nil {
		t.Fatal(err)
	}
	if again != out {
		t.Error("with out.yaml excluded the render differs from the first one")
	}
	if strings.Contains(stderr, "extraManifests") {
		t.Errorf("a glob that matched warned: %s", stderr)
	}
}

// An object the plugin's JSON keeps in YAML (an unquoted yes, which the
// repo-server's YAML 1.1 reader takes as true) is in the -o json List too,
// as the repo-server reads it (a kind whose CRD the render does not ship:
// the Greeter CRD's string field would refuse the boolean); --quiet without a spec file names what
// inspect takes instead of a directory.
func TestRenderJSONKeptYAMLAndQuietWithoutSpec(t *testing.T) {
	app := demoCopy(t)
	os.WriteFile(filepath.Join(app, "greeter-extra.yaml"), []byte("apiVersion: gadgets.example.com/v1\nkind: Gadget\nmetadata: {name: from-git}\nspec:\n  enabled: yes\n"), 0o644)
	out, _, err := run(t, "render", app, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Items []map[string]any }
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("-o json: %v", err)
	}
	found := false
	for _, it := range list.Items {
		if it["kind"] == "Gadget" && it["metadata"].(map[string]any)["name"] == "from-git" {
			found = true
			if v := it["spec"].(map[string]any)["enabled"]; v != true {
				t.Errorf("spec.enabled: %#v, want true as the repo-server reads yes", v)
			}
		}
	}
	if !found {
		t.Error("the kept-YAML object is missing from the List")
	}
	bundleDir := filepath.Join(app, "bundle")
	_, stderr, err := run(t, "render", "--bundle", bundleDir, "-n", "x", "--quiet")
	if err != nil {
		t.Fatal(err)
	}
	if want := "required: 1 certificates requirement not met: olm-cmp inspect " + bundleDir + " lists them\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
}

// empty0 is a new empty directory.
func empty0(t *testing.T) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "d")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// A run that succeeds prints no line that starts with "error" (in any
// case, after indentation or a diff's +/- mark): a user who sees `error:`
// on a success learns to ignore it. The demo has a requirement finding
// (cert-manager) and a warning-free render; each successful path is run:
// render (as `make demo` runs it, and loud, -o json), generate, inspect
// (text and JSON, of the spec and of the bundle directory), diff (text,
// markdown, JSON; status 1, changes). The findings' word is "required".
func TestSuccessSaysNoError(t *testing.T) {
	app := demoCopy(t)
	bumped := filepath.Join(t.TempDir(), "bumped")
	badinput.CopyDir(t, filepath.Join(app, "bundle"), bumped)
	csvPath := filepath.Join(bumped, "manifests", "greeter-operator.clusterserviceversion.yaml")
	csv, _ := os.ReadFile(csvPath)
	os.WriteFile(csvPath, bytes.ReplaceAll(csv, []byte("greeter-operator:v0.2.0"), []byte("greeter-operator:v0.2.1")), 0o644)
	// A finding the bump adds, for diff's requirements section: an
	// extra manifest of an API the cluster does not serve.
	withMonitor := demoCopy(t)
	os.WriteFile(filepath.Join(withMonitor, "monitor.yaml"), []byte("apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: greeter}\nspec: {endpoints: [{port: metrics}], selector: {}}\n"), 0o644)

	cases := []struct {
		name string
		args []string
		code int
	}{
		{"make demo", []string{"render", "--quiet", "../../examples/demo"}, 0},
		{"render", []string{"render", app}, 0},
		{"render -o json", []string{"render", app, "-o", "json"}, 0},
		{"render --output-dir", []string{"render", app, "--output-dir", filepath.Join(t.TempDir(), "out")}, 0},
		{"render a bundle directory", []string{"render", "--bundle", filepath.Join(app, "bundle"), "-n", "x"}, 0},
		{"inspect", []string{"inspect", app}, 0},
		{"inspect -o json", []string{"inspect", app, "-o", "json"}, 0},
		{"inspect a bundle directory", []string{"inspect", filepath.Join(app, "bundle")}, 0},
		{"diff", []string{"diff", app, "--to-bundle", bumped}, diffChanges},
		{"diff -o markdown", []string{"diff", app, "--to-bundle", bumped, "-o", "markdown"}, diffChanges},
		{"diff -o json", []string{"diff", app, "--to-bundle", bumped, "-o", "json"}, diffChanges},
		{"diff adding a requirement", []string{"diff", app, withMonitor}, diffChanges},
		{"diff adding a requirement -o json", []string{"diff", app, withMonitor, "-o", "json"}, diffChanges},
	}
	required := false
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := runStatus(t, tc.args...)
			if code != tc.code {
				t.Fatalf("status %d, want %d:\n%s", code, tc.code, stderr)
			}
			for name, text := range map[string]string{"stdout": out, "stderr": stderr} {
				if line := errorLine(text); line != "" {
					t.Errorf("%s has a line that starts with error: %q", name, line)
				}
			}
			required = required || strings.Contains(out+stderr, "required")
		})
	}
	if !required {
		t.Error("no path said required: the demo's cert-manager finding is gone, and the test checks nothing")
	}

	// generate: Argo CD's cmp-server runs it in the application directory.
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	if err := os.Chdir(app); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runStatus(t, "generate")
	if code != 0 || out == "" {
		t.Fatalf("generate: status %d, %d bytes:\n%s", code, len(out), stderr)
	}
	if line := errorLine(stderr); line != "" || !strings.Contains(stderr, "required: certificates:cert-manager.io/v1 (from ") {
		t.Errorf("generate stderr: %q", stderr)
	}

	// Under strict, the same finding fails the run: then error is right.
	_, stderr, code = runStatus(t, "render", app, "--strict")
	if code != 1 || !strings.HasPrefix(stderr, "error: strict: 1 requirement(s) not met") {
		t.Errorf("render --strict: status %d, stderr %q", code, stderr)
	}
}

// errorLine is the first line of text that starts with "error" in any case,
// after indentation, a diff mark (+, -, ~, |) or a JSON quote; "" if none.
func errorLine(text string) string {
	for _, line := range strings.Split(text, "\n") {
		l := strings.ToLower(strings.TrimLeft(line, " \t+-~|\"*#"))
		if strings.HasPrefix(l, "error") {
			return line
		}
	}
	return ""
}
