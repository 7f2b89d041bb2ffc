package upgrade

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/specedit"
)

// hostileSet is an ApplicationSet element passing version to apps/s, and
// hostileSpec the directory's olm-cmp.yaml without a version: a bump
// writes both files (the element's version; olm-cmp.yaml's digest and
// upgradeFrom).
const hostileSet = "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: s}\nspec:\n  generators:\n  - list:\n      elements:\n      - {name: s, version: v0.1.0}\n  template:\n    spec:\n      source:\n        path: 'apps/{{.name}}'\n        plugin:\n          parameters:\n          - name: version\n            string: '{{.version}}'\n"

func hostileSpec(repo string) string {
	return "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: g}\nspec:\n  bundle: " + repo + "\n  namespace: g\n"
}

// TestWriteWholeOrNothing: the second of two writes fails (a full disk):
// the first file is put back, the answer says nothing was written.
func TestWriteWholeOrNothing(t *testing.T) {
	e := newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"})
	spec := hostileSpec(e.repo())
	e.file(t, "apps/s/olm-cmp.yaml", spec)
	e.file(t, "argocd/set.yaml", hostileSet)
	n := 0
	writeFile = func(file string, data []byte) (string, error) {
		if n++; n == 2 {
			return "", &os.PathError{Op: "write", Path: file, Err: errors.New("no space left on device")}
		}
		return specedit.WriteFile(file, data)
	}
	defer func() { writeFile = specedit.WriteFile }()
	rep := e.run(t, OLMv1, true, "apps/s")
	r := one(t, rep)
	if r.Status != Failed || !strings.Contains(r.Reason, ": no space left on device: nothing was written") {
		t.Errorf("got %+v", r)
	}
	if e.read(t, "apps/s/olm-cmp.yaml") != spec || e.read(t, "argocd/set.yaml") != hostileSet {
		t.Errorf("a file was left written:\n%s\n%s", e.read(t, "apps/s/olm-cmp.yaml"), e.read(t, "argocd/set.yaml"))
	}
	if rep.ExitStatus() != 1 {
		t.Errorf("exit status %d, want 1", rep.ExitStatus())
	}
}

// TestWriteReadOnly: a read-only file is the user's "do not touch": nothing
// is written (root may write anything: skipped then).
func TestWriteReadOnly(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root, which may write a read-only file")
	}
	e := newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"})
	spec := hostileSpec(e.repo())
	e.file(t, "apps/s/olm-cmp.yaml", spec)
	set := e.file(t, "argocd/set.yaml", hostileSet)
	if err := os.Chmod(set, 0o444); err != nil {
		t.Fatal(err)
	}
	r := one(t, e.run(t, OLMv1, true, "apps/s"))
	if r.Status != Failed || !strings.Contains(r.Reason, "set.yaml is read-only: nothing was written; make it writable (chmod u+w) or change it by hand") {
		t.Errorf("got %+v", r)
	}
	if e.read(t, "apps/s/olm-cmp.yaml") != spec || e.read(t, "argocd/set.yaml") != hostileSet {
		t.Error("a file was written")
	}
}

