package upgrade

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
)

var demoBundle = filepath.Join("..", "..", "examples", "demo", "bundle")

// env is a repository (a temporary directory with a .git entry) and an
// in-process registry holding versions of the demo bundle.
type env struct {
	host, root string
	digests    map[string]string // version -> bundle image digest
	loader     *bundle.ImageLoader
}

// unsafeCRD makes a demo version whose CRD changes a stored field's type:
// the safety check's error.
var unsafeCRD = []string{"replicas:\n                type: integer", "replicas:\n                type: string"}

// newEnv pushes each version (v, the CSV it replaces, CRD edits) of the demo
// bundle, tag "v"+version.
func newEnv(t *testing.T, versions ...[]string) *env {
	t.Helper()
	host, _ := bundletest.NewRegistry(t)
	e := &env{host: host, root: t.TempDir(), digests: map[string]string{}}
	for _, v := range versions {
		e.digests[v[0]] = bundletest.PushDemoVersion(t, host, demoBundle, v[0], v[1], v[2:]...)
	}
	if err := os.Mkdir(filepath.Join(e.root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.loader = &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}
	return e
}

func (e *env) repo() string { return e.host + "/demo/greeter-bundle" }

// file writes a file of the repository (its directories too).
func (e *env) file(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(e.root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func (e *env) read(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(e.root, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// run runs upgrade on the repository's application directories.
func (e *env) run(t *testing.T, p Policy, write bool, dirs ...string) *Report {
	t.Helper()
	ix, err := Scan(context.Background(), e.root)
	if err != nil {
		t.Fatal(err)
	}
	abs := make([]string, len(dirs))
	for i, d := range dirs {
		abs[i] = filepath.Join(e.root, filepath.FromSlash(d))
	}
	return Run(context.Background(), Options{Policy: p, Write: write, Loader: e.loader, Index: ix}, abs)
}

// specDoc is an olm-cmp.yaml with a comment, a blank line and a trailing
// comment, which a write must keep; lines are spec's keys.
func specDoc(lines ...string) string {
	return "# the greeter: comments stay\napiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata:\n  name: greeter\nspec:\n" +
		"  " + strings.Join(lines, "\n  ") + "\n\n  namespace: greeter-system   # install here\n"
}

func one(t *testing.T, rep *Report) Result {
	t.Helper()
	if len(rep.Applications) != 1 {
		t.Fatalf("%d applications, want 1", len(rep.Applications))
	}
	return rep.Applications[0]
}

func versionsOf(cs []Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Version)
	}
	return out
}

// TestTagsInSpecVersion: the image path, the version in spec.version: the
// newer tags with their CSV edges, the one with an edge chosen, the file
// written with version, digest and upgradeFrom together, and a second run
// a no-op.
func TestTagsInSpecVersion(t *testing.T) {
	e := newEnv(t,
		[]string{"0.1.0", "greeter-operator.v0.0.9"},
		[]string{"0.2.0", "greeter-operator.v0.1.0"},
		[]string{"0.2.1", "greeter-operator.v0.0.1"}, // newer, but no edge from 0.1.0
	)
	doc := specDoc("bundle: "+e.repo()+"   # upstream", "version: v0.1.0")
	e.file(t, "apps/greeter/olm-cmp.yaml", doc)

	r := one(t, e.run(t, OLMv1, false, "apps/greeter"))
	if r.Status != Available || r.Current != "v0.1.0" || r.Chosen != "v0.2.0" || r.Digest != e.digests["0.2.0"] || r.Package != "greeter-operator" {
		t.Fatalf("got %+v", r)
	}
	if got := versionsOf(r.Candidates); !slices.Equal(got, []string{"v0.2.1", "v0.2.0"}) {
		t.Errorf("candidates %v, want newest first v0.2.1, v0.2.0", got)
	}
	if len(r.Candidates[0].Edges) != 0 || !slices.Equal(r.Candidates[1].Edges, []string{"replaces greeter-operator.v0.1.0"}) {
		t.Errorf("edges %+v", r.Candidates)
	}
	if r.Safety == nil || r.Safety.Verdict != "safe" || r.Safety.UpgradeConstraintPolicy != "CatalogProvided" {
		t.Errorf("safety %+v, want safe under CatalogProvided", r.Safety)
	}
	if e.read(t, "apps/greeter/olm-cmp.yaml") != doc {
		t.Fatal("without --write the file changed")
	}

	r = one(t, e.run(t, OLMv1, true, "apps/greeter"))
	if r.Status != Written || len(r.Files) != 1 || !strings.HasSuffix(r.Files[0], filepath.Join("apps", "greeter", "olm-cmp.yaml")) {
		t.Fatalf("got %+v", r)
	}
	want := specDoc("bundle: "+e.repo()+"   # upstream", "version: v0.2.0", `digest: "`+e.digests["0.2.0"]+`"`, `upgradeFrom: "v0.1.0"`)
	written := e.read(t, "apps/greeter/olm-cmp.yaml")
	if written != want {
		t.Fatalf("written:\n%s\nwant:\n%s", written, want)
	}

	// Again: 0.2.0 has no successor (0.2.1 replaces another), nothing moves.
	r = one(t, e.run(t, OLMv1, true, "apps/greeter"))
	if r.Status != None || r.Current != "v0.2.0" || len(r.Files) != 0 || !strings.Contains(r.Reason, "do not upgrade from greeter-operator.v0.2.0") {
		t.Fatalf("second run: %+v", r)
	}
	if e.read(t, "apps/greeter/olm-cmp.yaml") != written {
		t.Fatal("the second run changed the file")
	}
}

// TestTagsInBundleReference: the tag in spec.bundle (with and without its
// own digest) moves there, the pin beside it.
func TestTagsInBundleReference(t *testing.T) {
	e := newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"})
	e.file(t, "a/olm-cmp.yaml", specDoc("bundle: "+e.repo()+":v0.1.0"))
	e.file(t, "b/olm-cmp.yaml", specDoc("bundle: "+e.repo()+":v0.1.0@"+e.digests["0.1.0"]))
	rep := e.run(t, OLMv1, true, "a", "b")
	for _, r := range rep.Applications {
		if r.Status != Written {
			t.Fatalf("%s: %+v", r.Dir, r)
		}
		// Two directories of one package: each says so.
		if !strings.Contains(r.Reason, "package greeter-operator is also in") {
			t.Errorf("%s: reason %q", r.Dir, r.Reason)
		}
	}
	if got, want := e.read(t, "a/olm-cmp.yaml"), specDoc("bundle: "+e.repo()+":v0.2.0", `digest: "`+e.digests["0.2.0"]+`"`, `upgradeFrom: "v0.1.0"`); got != want {
		t.Errorf("a:\n%s\nwant:\n%s", got, want)
	}
	if got, want := e.read(t, "b/olm-cmp.yaml"), specDoc("bundle: "+e.repo()+":v0.2.0@"+e.digests["0.2.0"], `upgradeFrom: "v0.1.0"`); got != want {
		t.Errorf("b:\n%s\nwant:\n%s", got, want)
	}
	if code := rep.ExitStatus(); code != 2 {
		t.Errorf("exit status %d, want 2", code)
	}
}

// TestBlocked: an unsafe upgrade is chosen, reported blocked with the
// safety error, and written all the same (for a draft pull request).
func TestBlocked(t *testing.T) {
	e := newEnv(t, []string{"0.1.0", "x"}, append([]string{"0.2.0", "greeter-operator.v0.1.0"}, unsafeCRD...))
	e.file(t, "a/olm-cmp.yaml", specDoc("bundle: "+e.repo(), "version: v0.1.0", "digest: "+e.digests["0.1.0"]))
	rep := e.run(t, OLMv1, true, "a")
	r := one(t, rep)
	if r.Status != Blocked || r.Safety == nil || r.Safety.Verdict != "blocked" || !strings.Contains(r.Reason, "error: type: CRD greeters.greeter.example.com version v1alpha1 path .spec.replicas") {
		t.Fatalf("got %+v", r)
	}
	if rep.ExitStatus() != 3 {
		t.Errorf("exit status %d, want 3", rep.ExitStatus())
	}
	want := specDoc("bundle: "+e.repo(), "version: v0.2.0", "digest: "+e.digests["0.2.0"], `upgradeFrom: "v0.1.0"`)
	if got := e.read(t, "a/olm-cmp.yaml"); got != want {
		t.Errorf("written:\n%s\nwant:\n%s", got, want)
	}
}

// TestApplicationParameters: the version passed by an Application's plugin
// parameter moves there, with its digest parameter; upgradeFrom, which it
// does not pass, goes to olm-cmp.yaml. A second run changes nothing.
func TestApplicationParameters(t *testing.T) {
	e := newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"})
	e.file(t, "apps/greeter/olm-cmp.yaml", specDoc("bundle: "+e.repo()))
	app := `# an Application: only its parameters change
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: greeter
spec:
  source:
    repoURL: https://git.example.com/gitops.git
    path: apps/greeter
    plugin:
      name: olm-cmp-v1
      parameters:
      - name: version
        string: v0.1.0     # bumped by olm-cmp upgrade
      - {name: digest, string: ""}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: other
spec:
  source:
    path: apps/other
`
	e.file(t, "argocd/apps.yaml", app)
	r := one(t, e.run(t, OLMv1, true, "apps/greeter"))
	if r.Status != Written || r.Current != "v0.1.0" || !strings.Contains(r.Where, "Application greeter (argocd/apps.yaml:") {
		t.Fatalf("got %+v", r)
	}
	wantApp := strings.Replace(strings.Replace(app, "string: v0.1.0 ", "string: v0.2.0 ", 1), `string: ""}`, `string: "`+e.digests["0.2.0"]+`"}`, 1)
	if got := e.read(t, "argocd/apps.yaml"); got != wantApp {
		t.Errorf("Application:\n%s\nwant:\n%s", got, wantApp)
	}
	if got, want := e.read(t, "apps/greeter/olm-cmp.yaml"), specDoc("bundle: "+e.repo(), `upgradeFrom: "v0.1.0"`); got != want {
		t.Errorf("olm-cmp.yaml:\n%s\nwant:\n%s", got, want)
	}
	if !slices.Equal(r.Files, []string{filepath.Join(e.root, "apps", "greeter", "olm-cmp.yaml"), filepath.Join(e.root, "argocd", "apps.yaml")}) {
		t.Errorf("files %q", r.Files)
	}
	r = one(t, e.run(t, OLMv1, true, "apps/greeter"))
	if r.Status != None || len(r.Files) != 0 || e.read(t, "argocd/apps.yaml") != wantApp {
		t.Errorf("second run: %+v", r)
	}
}

// TestApplicationEnv: a version passed as plugin env (any case, _ ignored).
func TestApplicationEnv(t *testing.T) {
	e := newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"})
	e.file(t, "g/olm-cmp.yaml", specDoc("bundle: "+e.repo()))
	app := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: g}\nspec:\n  sources:\n  - path: ./g\n    plugin:\n      env:\n      - name: VERSION\n        value: 'v0.1.0'\n      - name: UPGRADE_FROM\n        value: ''\n"
	e.file(t, "app.yml", app)
	r := one(t, e.run(t, OLMv1, true, "g"))
	if r.Status != Written {
		t.Fatalf("got %+v", r)
	}
	want := strings.Replace(strings.Replace(app, "'v0.1.0'", "'v0.2.0'", 1), "value: ''", "value: 'v0.1.0'", 1)
	if got := e.read(t, "app.yml"); got != want {
		t.Errorf("Application:\n%s\nwant:\n%s", got, want)
	}
	// The digest, which no env passes, is pinned in olm-cmp.yaml.
	if got, want := e.read(t, "g/olm-cmp.yaml"), specDoc("bundle: "+e.repo(), `digest: "`+e.digests["0.2.0"]+`"`); got != want {
		t.Errorf("olm-cmp.yaml:\n%s\nwant:\n%s", got, want)
	}
}

// TestApplicationSetElement: the repository's own examples/applicationset.yaml
// shape: flow-style list elements, the version and digest passed by
// template; only the element's two values change.
func TestApplicationSetElement(t *testing.T) {
	e := newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"})
	set, err := os.ReadFile(filepath.Join("..", "..", "examples", "applicationset.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(set), "{name: sail-operator, namespace: sail-operator, version: 1.30.3, digest: \"\"}",
		"{name: sail-operator, namespace: sail-operator, version: 1.30.3, digest: \"\"}\n      - {name: greeter, namespace: greeter-system, version: v0.1.0, digest: \"\"}", 1)
	if doc == string(set) {
		t.Fatal("examples/applicationset.yaml changed: update the test")
	}
	e.file(t, "argocd/set.yaml", doc)
	e.file(t, "examples/greeter/olm-cmp.yaml", specDoc("bundle: "+e.repo()))
	r := one(t, e.run(t, OLMv1, true, "examples/greeter"))
	if r.Status != Written || !strings.Contains(r.Where, "ApplicationSet operators, element greeter") {
		t.Fatalf("got %+v", r)
	}
	want := strings.Replace(doc, `{name: greeter, namespace: greeter-system, version: v0.1.0, digest: ""}`,
		`{name: greeter, namespace: greeter-system, version: v0.2.0, digest: "`+e.digests["0.2.0"]+`"}`, 1)
	if got := e.read(t, "argocd/set.yaml"); got != want {
		t.Errorf("ApplicationSet:\n%s\nwant:\n%s", got, want)
	}
	if got, want := e.read(t, "examples/greeter/olm-cmp.yaml"), specDoc("bundle: "+e.repo(), `upgradeFrom: "v0.1.0"`); got != want {
		t.Errorf("olm-cmp.yaml:\n%s\nwant:\n%s", got, want)
	}
	r = one(t, e.run(t, OLMv1, true, "examples/greeter"))
	if r.Status != None || e.read(t, "argocd/set.yaml") != want {
		t.Errorf("second run: %+v", r)
	}
}

// TestOneDirectoryTwoVersions: two applications render one directory and
// one passes its own version: which to bump is not upgrade's to guess,
// unless the manifests to read are named (--apps-from).
func TestOneDirectoryTwoVersions(t *testing.T) {
	e := newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"})
	e.file(t, "g/olm-cmp.yaml", specDoc("bundle: "+e.repo(), "version: v0.2.0"))
	staging := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: staging}
spec: {source: {path: g, plugin: {parameters: [{name: version, string: v0.1.0}, {name: digest, string: ""}]}}}
`
	e.file(t, "staging.yaml", staging)
	e.file(t, "production.yaml", `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: production}
spec: {source: {path: g}}
`)
	rep := e.run(t, OLMv1, true, "g")
	r := one(t, rep)
	wantMsg := "is rendered by 2 Argo CD applications (Application production (production.yaml:1); Application staging (staging.yaml:1)) that do not render one version (Application staging renders bundle \"" + e.repo() + "\" version \"v0.1.0\", digest none, upgradeFrom none; Application production renders bundle \"" + e.repo() + "\" version \"v0.2.0\", digest none, upgradeFrom none): upgrade cannot write one version for all of them"
	if r.Status != Failed || !strings.Contains(r.Reason, wantMsg) {
		t.Fatalf("got %+v", r)
	}
	if rep.ExitStatus() != 1 {
		t.Errorf("exit status %d, want 1", rep.ExitStatus())
	}
	ix, err := Scan(context.Background(), e.root, filepath.Join(e.root, "staging.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r = one(t, Run(context.Background(), Options{Write: true, Loader: e.loader, Index: ix}, []string{filepath.Join(e.root, "g")}))
	want := strings.Replace(strings.Replace(staging, "string: v0.1.0", "string: v0.2.0", 1), `string: ""`, `string: "`+e.digests["0.2.0"]+`"`, 1)
	if r.Status != Written || e.read(t, "staging.yaml") != want {
		t.Errorf("with staging.yaml only: %+v\n%s", r, e.read(t, "staging.yaml"))
	}
	if _, err := Scan(context.Background(), e.root, t.TempDir()); err == nil || !strings.Contains(err.Error(), "is outside the repository") {
		t.Errorf("a path outside the repository: %v", err)
	}
}

// TestExamplesApplicationAndSet: the repository's own examples/, where an
// Application and an ApplicationSet element both render one directory at
// the same version: upgrade moves both (the element's version and digest,
// olm-cmp.yaml's version, digest and upgradeFrom), says so, and a second
// run changes nothing.
func TestExamplesApplicationAndSet(t *testing.T) {
	e := newEnv(t, []string{"1.20.0", "x"}, []string{"1.21.0", "greeter-operator.v1.20.0"})
	if err := os.CopyFS(filepath.Join(e.root, "examples"), os.DirFS(filepath.Join("..", "..", "examples"))); err != nil {
		t.Fatal(err)
	}
	e.file(t, "examples/cert-manager-operator/olm-cmp.yaml", specDoc("bundle: "+e.repo(), "version: v1.20.0"))
	set := e.read(t, "examples/applicationset.yaml")
	app := e.read(t, "examples/cert-manager-operator/argocd/application.yaml")
	rep := e.run(t, OLMv1, true, "examples/cert-manager-operator")
	r := one(t, rep)
	if r.Status != Written || r.Chosen != "v1.21.0" {
		t.Fatalf("got %+v", r)
	}
	if !strings.Contains(r.Reason, "2 Argo CD applications render "+filepath.Join(e.root, "examples/cert-manager-operator")+" at one version: upgrade moves them together") {
		t.Errorf("reason does not say both move: %q", r.Reason)
	}
	if !strings.Contains(r.Where, "applicationset.yaml:22), element key version; ") || !strings.Contains(r.Where, "cert-manager-operator/olm-cmp.yaml") {
		t.Errorf("where: %q", r.Where)
	}
	d := e.digests["1.21.0"]
	wantSet := strings.Replace(set, `cert-manager-operator, version: v1.20.0, digest: ""}`, `cert-manager-operator, version: v1.21.0, digest: "`+d+`"}`, 1)
	if got := e.read(t, "examples/applicationset.yaml"); got != wantSet {
		t.Errorf("applicationset.yaml:\n%s\nwant:\n%s", got, wantSet)
	}
	wantSpec := specDoc("bundle: "+e.repo(), "version: v1.21.0", `digest: "`+d+`"`, `upgradeFrom: "v1.20.0"`)
	if got := e.read(t, "examples/cert-manager-operator/olm-cmp.yaml"); got != wantSpec {
		t.Errorf("olm-cmp.yaml:\n%s\nwant:\n%s", got, wantSpec)
	}
	if e.read(t, "examples/cert-manager-operator/argocd/application.yaml") != app {
		t.Error("the Application, which passes no version, was edited")
	}
	r = one(t, e.run(t, OLMv1, true, "examples/cert-manager-operator"))
	if r.Status != None || e.read(t, "examples/applicationset.yaml") != wantSet || e.read(t, "examples/cert-manager-operator/olm-cmp.yaml") != wantSpec {
		t.Errorf("second run: %+v", r)
	}
}

// TestTagListNotFound: a registry answering 404 on the tag list: one
// failure naming the repository, no write.
func TestTagListNotFound(t *testing.T) {
	fr := bundletest.NewFaultRegistry(t, bundletest.FaultOptions{})
	fr.PushDir(t, "demo/greeter-bundle", "v0.1.0", demoBundle)
	fr.Inject(bundletest.Where{Path: `/tags/list$`}, bundletest.Fault{Status: 404, Body: `{"errors":[{"code":"NAME_UNKNOWN"}]}`}, -1)
	root := t.TempDir()
	dir := filepath.Join(root, "g")
	os.MkdirAll(dir, 0o755)
	doc := specDoc("bundle: "+fr.Host+"/demo/greeter-bundle", "version: v0.1.0")
	os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), []byte(doc), 0o644)
	loader := &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{fr.Host}}
	rep := Run(context.Background(), Options{Loader: loader, Write: true}, []string{dir})
	r := one(t, rep)
	if r.Status != Failed || !strings.Contains(r.Reason, "demo/greeter-bundle") {
		t.Fatalf("got %+v", r)
	}
	t.Logf("reason: %s", r.Reason)
}

// TestJSON: the report's JSON keys, which the bot reads.
func TestJSON(t *testing.T) {
	e := newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"})
	e.file(t, "g/olm-cmp.yaml", specDoc("bundle: "+e.repo(), "version: v0.1.0"))
	data, err := json.Marshal(e.run(t, OLMv1, false, "g"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Applications []map[string]json.RawMessage `json:"applications"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"dir", "package", "current", "chosen", "candidates", "status", "files", "safety"} {
		if _, ok := got.Applications[0][k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, data)
		}
	}
	var c []map[string]any
	json.Unmarshal(got.Applications[0]["candidates"], &c)
	if len(c) != 1 || c[0]["version"] != "v0.2.0" || c[0]["deprecated"] != false || c[0]["edges"] == nil {
		t.Errorf("candidates %s", got.Applications[0]["candidates"])
	}
}

