package bundle

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// sharedDir returns the reference data directory, or skips: it is not part
// of a fresh clone.
func sharedDir(tb testing.TB) string {
	tb.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "shared"))
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bundles")); err != nil {
		tb.Skipf("reference data not found at %s (only present in the project workspace): %v", dir, err)
	}
	return dir
}

func mustString(t *testing.T, o Object) string {
	t.Helper()
	s, err := o.String()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLoadDirGood(t *testing.T) {
	b, err := LoadDir("testdata/good")
	if err != nil {
		t.Fatal(err)
	}
	if b.Package != "widget-operator" {
		t.Errorf("Package = %q", b.Package)
	}
	if got := b.Annotations["operators.operatorframework.io.bundle.channel.default.v1"]; got != "1.0" {
		t.Errorf("channel.default annotation = %q, want the value as written, 1.0", got)
	}
	if b.CSV == nil || b.CSV.Name != "widget-operator.v1.0.0" || b.CSV.Spec.Version.String() != "1.0.0" {
		t.Fatalf("CSV not decoded: %+v", b.CSV)
	}
	if b.CSVFile != "manifests/widget-operator.clusterserviceversion.yaml" {
		t.Errorf("CSVFile = %q", b.CSVFile)
	}
	if n := len(b.CSV.Spec.InstallStrategy.StrategySpec.DeploymentSpecs); n != 1 {
		t.Errorf("CSV has %d deployments, want 1", n)
	}

	if len(b.Properties) != 2 || b.Properties[1].Type != "example.com/feature" || string(b.Properties[1].Value) != `{"enabled":true}` {
		t.Errorf("Properties = %s", jsonOf(t, b.Properties))
	}
	if len(b.Dependencies) != 1 || b.Dependencies[0].Type != "olm.package" {
		t.Errorf("Dependencies = %s", jsonOf(t, b.Dependencies))
	}
	// OLM appends metadata/properties.yaml after the CSV's own properties.
	wantProps := `[{"type":"olm.maxOpenShiftVersion","value":"4.19"},{"type":"olm.maxOpenShiftVersion","value":"4.20"},{"type":"example.com/feature","value":{"enabled":true}}]`
	if got := b.CSV.Annotations[PropertiesAnnotation]; got != wantProps {
		t.Errorf("olm.properties =\n%s\nwant\n%s", got, wantProps)
	}

	type id struct{ file, kind, name string }
	var got []id
	for _, o := range b.Others {
		got = append(got, id{o.File, o.GetKind(), o.GetName()})
	}
	want := []id{
		{"manifests/config.json", "ConfigMap", "widget-config"},
		{"manifests/config.json", "Secret", "widget-token"},
		{"manifests/multi.yaml", "ServiceAccount", "widget-extra"},
		{"manifests/multi.yaml", "Service", "widget-metrics"},
		{"manifests/rbac-list.yaml", "ClusterRole", "widget-viewer"},
		{"manifests/rbac-list.yaml", "ClusterRole", "widget-editor"},
	}
	if jsonOf(t, got) != jsonOf(t, want) {
		t.Errorf("Others =\n%v\nwant\n%v", got, want)
	}

	if len(b.CRDs) != 1 || b.CRDs[0].GetName() != "widgets.example.com" || b.CRDs[0].File != "manifests/widgets.crd.yaml" {
		t.Fatalf("CRDs = %v", b.CRDs)
	}
	crd := mustString(t, b.CRDs[0])
	for _, s := range []string{"status: {}", "- =\n", "- =~\n", "'!='"} {
		if !strings.Contains(crd, s) {
			t.Errorf("CRD lost %q when serialized:\n%s", s, crd)
		}
	}

	// Objects from JSON serialize as ordinary block YAML, key order kept,
	// strings that look like other types still quoted, `{}` kept.
	wantCM := `apiVersion: v1
kind: ConfigMap
metadata:
  name: widget-config
  labels: {}
data:
  enabled: "true"
  ratio: "1.0"
`
	if cm := mustString(t, b.Others[0]); cm != wantCM {
		t.Errorf("ConfigMap from JSON serialized as\n%s\nwant\n%s", cm, wantCM)
	}

	// The reader must not leave kio bookkeeping annotations on objects.
	for _, o := range append(append([]Object{}, b.Others...), b.CRDs...) {
		if s := mustString(t, o); strings.Contains(s, "config.kubernetes.io") {
			t.Errorf("%s %s carries reader annotations:\n%s", o.File, o.GetName(), s)
		}
	}

	abs, _ := filepath.Abs("testdata/good")
	if b.Origin.Dir != abs || b.Origin.Ref != "testdata/good" || b.Origin.Image != "" {
		t.Errorf("Origin = %+v", b.Origin)
	}
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(b.Origin.Digest) {
		t.Errorf("Origin.Digest = %q", b.Origin.Digest)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// copyDir copies a fixture so a test can change it.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestDirDigest(t *testing.T) {
	dir := copyDir(t, "testdata/good")
	load := func() string {
		t.Helper()
		b, err := LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		return b.Origin.Digest
	}
	d1 := load()
	if d2 := load(); d2 != d1 {
		t.Fatalf("digest not stable: %s then %s", d1, d2)
	}
	// A file that is not part of the bundle does not change it.
	if err := os.WriteFile(filepath.Join(dir, "manifests", ".notes"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := load(); d != d1 {
		t.Errorf("hidden file changed the digest")
	}
	// A bundle file does, metadata included.
	for _, f := range []string{"manifests/multi.yaml", "metadata/dependencies.yaml"} {
		p := filepath.Join(dir, f)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, append(data, "# edit\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
		d := load()
		if d == d1 {
			t.Errorf("editing %s did not change the digest", f)
		}
		d1 = d
	}
	// Renaming a file moves content between paths: a different bundle.
	if err := os.Rename(filepath.Join(dir, "manifests", "multi.yaml"), filepath.Join(dir, "manifests", "multi2.yaml")); err != nil {
		t.Fatal(err)
	}
	if d := load(); d == d1 {
		t.Errorf("renaming a file did not change the digest")
	}
}

func TestLoadDirErrors(t *testing.T) {
	for dir, wants := range map[string][]string{
		"testdata/subdir":         {"manifests/extra", "subdirectories are not allowed"},
		"testdata/no-csv":         {"no ClusterServiceVersion"},
		"testdata/two-csvs":       {"exactly one ClusterServiceVersion", "manifests/a.clusterserviceversion.yaml", "manifests/b.clusterserviceversion.yaml"},
		"testdata/no-annotations": {"metadata/annotations.yaml not found"},
		"testdata/missing-kind":   {"manifests/objects.yaml", "document 2", "no kind"},
		"testdata/v1beta1-crd":    {"manifests/gadgets.crd.yaml", "gadgets.example.com", "v1beta1"},
		"testdata/does-not-exist": {"testdata/does-not-exist"},
	} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			b, err := LoadDir(dir)
			if err == nil {
				t.Fatalf("loaded %s without error: %+v", dir, b)
			}
			for _, w := range wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q does not name the bundle directory", err)
			}
		})
	}
}

const (
	testAnnotations = "annotations:\n  operators.operatorframework.io.bundle.package.v1: tiny\n"
	testCSV         = "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: tiny.v0.1.0\nspec:\n  version: 0.1.0\n"
)

// fsWith is a minimal valid bundle plus the given files.
func fsWith(files map[string]string) fstest.MapFS {
	m := fstest.MapFS{
		"metadata/annotations.yaml":                 {Data: []byte(testAnnotations)},
		"manifests/tiny.clusterserviceversion.yaml": {Data: []byte(testCSV)},
	}
	for name, data := range files {
		if data == "<delete>" {
			delete(m, name)
			continue
		}
		m[name] = &fstest.MapFile{Data: []byte(data)}
	}
	return m
}

func TestLoadFSErrors(t *testing.T) {
	laughs := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\na: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, l := range "bcdefghi" {
		laughs += string(l) + ": &" + string(l) + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = string(l)
	}
	for name, tc := range map[string]struct {
		files map[string]string
		wants []string
	}{
		"empty package": {map[string]string{"metadata/annotations.yaml": "annotations:\n  operators.operatorframework.io.bundle.package.v1: ''\n"},
			[]string{"metadata/annotations.yaml", "operators.operatorframework.io.bundle.package.v1", "missing or empty"}},
		"annotations not a mapping": {map[string]string{"metadata/annotations.yaml": "- a\n"},
			[]string{"metadata/annotations.yaml", "annotations:"}},
		"annotation value is a list": {map[string]string{"metadata/annotations.yaml": testAnnotations + "  foo: [a]\n"},
			[]string{"metadata/annotations.yaml", `"foo"`, "sequence"}},
		"no manifests dir": {map[string]string{"manifests/tiny.clusterserviceversion.yaml": "<delete>"},
			[]string{"manifests/ not found"}},
		"property without type": {map[string]string{"metadata/properties.yaml": "properties:\n- value: 1\n"},
			[]string{"metadata/properties.yaml", "properties[0]", "no type"}},
		"properties not a list": {map[string]string{"metadata/properties.yaml": "properties: {a: b}\n"},
			[]string{"metadata/properties.yaml"}},
		"bad olm.properties annotation": {map[string]string{
			"metadata/properties.yaml":                  "properties:\n- type: a\n  value: 1\n",
			"manifests/tiny.clusterserviceversion.yaml": strings.Replace(testCSV, "metadata:\n", "metadata:\n  annotations:\n    olm.properties: 'not json'\n", 1)},
			[]string{"manifests/tiny.clusterserviceversion.yaml", "olm.properties"}},
		"syntax error": {map[string]string{"manifests/bad.yaml": "apiVersion: v1\nkind: ConfigMap\n---\nkey: [unclosed\n"},
			[]string{"manifests/bad.yaml", "document 2", "line"}},
		"scalar document": {map[string]string{"manifests/bad.yaml": "just a string\n"},
			[]string{"manifests/bad.yaml", "document 1", "scalar"}},
		"missing apiVersion": {map[string]string{"manifests/bad.yaml": "kind: ConfigMap\n"},
			[]string{"manifests/bad.yaml", "document 1", "no apiVersion"}},
		"bad list item": {map[string]string{"manifests/bad.yaml": "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n- apiVersion: v1\n"},
			[]string{"manifests/bad.yaml", "document 1, items[1]", "no kind"}},
		"list items not a sequence": {map[string]string{"manifests/bad.yaml": "apiVersion: v1\nkind: List\nitems: {a: b}\n"},
			[]string{"manifests/bad.yaml", "items", "mapping"}},
		"csv field of wrong type": {map[string]string{"manifests/tiny.clusterserviceversion.yaml": testCSV + "  installModes: 3\n"},
			[]string{"manifests/tiny.clusterserviceversion.yaml", "spec.installModes"}},
		"csv version not semver": {map[string]string{"manifests/tiny.clusterserviceversion.yaml": strings.Replace(testCSV, "version: 0.1.0", "version: 1.0", 1)},
			[]string{`manifests/tiny.clusterserviceversion.yaml: spec.version "1.0" is not a semantic version: write MAJOR.MINOR.PATCH`}},
		"csv version with a v": {map[string]string{"manifests/tiny.clusterserviceversion.yaml": strings.Replace(testCSV, "version: 0.1.0", "version: v0.1.0", 1)},
			[]string{`manifests/tiny.clusterserviceversion.yaml: spec.version "v0.1.0" is not a semantic version`}},
		"csv version not a word": {map[string]string{"manifests/tiny.clusterserviceversion.yaml": strings.Replace(testCSV, "version: 0.1.0", "version: abc", 1)},
			[]string{`manifests/tiny.clusterserviceversion.yaml: spec.version "abc" is not a semantic version`}},
		"csv version a list": {map[string]string{"manifests/tiny.clusterserviceversion.yaml": strings.Replace(testCSV, "version: 0.1.0", "version: [1]", 1)},
			[]string{"manifests/tiny.clusterserviceversion.yaml: spec.version: expected a version such as 1.2.3, got a list"}},
		"alias cycle": {map[string]string{"manifests/bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: &m\n  name: x\n  self: *m\n"},
			[]string{"manifests/bad.yaml", "alias"}},
		"billion laughs": {map[string]string{"manifests/bad.yaml": laughs},
			[]string{"manifests/bad.yaml", "aliases expand to more than"}},
		"subdirectory": {map[string]string{"manifests/sub/x.yaml": "apiVersion: v1\nkind: ConfigMap\n"},
			[]string{"manifests/sub", "subdirectories are not allowed"}},
	} {
		t.Run(name, func(t *testing.T) {
			b, err := LoadFS(fsWith(tc.files), Origin{})
			if err == nil {
				t.Fatalf("loaded without error: %+v", b)
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestLoadFSEdgeCases(t *testing.T) {
	b, err := LoadFS(fsWith(map[string]string{
		// Anchors are expanded; the copies must be independent nodes.
		"manifests/anchors.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: &l {app: x}\n  annotations: *l\n",
		// A flow mapping starts with '{' but is not JSON: the YAML parser takes it.
		"manifests/flow.yaml": "{apiVersion: v1, kind: ConfigMap, metadata: {name: flow}}\n",
		// Nested List, empty file, comment-only file, CRLF line ends.
		"manifests/nested.yaml":   "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMapList\n  items:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: nested}\n",
		"manifests/empty.yaml":    "",
		"manifests/comments.yaml": "# nothing here\n---\n# or here\n",
		"manifests/crlf.yaml":     "apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: crlf\r\n",
		// The CSV is found by kind alone, as OLM does (universal-crossplane ships this).
		"manifests/tiny.clusterserviceversion.yaml": strings.Replace(testCSV, "operators.coreos.com/v1alpha1", "v1alpha1", 1),
		// An empty List is nothing, not an error.
		"manifests/none.yaml": "apiVersion: v1\nkind: List\nitems: []\n",
	}), Origin{Ref: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range b.Others {
		names = append(names, o.GetName())
	}
	if got, want := strings.Join(names, ","), "a,crlf,flow,nested"; got != want {
		t.Errorf("objects %s, want %s", got, want)
	}
	a := b.Others[0]
	if _, err := a.Pipe(yaml.SetLabel("extra", "y")); err != nil {
		t.Fatal(err)
	}
	if ann := a.GetAnnotations(); len(ann) != 1 || ann["app"] != "x" {
		t.Errorf("changing labels changed the aliased annotations too: %v", ann)
	}
	if s := mustString(t, a); strings.Contains(s, "&") || strings.Contains(s, "*") {
		t.Errorf("anchors left in output:\n%s", s)
	}
	if b.Origin.Ref != "memory" || !strings.HasPrefix(b.Origin.Digest, "sha256:") {
		t.Errorf("Origin = %+v", b.Origin)
	}
	// A digest given by the caller (an image's) is kept.
	b, err = LoadFS(fsWith(nil), Origin{Digest: "sha256:given"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Origin.Digest != "sha256:given" {
		t.Errorf("digest replaced: %s", b.Origin.Digest)
	}
}

func TestLoadDirRefusesEscapingSymlink(t *testing.T) {
	dir := copyDir(t, "testdata/good")
	outside := filepath.Join(t.TempDir(), "secret.yaml")
	if err := os.WriteFile(outside, []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: stolen}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "manifests", "secret.yaml")); err != nil {
		t.Skipf("symlinks not supported: %v", err)
	}
	b, err := LoadDir(dir)
	if err == nil {
		t.Fatalf("read a file outside the bundle through a symlink: %v", b.Others)
	}
	if !strings.Contains(err.Error(), "manifests/secret.yaml") {
		t.Errorf("error %q does not name the link", err)
	}
	// A link that stays inside the bundle is fine.
	if err := os.Remove(filepath.Join(dir, "manifests", "secret.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../metadata/../manifests/multi.yaml", filepath.Join(dir, "manifests", "z-link.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDir(dir); err != nil {
		t.Errorf("link inside the bundle refused: %v", err)
	}
}

// TestLoadCorpus loads every real bundle and checks, against a plain text
// count of top-level `kind:` lines, that no object was lost or misfiled.
func TestLoadCorpus(t *testing.T) {
	shared := sharedDir(t)
	var dirs []string
	for _, pattern := range []string{"bundles/*/manifests", "olmv1-testdata/bundles/*/*/manifests", "olmv1-regression/*/bundles/*/manifests", "olmv1-regression/bundles/*/manifests"} {
		m, err := filepath.Glob(filepath.Join(shared, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range m {
			dirs = append(dirs, filepath.Dir(d))
		}
	}
	if len(dirs) < 16+7 {
		t.Fatalf("found only %d bundles under %s", len(dirs), shared)
	}
	kindLine := regexp.MustCompile(`(?m)^kind: *(\S+)`)
	for _, dir := range dirs {
		rel, _ := filepath.Rel(shared, dir)
		t.Run(rel, func(t *testing.T) {
			b, err := LoadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if b.Package == "" || b.CSV == nil || b.CSV.Name == "" {
				t.Fatalf("incomplete bundle: package %q CSV %v", b.Package, b.CSV)
			}
			var crds, others int
			files, _ := filepath.Glob(filepath.Join(dir, "manifests", "*"))
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range kindLine.FindAllSubmatch(data, -1) {
					switch string(m[1]) {
					case "ClusterServiceVersion":
					case "CustomResourceDefinition":
						crds++
					default:
						others++
					}
				}
			}
			if len(b.CRDs) != crds || len(b.Others) != others {
				t.Errorf("loaded %d CRDs and %d others; files have %d and %d", len(b.CRDs), len(b.Others), crds, others)
			}
		})
	}
}

func TestObservabilityBareEqualsEnum(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "bundles", "observability-operator-0.0.28")
	b, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range b.CRDs {
		if crd.GetName() != "alertmanagerconfigs.monitoring.rhobs" {
			continue
		}
		data, err := crd.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), `"enum":["!=","=","=~","!~"]`) {
			t.Errorf("the `- =` enum item did not survive as the string \"=\"")
		}
		return
	}
	t.Fatal("alertmanagerconfigs CRD not loaded")
}

func BenchmarkLoadDirSail(b *testing.B) {
	dir := filepath.Join(sharedDir(b), "bundles", "sailoperator-1.30.3")
	for b.Loop() {
		if _, err := LoadDir(dir); err != nil {
			b.Fatal(err)
		}
	}
}