// TestWriteOutsideRepository: an olm-cmp.yaml that is a symbolic link out
// of the repository is never written through (no pull request would show
// the change); a link inside the repository still is.
func TestWriteOutsideRepository(t *testing.T) {
	e := newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"})
	spec := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: g}\nspec:\n  bundle: " + e.repo() + "\n  version: v0.1.0\n  namespace: g\n"
	outside := filepath.Join(t.TempDir(), "olm-cmp.yaml")
	if err := os.WriteFile(outside, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	e.file(t, "shared/olm-cmp.yaml", spec)
	for link, target := range map[string]string{"out": outside, "in": filepath.Join(e.root, "shared", "olm-cmp.yaml")} {
		if err := os.MkdirAll(filepath.Join(e.root, link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(e.root, link, "olm-cmp.yaml")); err != nil {
			t.Fatal(err)
		}
	}
	rep := e.run(t, OLMv1, true, "out")
	r := one(t, rep)
	if r.Status != Failed || !strings.Contains(r.Reason, "olm-cmp.yaml is a symbolic link to "+outside+", outside the repository ") || !strings.HasSuffix(r.Reason, ": upgrade writes only inside the repository; replace the link with the file, or change it by hand") {
		t.Errorf("got %+v", r)
	}
	if data, _ := os.ReadFile(outside); string(data) != spec {
		t.Errorf("the file outside the repository was written:\n%s", data)
	}
	if r := one(t, e.run(t, OLMv1, true, "in")); r.Status != Written || e.read(t, "shared/olm-cmp.yaml") == spec {
		t.Errorf("a link inside the repository: %+v", r)
	}
}

// TestSearchHonoursDeadline: the search for application directories and
// for Argo CD manifests stops at the command's deadline (a DIR of a whole
// disk would otherwise be walked to the end, past --timeout), naming it.
func TestSearchHonoursDeadline(t *testing.T) {
	root := t.TempDir()
	for i := range 50 {
		if err := os.MkdirAll(filepath.Join(root, "d", strconv.Itoa(i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "d", "7", "olm-cmp.yaml"), []byte("x"), 0o644)
	limit := errors.New("the deadline")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(limit)
	if _, err := Dirs(ctx, []string{root}); !errors.Is(err, limit) || !strings.Contains(err.Error(), root+": the search for olm-cmp.yaml files was cut short: the deadline") {
		t.Errorf("Dirs: %v", err)
	}
	if _, err := Scan(ctx, root); !errors.Is(err, limit) || !strings.Contains(err.Error(), root+": the search for Argo CD manifests was cut short: the deadline") {
		t.Errorf("Scan: %v", err)
	}
	if dirs, err := Dirs(context.Background(), []string{root}); err != nil || len(dirs) != 1 {
		t.Errorf("without a deadline: %v %v", dirs, err)
	}
}

// TestWriteRelativeDirectory: an application directory given relative to
// the working directory (".", as `olm-cmp upgrade` defaults to) is inside
// the repository.
func TestWriteRelativeDirectory(t *testing.T) {
	e := newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"})
	e.file(t, "g/olm-cmp.yaml", "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: g}\nspec:\n  bundle: "+e.repo()+"\n  version: v0.1.0\n  namespace: g\n")
	t.Chdir(filepath.Join(e.root, "g"))
	r := one(t, Run(context.Background(), Options{Write: true, Loader: e.loader}, []string{"."}))
	if r.Status != Written || !strings.Contains(e.read(t, "g/olm-cmp.yaml"), "version: v0.2.0") {
		t.Errorf("got %+v", r)
	}
}

// TestVersionThroughYAMLAlias: Argo CD reads aliases and merge keys, so an
// application passing its version through one is seen (the file's version
// is not what renders), and is refused: an edit of the anchored value would
// change every element repeating it (another directory's version), an edit
// of olm-cmp.yaml would not change what renders. Nothing is written.
func TestVersionThroughYAMLAlias(t *testing.T) {
	e := newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"})
	spec := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: g}\nspec:\n  bundle: " + e.repo() + "\n  version: v0.1.0\n  namespace: g\n"
	set := "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: s}\nspec:\n  generators:\n  - list:\n      elements:\n      - &base {name: a, version: v0.1.0}\n      - <<: *base\n        name: b\n  template:\n    spec:\n      source:\n        path: '{{.name}}'\n        plugin:\n          parameters:\n          - name: version\n            string: '{{.version}}'\n"
	app := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: m, annotations: {v: &v v0.1.0}}\nspec:\n  source:\n    path: c\n    plugin:\n      parameters:\n      - name: version\n        string: *v\n"
	for _, d := range []string{"a", "b", "c"} {
		e.file(t, d+"/olm-cmp.yaml", spec)
	}
	e.file(t, "set.yaml", set)
	e.file(t, "app.yaml", app)
	for dir, want := range map[string]string{
		"a": `ApplicationSet s, element a (set.yaml:8) passes its version, digest or upgradeFrom through a YAML anchor or alias ("&base"): an edit there would change every place that repeats it, or not the place meant; write the values out in full (no & or *), or make the change by hand`,
		"b": `ApplicationSet s, element b (set.yaml:9) passes its version, digest or upgradeFrom through a YAML anchor or alias ("*base")`,
		"c": `Application m (app.yaml:1) passes its version, digest or upgradeFrom through a YAML anchor or alias ("*v")`,
	} {
		r := one(t, e.run(t, OLMv1, true, dir))
		if r.Status != Failed || !strings.HasPrefix(r.Reason, want) {
			t.Errorf("%s: got %+v", dir, r)
		}
	}
	if e.read(t, "set.yaml") != set || e.read(t, "app.yaml") != app {
		t.Error("a manifest was written")
	}
	for _, d := range []string{"a", "b", "c"} {
		if e.read(t, d+"/olm-cmp.yaml") != spec {
			t.Errorf("%s/olm-cmp.yaml was written", d)
		}
	}
}

// TestVersionFromUnreadGenerator: an ApplicationSet whose matrix generator
// (a list crossed with clusters, the common multi-cluster form) passes the
// version: upgrade does not read it, so bumping olm-cmp.yaml would not move
// what renders (and its new pin would break the render). A directory the
// template's path may name is refused; another is upgraded.
func TestVersionFromUnreadGenerator(t *testing.T) {
	e := newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"})
	spec := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: g}\nspec:\n  bundle: " + e.repo() + "\n  version: v0.1.0\n  namespace: g\n"
	e.file(t, "apps/a/olm-cmp.yaml", spec)
	e.file(t, "other/b/olm-cmp.yaml", spec)
	e.file(t, "set.yaml", "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: s}\nspec:\n  generators:\n  - matrix:\n      generators:\n      - list:\n          elements:\n          - {name: a, version: v0.1.0}\n      - clusters: {}\n  template:\n    spec:\n      source:\n        path: 'apps/{{.name}}'\n        plugin:\n          parameters:\n          - name: version\n            string: '{{.version}}'\n")
	rep := e.run(t, OLMv1, true, "apps/a", "other/b")
	want := `ApplicationSet s (set.yaml:6) may render apps/a with a version, digest or upgradeFrom from its "matrix" generator, which upgrade does not read (it reads list generators): bump it by hand, or name the manifests that render apps/a with --apps-from`
	if r := rep.Applications[0]; r.Status != Failed || r.Reason != want {
		t.Errorf("apps/a: got %+v\nwant %s", r, want)
	}
	if e.read(t, "apps/a/olm-cmp.yaml") != spec {
		t.Error("apps/a/olm-cmp.yaml was written")
	}
	if r := rep.Applications[1]; r.Status != Written {
		t.Errorf("other/b: got %+v", r)
	}
}