// catalogDoc is a file-based catalog of the demo's versions in e's
// registry: stable 0.1.0 -> 0.2.0 -> 0.3.0 by replaces; fast 0.2.0 ->
// 1.0.0, which also skips every version below it.
func (e *env) catalogDoc() string {
	doc := "schema: olm.package\nname: greeter-operator\ndefaultChannel: stable\n" +
		"---\nschema: olm.channel\npackage: greeter-operator\nname: stable\nentries:\n" +
		"- name: greeter-operator.v0.1.0\n- name: greeter-operator.v0.2.0\n  replaces: greeter-operator.v0.1.0\n- name: greeter-operator.v0.3.0\n  replaces: greeter-operator.v0.2.0\n" +
		"---\nschema: olm.channel\npackage: greeter-operator\nname: fast\nentries:\n" +
		"- name: greeter-operator.v0.2.0\n- name: greeter-operator.v1.0.0\n  replaces: greeter-operator.v0.2.0\n  skipRange: '>=0.1.0 <1.0.0'\n"
	for _, v := range []string{"0.1.0", "0.2.0", "0.3.0", "1.0.0"} {
		doc += "---\nschema: olm.bundle\nname: greeter-operator.v" + v + "\npackage: greeter-operator\nimage: " + e.repo() + "@" + e.digests[v] +
			"\nproperties:\n- type: olm.package\n  value: {packageName: greeter-operator, version: " + v + "}\n"
	}
	return doc
}

