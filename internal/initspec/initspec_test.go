package initspec

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/kustomize/kyaml/kio"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/requirements"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

const demoBundle = "../../examples/demo/bundle"

// copyDir copies a bundle directory (two levels: manifests/, metadata/).
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// strictRender renders dir/olm-cmp.yaml as `olm-cmp render --strict dir`.
func strictRender(t *testing.T, dir string) *render.Result {
	t.Helper()
	f, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := f.Spec
	s.Strict = true
	res, err := (&render.Renderer{}).Render(context.Background(), render.Request{Spec: s, Name: f.Metadata.Name, SourceDir: dir})
	if err != nil {
		t.Fatalf("strict render of the written spec: %v\n%s", err, readFile(t, filepath.Join(dir, spec.FileName)))
	}
	return res
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestBuildDemo: the demo bundle's spec, written and rendered strictly
// through render, independently of Build's own check.
func TestBuildDemo(t *testing.T) {
	dir := t.TempDir()
	res, err := Build(context.Background(), &render.Renderer{}, Request{Ref: demoBundle, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.Findings != 1 {
		t.Errorf("%d findings answered; the demo has one (cert-manager for its webhooks)", res.Findings)
	}
	if _, err := Write(dir, res.Text, false); err != nil {
		t.Fatal(err)
	}
	out := strictRender(t, dir)
	if len(out.Warnings) != 0 {
		t.Errorf("warnings: %q", out.Warnings)
	}
	f, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(demoBundle)
	if rel, _ := filepath.Rel(dir, abs); f.Spec.Bundle != rel || !render.IsDirRef(f.Spec.Bundle) {
		t.Errorf("bundle %q, want the directory relative to the spec's, %q", f.Spec.Bundle, rel)
	}
	// The demo CSV suggests no namespace: the package name, marked TODO.
	if f.Metadata.Name != "greeter-operator" || f.Spec.Namespace != "greeter-operator" || f.Spec.Version != "" || f.Spec.Digest != "" {
		t.Errorf("spec: name %q, %+v", f.Metadata.Name, f.Spec)
	}
	if !slices.Equal(f.Spec.ClusterAPIs, []string{"cert-manager.io/v1"}) || len(f.Spec.Accept) != 0 {
		t.Errorf("clusterAPIs %q, accept %q: want cert-manager for the webhooks' certificates, nothing to accept", f.Spec.ClusterAPIs, f.Spec.Accept)
	}
	text := string(res.Text)
	for _, want := range []string{
		"  namespace: greeter-operator  # TODO: choose the install namespace",
		"  # examples: [Greeter]\n",
		`# required certificates:cert-manager.io/v1 (from CSV webhookdefinitions`,
		"  - cert-manager.io/v1  # TODO:",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if total, todo := Lines(res.Text); todo != 2 || total != strings.Count(text, "\n") {
		t.Errorf("Lines: %d total, %d TODO; want %d, 2", total, todo, strings.Count(text, "\n"))
	}
}

// TestBuildSeesExtraManifests: the findings are those of the directory the
// spec goes to, its extra manifests included; one that does not parse fails
// the build, naming it.
func TestBuildSeesExtraManifests(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "route.yaml"), []byte("apiVersion: route.openshift.io/v1\nkind: Route\nmetadata: {name: r}\nspec: {to: {kind: Service, name: s}}\n"), 0o644)
	res, err := Build(context.Background(), &render.Renderer{}, Request{Ref: demoBundle, Dir: dir, Namespace: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Text), "  - api:route.openshift.io  # TODO: if the operator cannot run without it, add a stand-in CRD as an extra manifest\n") {
		t.Errorf("the Route's API is not answered:\n%s", res.Text)
	}
	os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("kind: [\n"), 0o644)
	if _, err := Build(context.Background(), &render.Renderer{}, Request{Ref: demoBundle, Dir: dir}); err == nil || !strings.Contains(err.Error(), "broken.yaml") {
		t.Errorf("broken extra manifest: %v", err)
	}
}

// TestHostileCSV: bundle text reaches the spec only in comments, escaped on
// one line, or as a validated value; the spec still renders strictly.
func TestHostileCSV(t *testing.T) {
	b := t.TempDir()
	copyDir(t, demoBundle, b)
	csv := filepath.Join(b, "manifests", "greeter-operator.clusterserviceversion.yaml")
	data := readFile(t, csv)
	data = strings.Replace(data, "    capabilities: Basic Install\n",
		"    capabilities: Basic Install\n    operatorframework.io/suggested-namespace: \"evil\\nkind: Secret\"\n", 1)
	data = strings.Replace(data, `"kind": "Greeter",`, `"kind": "Greeter\nspec:\n  bundle: x\u202e",`, 1)
	os.WriteFile(csv, []byte(data), 0o644)
	dir := t.TempDir()
	res, err := Build(context.Background(), &render.Renderer{}, Request{Ref: b, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	text := string(res.Text)
	if strings.Contains(text, "\nkind: Secret") || strings.Contains(text, "\nspec:\n  bundle: x") || strings.ContainsRune(text, '\u202e') {
		t.Fatalf("bundle text escaped its comment:\n%s", text)
	}
	if !strings.Contains(text, `the CSV's operatorframework.io/suggested-namespace "evil\nkind: Secret" is not a namespace name`) {
		t.Errorf("the unusable suggestion is not named:\n%s", text)
	}
	Write(dir, res.Text, false)
	strictRender(t, dir)
}

func TestNamespace(t *testing.T) {
	b, err := bundle.LoadDir(mustAbs(t, demoBundle))
	if err != nil {
		t.Fatal(err)
	}
	b.CSV = b.CSV.DeepCopy()
	b.CSV.Annotations[SuggestedNamespace] = "greeter-system"
	p, err := New(b, Source{Bundle: "./b"}, "")
	if err != nil || p.Namespace != "greeter-system" || p.nsTODO {
		t.Errorf("suggested: %q %v %v", p.Namespace, p.nsTODO, err)
	}
	if p, err = New(b, Source{Bundle: "./b"}, "mine"); err != nil || p.Namespace != "mine" {
		t.Errorf("chosen: %q %v", p.Namespace, err)
	}
	if _, err := New(b, Source{Bundle: "./b"}, "Not_A_Namespace"); err == nil || !strings.Contains(err.Error(), `--namespace "Not_A_Namespace": not a namespace name`) {
		t.Errorf("bad --namespace: %v", err)
	}
}

func mustAbs(t *testing.T, p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// TestInstallModes: watchNamespaces are written when the operator cannot
// watch every namespace; a guess (SingleNamespace, MultiNamespace) is a TODO.
func TestInstallModes(t *testing.T) {
	b, err := bundle.LoadDir(mustAbs(t, demoBundle))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		modes []v1alpha1.InstallModeType
		watch []string
		todo  bool
	}{
		{[]v1alpha1.InstallModeType{"AllNamespaces", "OwnNamespace"}, nil, false},
		{[]v1alpha1.InstallModeType{"OwnNamespace"}, []string{"ns"}, false},
		{[]v1alpha1.InstallModeType{"OwnNamespace", "SingleNamespace"}, []string{"ns"}, false},
		{[]v1alpha1.InstallModeType{"SingleNamespace"}, []string{"default"}, true},
		{[]v1alpha1.InstallModeType{"MultiNamespace"}, []string{"default"}, true},
	} {
		csv := b.CSV.DeepCopy()
		csv.Spec.InstallModes = nil
		for _, m := range c.modes {
			csv.Spec.InstallModes = append(csv.Spec.InstallModes, v1alpha1.InstallMode{Type: m, Supported: true})
		}
		p := &Plan{Namespace: "ns", Source: Source{Bundle: "./bundle"}}
		p.installMode(csv)
		if !slices.Equal(p.Watch, c.watch) || p.watchTODO != c.todo {
			t.Errorf("%v: watch %q todo %v, want %q %v", c.modes, p.Watch, p.watchTODO, c.watch, c.todo)
		}
	}
}

func rbacWarning(group, label string) requirements.Finding {
	msg := "only the operator's RBAC rules name " + group + " (no object of the render, no required CRD); the render does not ship it"
	if label != "" {
		msg = label + ": " + msg
	}
	return requirements.Finding{Category: requirements.API, Subject: group, Severity: requirements.Warning, Source: "ClusterRole/x rules", Message: msg, Fix: "verify, then accept \"api:" + group + "\""}
}

// TestGlobs: a glob only over the RBAC-only warnings of a family the bundle
// owns CRDs in, when two or more share it and no error does; never over a
// domain many projects share.
func TestGlobs(t *testing.T) {
	fs := []requirements.Finding{
		rbacWarning("backup.kubevirt.io", ""), rbacWarning("clone.kubevirt.io", ""),
		rbacWarning("nodemaintenance.medik8s.io", ""), rbacWarning("remediation.medik8s.io", ""),
		rbacWarning("route.openshift.io", "OpenShift-only API"), rbacWarning("config.openshift.io", "OpenShift-only API"),
		rbacWarning("velero.io", "provided by Velero"),
	}
	p := &Plan{}
	p.AnswerRest(fs, []string{"hco.kubevirt.io", "kubevirt.io", "operator.openshift.io"})
	got := p.Spec().Accept
	want := []string{"api:*.kubevirt.io", "api:config.openshift.io", "api:route.openshift.io", "api:nodemaintenance.medik8s.io", "api:remediation.medik8s.io", "api:velero.io"}
	if !slices.Equal(got, want) {
		t.Errorf("accept %q, want %q", got, want)
	}
	// An error in the family: no glob, the error stays its own entry.
	errF := rbacWarning("vm.kubevirt.io", "")
	errF.Severity, errF.Message = requirements.Required, "the render uses vm.kubevirt.io and does not ship it"
	p = &Plan{}
	p.AnswerRest(append(fs[:2:2], errF), []string{"kubevirt.io"})
	if got := p.Spec().Accept; slices.Contains(got, "api:*.kubevirt.io") || !slices.Contains(got, "api:vm.kubevirt.io") {
		t.Errorf("with an error in the family: %q", got)
	}
	// One finding: its own entry.
	p = &Plan{}
	p.AnswerRest(fs[:1], []string{"kubevirt.io"})
	if got := p.Spec().Accept; !slices.Equal(got, []string{"api:backup.kubevirt.io"}) {
		t.Errorf("one finding: %q", got)
	}
	text := string(p.Text("x"))
	if !strings.Contains(text, "# warning api:backup.kubevirt.io (from ClusterRole/x rules): \"only the operator's RBAC rules name\n  # backup.kubevirt.io (no object") {
		t.Errorf("a lone finding is not quoted:\n%s", text)
	}
}

// TestSharedComment: findings whose messages share their end are listed
// under one quote of it, each one's own beginning beside it.
func TestSharedComment(t *testing.T) {
	p := &Plan{}
	p.AnswerRest([]requirements.Finding{rbacWarning("a.example.org", ""), rbacWarning("velero.io", "provided by Velero")}, nil)
	text := string(p.Text("x"))
	for _, want := range []string{
		`# 2 warnings, each "… only the operator's RBAC rules name <group> (no object of the render, no`,
		"  - api:a.example.org\n",
		"  - api:velero.io  # provided by Velero\n",
		`# fix: verify, then accept "api:<group>"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
}

// TestScalar: every value reads back as the same string.
func TestScalar(t *testing.T) {
	for _, s := range []string{"plain", "yes", "No", "on", "1.10", "0.2.0", "v1", "api:*.kubevirt.io", "${OPERATOR_IMAGE}", "a: b", "trailing:", "#x", "x #y",
		"- item", "[a]", "{a}", "'q'", "\"q\"", "a\nb", "~", "null", "", "127.0.0.1:5000/repo", "./bundle", "../b", "@at", "*star", "&amp", "!tag", "%pct", "`bt`", "é"} {
		var got map[string]any
		if err := sigsyaml.Unmarshal([]byte("k: "+scalar(s)+"\n"), &got); err != nil {
			t.Errorf("%q as %s: %v", s, scalar(s), err)
			continue
		}
		if v, ok := got["k"].(string); !ok || v != s {
			t.Errorf("%q written %s reads back as %#v", s, scalar(s), got["k"])
		}
	}
}

func TestWrap(t *testing.T) {
	got := wrap("aaa bbb ccc dddddddddd e", 7)
	if !slices.Equal(got, []string{"aaa bbb", "ccc", "dddddddddd", "e"}) {
		t.Errorf("%q", got)
	}
}

// TestWrite: a spec is never replaced without force, never through a link,
// and nothing but olm-cmp.yaml is left in the directory.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(dir, []byte("one\n"), false); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, spec.FileName)
	if _, err := Write(dir, []byte("two\n"), false); err == nil || err.Error() != file+" exists: init never overwrites a spec; give --force to replace it, or -d another directory" {
		t.Errorf("second write: %v", err)
	}
	if readFile(t, file) != "one\n" {
		t.Error("the refused write changed the file")
	}
	if _, err := Write(dir, []byte("two\n"), true); err != nil || readFile(t, file) != "two\n" {
		t.Errorf("--force: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}

	link := t.TempDir()
	os.Symlink(file, filepath.Join(link, spec.FileName))
	if _, err := Write(link, []byte("x"), true); err == nil || !strings.Contains(err.Error(), "is a symbolic link: init does not write through it") {
		t.Errorf("symlink: %v", err)
	}
	yml := t.TempDir()
	os.WriteFile(filepath.Join(yml, "olm-cmp.yml"), []byte("x"), 0o644)
	if _, err := Write(yml, []byte("x"), true); err == nil || !strings.Contains(err.Error(), "olm-cmp.yml exists") {
		t.Errorf("olm-cmp.yml: %v", err)
	}
	if _, err := Write(filepath.Join(dir, "nope"), []byte("x"), false); err == nil || !strings.Contains(err.Error(), "no such directory: create it first") {
		t.Errorf("missing dir: %v", err)
	}
	if _, err := Write(file, []byte("x"), false); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("file as dir: %v", err)
	}
	// A directory nobody may write in, root included (sysfs).
	if f, err := os.CreateTemp("/sys", "probe"); err == nil {
		f.Close()
		os.Remove(f.Name())
	} else if _, err := os.Stat("/sys"); err == nil {
		if _, err := Write("/sys", []byte("x"), false); err == nil || err.Error() != "cannot write in /sys (permission denied): give -d a directory you can write to" {
			t.Errorf("unwritable: %v", err)
		}
	}
}

// TestLongSubject: an entry past spec.MaxAcceptLength is cut into a glob
// that still matches the finding (a 253-character group is a valid one).
func TestLongSubject(t *testing.T) {
	group := strings.Repeat("a", 60) + "." + strings.Repeat("b", 60) + "." + strings.Repeat("c", 60) + "." + strings.Repeat("d", 60) + ".example.é"
	p := &Plan{}
	p.AnswerRest([]requirements.Finding{rbacWarning(group, "")}, nil)
	got := p.Spec().Accept
	if len(got) != 1 || len(got[0]) > spec.MaxAcceptLength || !strings.HasSuffix(got[0], "*") || !strings.HasPrefix("api:"+group, strings.TrimSuffix(got[0], "*")) {
		t.Errorf("accept %q for %d-character key", got, len("api:"+group))
	}
	s := p.Spec()
	s.Bundle, s.Namespace = "./b", "ns"
	if err := s.Validate(); err != nil {
		t.Errorf("the spec does not validate: %v", err)
	}
}

// TestBuildLeavesOutOtherTools: the files of other tools beside the spec
// (an Argo CD Application, which the operator's own Application would
// deploy, a kustomization, a Helm chart, a values file, a hidden file) are
// left out by an exclude entry each, escaped when the name holds glob
// characters, and said; a manifest beside them is still rendered.
func TestBuildLeavesOutOtherTools(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"application.yaml":        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: demo, namespace: argocd}\nspec: {project: default}\n",
		"apps[1].yaml":            "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: demo}\n",
		"kustomization.yaml":      "resources: [cm.yaml]\n",
		"overlay.yml":             "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nmetadata: {name: o}\n",
		"Chart.yaml":              "apiVersion: v2\nname: x\nversion: 1.0.0\n",
		"values.yaml":             "replicaCount: 2\n",
		".pre-commit-config.yaml": "repos: []\n",
		"cm.yaml":                 "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
	}
	for n, text := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Build(context.Background(), &render.Renderer{}, Request{Ref: demoBundle, Dir: dir, Namespace: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.LeftOut {
		got = append(got, f.File+": "+f.Why)
	}
	want := []string{
		".pre-commit-config.yaml: a hidden file", "Chart.yaml: a Helm chart's Chart.yaml", "application.yaml: an Argo CD Application",
		"apps[1].yaml: an Argo CD ApplicationSet", "kustomization.yaml: a kustomization", "overlay.yml: a kustomization",
		"values.yaml: no Kubernetes object: document 1 has no apiVersion or kind",
	}
	if !slices.Equal(got, want) {
		t.Errorf("left out:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if line := `    exclude: [.pre-commit-config.yaml, Chart.yaml, application.yaml, "apps[[]1].yaml", kustomization.yaml, overlay.yml, values.yaml]`; !strings.Contains(string(res.Text), line+"\n") {
		t.Errorf("no line %s in:\n%s", line, res.Text)
	}
	if _, err := Write(dir, res.Text, false); err != nil {
		t.Fatal(err)
	}
	out := strictRender(t, dir)
	var kinds []string
	for _, m := range out.Manifests {
		for _, k := range []string{"kind: Application\n", "kind: ApplicationSet\n", "kind: Kustomization\n", "name: cm,", "name: cm\n"} {
			if strings.Contains(m, k) {
				kinds = append(kinds, strings.TrimSpace(strings.TrimSuffix(k, ",")))
			}
		}
	}
	if !slices.Equal(kinds, []string{"name: cm"}) {
		t.Errorf("rendered from beside the spec: %q, want only the ConfigMap cm", kinds)
	}
}

// TestBuildWarnsOutsideRepository: a bundle directory outside the Git
// repository holding DIR is written (the CLI renders it) with a warning
// that the plugin will refuse it; one inside gets none, nor does one when
// DIR is in no repository.
func TestBuildWarnsOutsideRepository(t *testing.T) {
	top := t.TempDir()
	repo, app := filepath.Join(top, "repo"), filepath.Join(top, "repo", "apps", "demo")
	copyDir(t, demoBundle, filepath.Join(top, "outside"))
	copyDir(t, demoBundle, filepath.Join(repo, "bundles", "demo"))
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, ref, root string
		want            []string
	}{
		{"outside", filepath.Join(top, "outside"), repo, []string{`spec.bundle "../../../outside": the bundle directory must be inside the repository (the Git repository of ` + app + ` is ` + repo + `): olm-cmp render takes it, Argo CD's plugin will refuse it; copy the directory into the repository, or name the bundle's image instead`}},
		{"inside", filepath.Join(repo, "bundles", "demo"), repo, nil},
		{"no repository", filepath.Join(top, "outside"), "", nil},
	} {
		res, err := Build(context.Background(), &render.Renderer{}, Request{Ref: c.ref, Dir: app, Namespace: "demo", RepoRoot: c.root})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(res.Warnings, c.want) {
			t.Errorf("%s: warnings %q, want %q", c.name, res.Warnings, c.want)
		}
	}
}

// TestPodSecurityLabel: the SCC findings are answered by the Pod Security
// label they ask for on the install namespace, beside their accept entry;
// a level the SCCs do not say is privileged, marked TODO.
func TestPodSecurityLabel(t *testing.T) {
	role := func(sccs string) string {
		return "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: a}\nrules:\n- apiGroups: [security.openshift.io]\n  resources: [securitycontextconstraints]\n  resourceNames: [" + sccs + "]\n  verbs: [use]\n"
	}
	for _, c := range []struct{ sccs, line string }{
		{"anyuid", "    pod-security.kubernetes.io/enforce: baseline\n"},
		{"my-custom-scc", "    pod-security.kubernetes.io/enforce: privileged  # TODO: privileged lets the pods do anything; set baseline or restricted if they need less (the SCCs they name say no level)\n"},
	} {
		nodes, err := (&kio.ByteReader{Reader: strings.NewReader(role(c.sccs)), OmitReaderAnnotations: true}).Read()
		if err != nil {
			t.Fatal(err)
		}
		b := &bundle.Bundle{CSV: &v1alpha1.ClusterServiceVersion{}}
		p := &Plan{Namespace: "ns", Source: Source{Bundle: "./bundle"}}
		p.AnswerRest(requirements.Report(requirements.Input{Bundle: b, Objects: nodes}), nil)
		text := string(p.Text("x"))
		for _, want := range []string{
			"  namespaceLabels:  # the Pod Security level the SecurityContextConstraints finding below asks for\n" + c.line,
			"  - openshift:securitycontextconstraints  # the label pod-security.kubernetes.io/enforce under namespaceLabels answers it\n",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: no %q in:\n%s", c.sccs, want, text)
			}
		}
		if s := p.Spec(); s.Validate() != nil || len(s.NamespaceLabels) != 1 {
			t.Errorf("%s: spec %v: %v", c.sccs, s.NamespaceLabels, s.Validate())
		}
	}
}

// TestConsoleObjectsExcluded: objects of the OpenShift console's API in the
// render (an error: nothing serves it elsewhere) are dropped with
// spec.exclude, under a comment naming them, not accepted.
func TestConsoleObjectsExcluded(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "sample.yaml"), []byte("apiVersion: console.openshift.io/v1\nkind: ConsoleYAMLSample\nmetadata: {name: s}\nspec: {title: t}\n"), 0o644)
	res, err := Build(context.Background(), &render.Renderer{}, Request{Ref: demoBundle, Dir: dir, Namespace: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	text := string(res.Text)
	want := "  # the OpenShift console's objects (ConsoleYAMLSample/s): nothing shows them without that console\n  exclude: [\"console.openshift.io/*\"]\n"
	if !strings.Contains(text, want) || strings.Contains(text, "- api:console.openshift.io") {
		t.Errorf("want %q and no accept entry for the console's API in:\n%s", want, text)
	}
}

// TestFirstAction: the TODO of an accepted error is the fix's first branch.
func TestFirstAction(t *testing.T) {
	for fix, want := range map[string]string{
		`if the operator cannot run without it, add a stand-in CRD as an extra manifest; otherwise accept "api:x" (spec.accept); on OpenShift, declare it in spec.clusterAPIs`: "if the operator cannot run without it, add a stand-in CRD as an extra manifest",
		`install it first (its own Application), then accept "dependency:x"`:                                                                                                   "install it first (its own Application)",
		`install prometheus-operator first and declare it in spec.clusterAPIs (monitoring.coreos.com/v1), or accept "api:monitoring.coreos.com"`:                               "install prometheus-operator first and declare it in spec.clusterAPIs (monitoring.coreos.com/v1)",
		`, then accept "x"`:            "act on the fix above first",
		strings.Repeat("do this ", 30): "act on the fix above first",
	} {
		if got := firstAction(fix); got != want {
			t.Errorf("firstAction(%q) = %q, want %q", fix, got, want)
		}
	}
}

// TestPreReleaseNote: a catalog's newest version chosen with no range is
// said to be a pre-release when it is one (OLM v1 takes it), with the range
// that leaves pre-releases out.
func TestPreReleaseNote(t *testing.T) {
	for _, c := range []struct{ version, rng, want string }{
		{"0.3.0-rc.1", "", `  version: "0.3.0-rc.1"  # the newest version, a pre-release: OLM v1 chooses pre-releases when no range is given; --version ">=0.0.0" (any release) leaves them out` + "\n"},
		{"0.2.0+build-1", "", `  version: "0.2.0+build-1"  # the newest version; a bump`},
		{"0.3.0-rc.1", ">=0.3.0-0", `  version: "0.3.0-rc.1"  # chosen from the range >=0.3.0-0;`},
	} {
		p := &Plan{Name: "g", Namespace: "ns", Source: Source{Catalog: "./catalog", Package: "g", Version: c.version, Range: c.rng}}
		if text := string(p.Text("x")); !strings.Contains(text, c.want) {
			t.Errorf("%s (range %q): no %q in:\n%s", c.version, c.rng, c.want, text)
		}
	}
}

// TestAnswerRan: for a package whose operator was seen needing APIs its
// bundle names only in RBAC rules (ranFacts), init declares them in
// clusterAPIs, saying why, and sets authReaderBinding; another package's
// same findings stay for AnswerRest to accept.
func TestAnswerRan(t *testing.T) {
	role := "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: a}\nrules:\n" +
		"- apiGroups: [cert-manager.io]\n  resources: [issuers, certificates]\n  verbs: [create, get]\n" +
		"- apiGroups: [monitoring.coreos.com]\n  resources: [servicemonitors]\n  verbs: [create, get]\n"
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(role), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	findings := requirements.Report(requirements.Input{Bundle: &bundle.Bundle{CSV: &v1alpha1.ClusterServiceVersion{}}, Objects: nodes})
	p := &Plan{Namespace: "ns", Source: Source{Bundle: "./bundle"}}
	p.AnswerRan("leader-worker-set", findings)
	s := p.Spec()
	if !slices.Equal(s.ClusterAPIs, []string{"cert-manager.io/v1", "monitoring.coreos.com/v1"}) || !s.AuthReaderBinding || s.Validate() != nil {
		t.Fatalf("clusterAPIs %q, authReaderBinding %v (%v)", s.ClusterAPIs, s.AuthReaderBinding, s.Validate())
	}
	text := string(p.Text("x"))
	for _, want := range []string{
		"  authReaderBinding: true\n",
		"  # seen running lws-operator: it stops at start (\"error initializing delegating authentication\")",
		"  # APIs lws-operator needs served before its CR reconciles (docs/olm-parity.md,",
		"  - cert-manager.io/v1  # TODO: install what serves it before the first sync\n",
		"  # seen running lws-operator: it applies a ServiceMonitor before its operand's Deployment",
		"  - monitoring.coreos.com/v1  # TODO: install what serves it before the first sync\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
	other := &Plan{Namespace: "ns", Source: Source{Bundle: "./bundle"}}
	other.AnswerRan("another-operator", findings)
	if s := other.Spec(); len(s.ClusterAPIs) != 0 || s.AuthReaderBinding {
		t.Errorf("another package: clusterAPIs %q, authReaderBinding %v; want neither", s.ClusterAPIs, s.AuthReaderBinding)
	}
}

// TestBuildLeaderWorkerSet: init's spec for the shared lws-operator bundle
// declares what the operator was seen needing, and renders strictly.
func TestBuildLeaderWorkerSet(t *testing.T) {
	b := filepath.Join("..", "..", "..", "shared", "bundles", "leader-worker-set-1.0.0")
	if _, err := os.Stat(b); err != nil {
		t.Skipf("%s absent: the shared bundles are next to the project checkout only", b)
	}
	dir := t.TempDir()
	res, err := Build(context.Background(), &render.Renderer{}, Request{Ref: b, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, res.Text, false); err != nil {
		t.Fatal(err)
	}
	strictRender(t, dir)
	f, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.Spec.ClusterAPIs, []string{"cert-manager.io/v1", "monitoring.coreos.com/v1"}) || !f.Spec.AuthReaderBinding ||
		slices.Contains(f.Spec.Accept, "api:cert-manager.io") || slices.Contains(f.Spec.Accept, "api:monitoring.coreos.com") {
		t.Errorf("clusterAPIs %q, authReaderBinding %v, accept %q", f.Spec.ClusterAPIs, f.Spec.AuthReaderBinding, f.Spec.Accept)
	}
}