// TestWriteFileChangedMeanwhile: a file edited by someone else between
// upgrade's read and its write: nothing is written, the answer names it.
func TestWriteFileChangedMeanwhile(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	os.WriteFile(a, []byte("a: 1\n"), 0o644)
	os.WriteFile(b, []byte("b: 1\n"), 0o644)
	files := []edited{
		{path: "a.yaml", disk: a, old: []byte("a: 1\n"), data: []byte("a: 2\n")},
		{path: "b.yaml", disk: b, old: []byte("b: 1\n"), data: []byte("b: 2\n")},
	}
	os.WriteFile(b, []byte("b: 9\n"), 0o644) // the other writer
	err := write(files)
	if err == nil || err.Error() != "b.yaml changed while upgrade ran: nothing was written; run upgrade again" {
		t.Errorf("got %v", err)
	}
	if got, _ := os.ReadFile(a); string(got) != "a: 1\n" {
		t.Errorf("a.yaml was written: %q", got)
	}
	if got, _ := os.ReadFile(b); string(got) != "b: 9\n" {
		t.Errorf("b.yaml: %q", got)
	}
}

// TestDirsOnce: a directory named twice, directly and through a parent, or
// spelled two ways, is upgraded once (twice would move two hops in a run).
func TestDirsOnce(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a", "b"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
		os.WriteFile(filepath.Join(root, d, "olm-cmp.yaml"), []byte("x"), 0o644)
	}
	a := filepath.Join(root, "a")
	dirs, err := Dirs(context.Background(), []string{a, root, a + "/", filepath.Join(root, "b", "..", "a")})
	if err != nil || len(dirs) != 2 || dirs[0] != a || dirs[1] != filepath.Join(root, "b") {
		t.Errorf("got %q %v", dirs, err)
	}
}

// TestWriteTwoDirectoriesOneManifest: two directories whose versions live
// in one ApplicationSet (examples/applicationset.yaml lists three): both
// are written in one run, the second reading what the first wrote.
func TestWriteTwoDirectoriesOneManifest(t *testing.T) {
	e := newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"})
	spec := hostileSpec(e.repo())
	e.file(t, "apps/a/olm-cmp.yaml", spec)
	e.file(t, "apps/b/olm-cmp.yaml", spec)
	set := strings.Replace(hostileSet, "      - {name: s, version: v0.1.0}\n", "      - {name: a, version: v0.1.0}\n      - {name: b, version: v0.1.0}\n", 1)
	e.file(t, "set.yaml", set)
	rep := e.run(t, OLMv1, true, "apps/a", "apps/b")
	for _, r := range rep.Applications {
		if r.Status != Written {
			t.Errorf("%s: %+v", r.Dir, r)
		}
	}
	want := strings.ReplaceAll(set, "version: v0.1.0}", "version: v0.2.0}")
	if got := e.read(t, "set.yaml"); got != want {
		t.Errorf("set.yaml:\n%s\nwant:\n%s", got, want)
	}
	for _, r := range e.run(t, OLMv1, true, "apps/a", "apps/b").Applications {
		if r.Status != None {
			t.Errorf("second run, %s: %+v", r.Dir, r)
		}
	}
}

// TestTemplateInApplication: an Application (no ApplicationSet around it)
// passing '{{.version}}': one line naming the parameter, not a registry
// error about a tag.
func TestTemplateInApplication(t *testing.T) {
	e := newEnv(t, []string{"0.1.0", "x"})
	spec := hostileSpec(e.repo())
	e.file(t, "g/olm-cmp.yaml", spec)
	e.file(t, "app.yaml", "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: m}\nspec:\n  source:\n    path: g\n    plugin:\n      parameters:\n      - name: version\n        string: '{{.version}}'\n")
	r := one(t, e.run(t, OLMv1, true, "g"))
	want := `Application m (app.yaml:1): parameter version is "{{.version}}", a template, which only an ApplicationSet fills in: Argo CD passes it to the plugin as written; write the value itself`
	if r.Status != Failed || r.Reason != want {
		t.Errorf("got %+v\nwant %s", r, want)
	}
}