func catalogEnv(t *testing.T) *env {
	return newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"},
		[]string{"0.3.0", "greeter-operator.v0.2.0"}, []string{"1.0.0", "greeter-operator.v0.2.0"})
}

// TestCatalogPolicies: from 0.1.0, OLM v1 takes the best successor in the
// allowed channels (1.0.0 by its skipRange, or 0.2.0 within stable), OLM v0
// one hop along the channel; the file gets the exact version and its pin.
func TestCatalogPolicies(t *testing.T) {
	for _, tc := range []struct {
		name    string
		policy  Policy
		from    string
		channel string
		chosen  string
		cands   []string
	}{
		{"olmv1 every channel", OLMv1, "0.1.0", "", "1.0.0", []string{"1.0.0", "0.2.0"}},
		{"olmv1 stable", OLMv1, "0.1.0", "channel: stable", "0.2.0", []string{"0.2.0"}},
		{"olmv0 default channel", OLMv0, "0.1.0", "", "0.2.0", []string{"0.2.0"}},
		{"olmv0 fast", OLMv0, "0.2.0", "channel: fast", "1.0.0", []string{"1.0.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := catalogEnv(t)
			e.file(t, "g/catalog/index.yaml", e.catalogDoc())
			lines := []string{"catalog: ./catalog", "package: greeter-operator", "version: " + tc.from}
			if tc.channel != "" {
				lines = append(lines, tc.channel)
			}
			e.file(t, "g/olm-cmp.yaml", specDoc(lines...))
			r := one(t, e.run(t, tc.policy, true, "g"))
			if r.Status != Written || r.Current != tc.from || r.Chosen != tc.chosen || !slices.Equal(versionsOf(r.Candidates), tc.cands) {
				t.Fatalf("got %+v", r)
			}
			want := strings.Replace(specDoc(lines...), "version: "+tc.from, "version: "+tc.chosen+"\n  digest: \""+e.digests[tc.chosen]+"\"\n  upgradeFrom: \""+tc.from+"\"", 1)
			written := e.read(t, "g/olm-cmp.yaml")
			if written != want {
				t.Fatalf("written:\n%s\nwant:\n%s", written, want)
			}
			if tc.name == "olmv1 every channel" && !slices.Equal(r.Candidates[1].Edges, []string{"replaces greeter-operator.v0.1.0"}) {
				// 0.2.0 is fast's first entry (no edge) and stable's
				// replaces of 0.1.0: its edge is the channel's that has one.
				t.Errorf("0.2.0's edges %v, want stable's replaces", r.Candidates[1].Edges)
			}
			if tc.chosen == "1.0.0" {
				wantEdges := []string{"skipRange >=0.1.0 <1.0.0"}
				if tc.from == "0.2.0" {
					wantEdges = []string{"replaces greeter-operator.v0.2.0", "skipRange >=0.1.0 <1.0.0"}
				}
				if !slices.Equal(r.Candidates[0].Edges, wantEdges) {
					t.Errorf("edges %v", r.Candidates[0].Edges)
				}
				// The head: the second run moves nothing, and says why.
				r = one(t, e.run(t, tc.policy, true, "g"))
				if r.Status != None || r.Reason != "1.0.0 is the newest version of package greeter-operator in the catalog" || e.read(t, "g/olm-cmp.yaml") != written {
					t.Errorf("second run: %+v", r)
				}
			}
		})
	}
}

// TestCatalogRangeExcludesNewer: a range the render already takes the
// newest of: nothing to move to, and the answer says to widen it.
func TestCatalogRangeExcludesNewer(t *testing.T) {
	e := catalogEnv(t)
	e.file(t, "g/catalog/index.yaml", e.catalogDoc())
	e.file(t, "g/olm-cmp.yaml", specDoc("catalog: ./catalog", "package: greeter-operator", `version: "0.1.x"`))
	rep := e.run(t, OLMv1, true, "g")
	r := one(t, rep)
	want := `spec.version "0.1.x" allows no version newer than 0.1.0, which the render already takes (newer in the catalog: 0.2.0, 0.3.0, 1.0.0): widen the range to move`
	if r.Status != None || r.Reason != want || rep.ExitStatus() != 0 {
		t.Fatalf("got %+v\nwant reason %s", r, want)
	}
}

// TestCatalogCycle: a channel whose replaces form a cycle has no head; the
// answer is still one hop, found in bounded time.
func TestCatalogCycle(t *testing.T) {
	e := catalogEnv(t)
	doc := strings.Replace(e.catalogDoc(), "- name: greeter-operator.v0.1.0\n- name", "- name: greeter-operator.v0.1.0\n  replaces: greeter-operator.v0.3.0\n- name", 1)
	e.file(t, "g/catalog/index.yaml", doc)
	e.file(t, "g/olm-cmp.yaml", specDoc("catalog: ./catalog", "package: greeter-operator", "version: 0.2.0", "channel: stable"))
	r := one(t, e.run(t, OLMv0, false, "g"))
	if r.Status != Available || r.Chosen != "0.3.0" {
		t.Fatalf("got %+v", r)
	}
	// From 0.3.0 the cycle leads back to 0.1.0: never down.
	e.file(t, "g/olm-cmp.yaml", specDoc("catalog: ./catalog", "package: greeter-operator", "version: 0.3.0", "channel: stable"))
	r = one(t, e.run(t, OLMv0, false, "g"))
	if r.Status != None || !strings.HasPrefix(r.Reason, "the next version from 0.3.0 in channel stable is 0.1.0, older: upgrade never goes down a version (channel stable: ") {
		t.Errorf("got %+v", r)
	}
}

// TestReferenceBundles: the real bumps of the issue. loki-operator 0.10.2 ->
// 0.11.0 drops a stored field of a CRD: blocked; cert-manager-operator
// 1.19.1 -> 1.20.0 is not.
func TestReferenceBundles(t *testing.T) {
	shared := filepath.Join("..", "..", "..", "shared", "bundles")
	if _, err := os.Stat(shared); err != nil {
		t.Skip("../shared/bundles is absent: the reference bundles are not here")
	}
	host, _ := bundletest.NewRegistry(t)
	root := t.TempDir()
	loader := &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}
	for _, tc := range []struct {
		pkg, from, to string
		status        Status
	}{
		{"loki-operator", "0.10.2", "0.11.0", Blocked},
		{"cert-manager-operator", "1.19.1", "1.20.0", Available},
	} {
		for _, v := range []string{tc.from, tc.to} {
			bundletest.PushDir(t, host, "ref/"+tc.pkg, v, filepath.Join(shared, tc.pkg+"-"+v))
		}
		dir := filepath.Join(root, tc.pkg)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), []byte(specDoc("bundle: "+host+"/ref/"+tc.pkg, "version: "+tc.from)), 0o644)
		r := one(t, Run(context.Background(), Options{Loader: loader}, []string{dir}))
		if r.Status != tc.status || r.Chosen != tc.to {
			t.Errorf("%s: got %+v", tc.pkg, r)
		}
		t.Logf("%s %s -> %s: %s %s; safety %+v", tc.pkg, tc.from, tc.to, r.Status, r.Reason, r.Safety)
	}
}

// TestDigestOnlyBundle: a bundle pinned by digest alone gets the new tag and
// digest in its reference; upgradeFrom names the tag of the version left.
func TestDigestOnlyBundle(t *testing.T) {
	e := newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"})
	e.file(t, "g/olm-cmp.yaml", specDoc("bundle: "+e.repo()+"@"+e.digests["0.1.0"]))
	r := one(t, e.run(t, OLMv1, true, "g"))
	if r.Status != Written || r.Current != "v0.1.0" {
		t.Fatalf("got %+v", r)
	}
	if got, want := e.read(t, "g/olm-cmp.yaml"), specDoc("bundle: "+e.repo()+":v0.2.0@"+e.digests["0.2.0"], `upgradeFrom: "v0.1.0"`); got != want {
		t.Errorf("written:\n%s\nwant:\n%s", got, want)
	}
}

// TestApplicationSetBlockValues: a block-style element whose version is a
// nested key, passed by a fasttemplate ({{values.version}}) as plugin env.
func TestApplicationSetBlockValues(t *testing.T) {
	e := newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"})
	e.file(t, "clusters/a/greeter/olm-cmp.yaml", specDoc("bundle: "+e.repo()))
	set := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: by-cluster
spec:
  generators:
  - list:
      elements:
      - cluster: a
        values:
          version: "v0.1.0"   # the operator's version on cluster a
          digest: ''
  template:
    metadata: {name: '{{cluster}}-greeter'}
    spec:
      source:
        path: clusters/{{cluster}}/greeter
        plugin:
          env:
          - {name: version, value: '{{values.version}}'}
          - {name: digest, value: '{{values.digest}}'}
`
	e.file(t, "set.yaml", set)
	r := one(t, e.run(t, OLMv1, true, "clusters/a/greeter"))
	if r.Status != Written || !strings.Contains(r.Where, "element key values.version") {
		t.Fatalf("got %+v", r)
	}
	want := strings.Replace(strings.Replace(set, `"v0.1.0"`, `"v0.2.0"`, 1), "digest: ''", "digest: '"+e.digests["0.2.0"]+"'", 1)
	if got := e.read(t, "set.yaml"); got != want {
		t.Errorf("ApplicationSet:\n%s\nwant:\n%s", got, want)
	}
}

// TestTemplateOfSeveralParts: a version built from parts ('v{{.version}}')
// has no one place to edit: a failure that says what to set, nothing
// written.
func TestTemplateOfSeveralParts(t *testing.T) {
	e := newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"})
	e.file(t, "g/olm-cmp.yaml", specDoc("bundle: "+e.repo()))
	set := "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: s}\nspec:\n  generators:\n  - list:\n      elements:\n      - {name: g, version: 0.1.0}\n  template:\n    spec:\n      source:\n        path: '{{.name}}'\n        plugin:\n          parameters:\n          - {name: version, string: 'v{{.version}}'}\n"
	e.file(t, "set.yaml", set)
	r := one(t, e.run(t, OLMv1, true, "g"))
	if r.Status != Failed || !strings.Contains(r.Reason, `parameter version is a template of several parts ("v{{.version}}"): upgrade edits a plain value or a whole {{.key}}; set it to "v0.2.0" by hand`) {
		t.Fatalf("got %+v", r)
	}
	if e.read(t, "set.yaml") != set || e.read(t, "g/olm-cmp.yaml") != specDoc("bundle: "+e.repo()) {
		t.Error("a file was written")
	}
}

// TestTagNotAVersion: a spec rendering "latest", or a partial version
// (v99, 1.2: floating tags, which versions lists with the non-semver
// ones), cannot be compared; nothing is written.
func TestTagNotAVersion(t *testing.T) {
	e := newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"})
	for _, tag := range []string{"latest", "v99", "1.2"} {
		bundletest.PushDir(t, e.host, "demo/greeter-bundle", tag, demoBundle)
		doc := specDoc("bundle: "+e.repo(), "version: "+tag)
		e.file(t, "g/olm-cmp.yaml", doc)
		r := one(t, e.run(t, OLMv1, true, "g"))
		if r.Status != Failed || !strings.Contains(r.Reason, `renders the tag "`+tag+`", which is not a full semantic version (a tag like latest or 1.2 moves to each new release)`) {
			t.Fatalf("%s: got %+v", tag, r)
		}
		if e.read(t, "g/olm-cmp.yaml") != doc {
			t.Errorf("%s: olm-cmp.yaml was written", tag)
		}
	}
}

// TestScanHostileAndBounded: a manifest that is not YAML, or an alias
// bomb, is skipped, not fatal; a tree beyond the scan bound is refused.
func TestScanHostileAndBounded(t *testing.T) {
	root := t.TempDir()
	write := func(name, data string) {
		os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755)
		os.WriteFile(filepath.Join(root, name), []byte(data), 0o644)
	}
	bomb := "apiVersion: argoproj.io/v1alpha1\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 1; i < 16; i++ {
		bomb += strings.Replace("aN: &aN [*aP, *aP, *aP, *aP, *aP, *aP, *aP, *aP, *aP, *aP]\n", "N", string(rune('a'+i)), 2)
		bomb = strings.ReplaceAll(bomb, "aP", "a"+string(rune('a'+i-1)))
	}
	write("bomb.yaml", bomb)
	write("broken.yaml", "apiVersion: argoproj.io/v1alpha1\nkind: Application\nspec: [unclosed\n")
	write("ok.yaml", "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: ok}\nspec: {source: {path: g, plugin: {parameters: [{name: version, string: v1.0.0}]}}}\n")
	ix, err := Scan(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	if apps := ix.Apps["g"]; len(apps) != 1 || apps[0].Version.Value() != "v1.0.0" {
		t.Errorf("apps %+v", ix.Apps)
	}
	defer func(n int) { maxScanFiles = n }(maxScanFiles)
	maxScanFiles = 2
	if _, err := Scan(context.Background(), root); err == nil || !strings.Contains(err.Error(), "holds over 2 YAML files: give the repository's root (or a smaller checkout)") {
		t.Errorf("err = %v", err)
	}
}

// TestManyNewerTags: of 12 newer tags in a replaces chain, the newest 9 and
// the next one up are read; the next one up is the successor.
func TestManyNewerTags(t *testing.T) {
	vs := [][]string{{"0.1.0", "x"}}
	for i := 2; i <= 13; i++ {
		vs = append(vs, []string{fmt.Sprintf("0.%d.0", i), fmt.Sprintf("greeter-operator.v0.%d.0", i-1)})
	}
	e := newEnv(t, vs...)
	e.file(t, "g/olm-cmp.yaml", specDoc("bundle: "+e.repo(), "version: v0.1.0"))
	r := one(t, e.run(t, OLMv1, false, "g"))
	want := []string{"v0.13.0", "v0.12.0", "v0.11.0", "v0.10.0", "v0.9.0", "v0.8.0", "v0.7.0", "v0.6.0", "v0.5.0", "v0.2.0"}
	if r.Status != Available || r.Chosen != "v0.2.0" || !slices.Equal(versionsOf(r.Candidates), want) {
		t.Fatalf("got %+v", r)
	}
}

// TestApplicationOtherParameters: the spec is rendered as the plugin renders
// it, with every parameter and env entry of the application (here the
// namespace the file lacks, and an array parameter).
func TestApplicationOtherParameters(t *testing.T) {
	e := newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"})
	e.file(t, "g/olm-cmp.yaml", "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: "+e.repo()+"\n  version: v0.1.0\n")
	e.file(t, "app.yaml", `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: g}
spec:
  source:
    path: g
    plugin:
      parameters:
      - {name: imagePullSecrets, array: [pull]}
      env:
      - {name: NAMESPACE, value: greeter-system}
`)
	r := one(t, e.run(t, OLMv1, true, "g"))
	if r.Status != Written || r.Chosen != "v0.2.0" {
		t.Fatalf("got %+v", r)
	}
	// Without the application, the spec has no namespace: it fails, naming it.
	ix, _ := Scan(context.Background(), e.root, filepath.Join(e.root, "g"))
	r = one(t, Run(context.Background(), Options{Loader: e.loader, Index: ix}, []string{filepath.Join(e.root, "g")}))
	if r.Status != Failed || !strings.Contains(r.Reason, "namespace") {
		t.Errorf("without the Application: %+v", r)
	}
}

// TestCatalogVersionInApplication: a catalog spec whose version an
// Application passes: the parameter moves, the pin and upgradeFrom go to
// olm-cmp.yaml (the Application passes neither).
func TestCatalogVersionInApplication(t *testing.T) {
	e := catalogEnv(t)
	e.file(t, "g/catalog/index.yaml", e.catalogDoc())
	e.file(t, "g/olm-cmp.yaml", specDoc("catalog: ./catalog", "package: greeter-operator"))
	app := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: g}\nspec:\n  source:\n    path: g\n    plugin:\n      parameters:\n      - name: version\n        string: \"0.1.0\"\n"
	e.file(t, "app.yaml", app)
	r := one(t, e.run(t, OLMv0, true, "g"))
	if r.Status != Written || r.Current != "0.1.0" || r.Chosen != "0.2.0" {
		t.Fatalf("got %+v", r)
	}
	if got, want := e.read(t, "app.yaml"), strings.Replace(app, `"0.1.0"`, `"0.2.0"`, 1); got != want {
		t.Errorf("Application:\n%s\nwant:\n%s", got, want)
	}
	if got, want := e.read(t, "g/olm-cmp.yaml"), specDoc("catalog: ./catalog", "package: greeter-operator", `digest: "`+e.digests["0.2.0"]+`"`, `upgradeFrom: "0.1.0"`); got != want {
		t.Errorf("olm-cmp.yaml:\n%s\nwant:\n%s", got, want)
	}
	// The next run takes the next hop, from the version just written.
	r = one(t, e.run(t, OLMv0, false, "g"))
	if r.Current != "0.2.0" || r.Chosen != "0.3.0" {
		t.Errorf("next run: %+v", r)
	}
}
