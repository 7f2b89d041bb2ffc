package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/badinput"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/diff"
	"github.com/olm-cmp/olm-cmp/internal/safety"
)

// runStatus runs olm-cmp as main does and returns stdout, stderr and the
// exit status.
func runStatus(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCmd()
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append(args, "--cache-dir", t.TempDir()))
	cmd, err := root.ExecuteC()
	code := exitStatus(cmd, err, &errOut)
	return out.String(), errOut.String(), code
}

// jsonReport is what `diff -o json` prints (docs/diff.md).
type jsonReport struct {
	From, To     diff.Side
	Safety       []safety.Finding
	Requirements diff.Requirements
	Added        []diff.Object
	Removed      []diff.Removed
	Changed      []diff.Change
}

func diffJSON(t *testing.T, wantCode int, args ...string) jsonReport {
	t.Helper()
	out, stderr, code := runStatus(t, append([]string{"diff", "-o", "json"}, args...)...)
	if code != wantCode {
		t.Fatalf("exit status %d, want %d; stderr:\n%s", code, wantCode, stderr)
	}
	var r jsonReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON (%v):\n%.500s", err, out)
	}
	return r
}

func (r jsonReport) change(kind, name string) *diff.Change {
	for i, c := range r.Changed {
		if c.Kind == kind && (c.Name == name || name == "") {
			return &r.Changed[i]
		}
	}
	return nil
}

// assertRBACPaired fails when a kind of RBAC object is both added and
// removed: a hashed role that was not paired by its ServiceAccount.
func assertRBACPaired(t *testing.T, r jsonReport) {
	t.Helper()
	for _, a := range r.Added {
		for _, d := range r.Removed {
			if a.Group == "rbac.authorization.k8s.io" && a.Kind == d.Kind && a.Namespace == d.Namespace {
				t.Errorf("%s added and %s removed: hashed RBAC not paired", a, d.Object)
			}
		}
	}
}

// specDir writes an olm-cmp.yaml naming bundle into a new directory.
func specDir(t *testing.T, bundle, namespace string) string {
	t.Helper()
	dir := t.TempDir()
	doc := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: " + bundle + "\n  namespace: " + namespace + "\n"
	if err := os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func sharedBundle(t *testing.T, name string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("../../../shared/bundles", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("../shared/bundles/%s is absent (reference data outside the repository): %v", name, err)
	}
	return dir
}

func TestDiffSharedBumps(t *testing.T) {
	type want struct{ kind, name, summary string }
	cases := []struct {
		from, to, namespace string
		code                int
		// safety are the findings crdify gives, as rule + CRD + path.
		safety  []string
		changed []want
	}{
		{
			from: "cert-manager-operator-1.19.1", to: "cert-manager-operator-1.20.0", namespace: "cert-manager-operator",
			code: diffChanges,
			changed: []want{
				{"Deployment", "cert-manager-operator-controller-manager", "container cert-manager-operator: RELATED_IMAGE_CERT_MANAGER_CONTROLLER quay.io/jetstack/cert-manager-controller:v1.19.5 -> quay.io/jetstack/cert-manager-controller:v1.20.3"},
				{"CustomResourceDefinition", "issuers.cert-manager.io", "v1: field added .spec.acme.solvers[*].dns01.azureDNS.zoneType"},
				{"CustomResourceDefinition", "challenges.acme.cert-manager.io", "v1: field added .spec.solver.dns01.azureDNS.zoneType"},
				{"CustomResourceDefinition", "orders.acme.cert-manager.io", "labels or annotations only"},
				// The operator's hashed ClusterRole: paired, with its rule diff.
				{"ClusterRole", "", "rule create,delete,get,list,patch,update,watch on gateway.networking.k8s.io: resources added listenersets, listenersets/finalizers"},
				{"ClusterRoleBinding", "", "renamed from cert-manager-operat-"},
			},
		},
		{
			from: "loki-operator-0.10.2", to: "loki-operator-0.11.0", namespace: "loki-operator",
			// 0.11.0 drops a status field of LokiStack v1: OLM v1's preflight
			// refuses this bump too.
			code:   diffUnsafe,
			safety: []string{"error existingFieldRemoval lokistacks.loki.grafana.com v1 .status.networkPolicyRuleSet"},
			changed: []want{
				{"Deployment", "loki-operator-controller-manager", "container manager: image docker.io/grafana/loki-operator:0.10.2 -> docker.io/grafana/loki-operator:0.11.0"},
				{"Deployment", "loki-operator-controller-manager", "container manager: RELATED_IMAGE_LOKI docker.io/grafana/loki:3.6.5 -> docker.io/grafana/loki:3.7.3"},
				{"CustomResourceDefinition", "lokistacks.loki.grafana.com", "v1: field removed .status.networkPolicyRuleSet"},
				{"CustomResourceDefinition", "alertingrules.loki.grafana.com", "labels or annotations only"},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.to, func(t *testing.T) {
			from := specDir(t, sharedBundle(t, tc.from), tc.namespace)
			to := specDir(t, sharedBundle(t, tc.to), tc.namespace)
			r := diffJSON(t, tc.code, from, to)
			var got []string
			for _, f := range r.Safety {
				got = append(got, strings.Join([]string{string(f.Severity), f.Rule, f.CRD, f.Version, f.Path}, " "))
			}
			if !slices.Equal(got, tc.safety) {
				t.Errorf("safety findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.safety, "\n"))
			}
			if !strings.HasSuffix(r.From.CSV, strings.TrimPrefix(tc.from, tc.namespace+"-")) || !strings.HasSuffix(r.To.CSV, strings.TrimPrefix(tc.to, tc.namespace+"-")) {
				t.Errorf("sides: %+v -> %+v", r.From, r.To)
			}
			if len(r.Added)+len(r.Removed) != 0 {
				t.Errorf("added %v, removed %v: the bump changes objects, it adds or removes none", r.Added, r.Removed)
			}
			assertRBACPaired(t, r)
			for _, w := range tc.changed {
				c := r.change(w.kind, w.name)
				if c == nil {
					t.Errorf("%s %s not reported as changed", w.kind, w.name)
					continue
				}
				if !slices.ContainsFunc(c.Summary, func(s string) bool { return strings.HasPrefix(s, w.summary) }) {
					t.Errorf("%s summary lacks %q:\n%s", c.Object, w.summary, strings.Join(c.Summary, "\n"))
				}
				if !strings.HasPrefix(c.Diff, "--- from/") {
					t.Errorf("%s has no unified diff", c.Object)
				}
			}
		})
	}
}

// TestDiffGitBase is the CI case: a repository with a spec and a bundle
// directory next to it at HEAD, then a bump in the working tree.
func TestDiffGitBase(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := t.TempDir()
	gitRun := func(args ...string) {
		t.Helper()
		c := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	old := filepath.Join(repo, "bundles", "greeter-0.2.0")
	if err := os.CopyFS(old, os.DirFS("../../examples/demo/bundle")); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(repo, "apps", "greeter")
	os.MkdirAll(app, 0o755)
	spec := "# the greeter operator\napiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ../../bundles/greeter-0.2.0\n  namespace: greeter-system\n"
	os.WriteFile(filepath.Join(app, "olm-cmp.yaml"), []byte(spec), 0o644)
	gitRun("init", "-q")
	gitRun("add", "-A")
	gitRun("commit", "-qm", "greeter 0.2.0")

	// The bump: a new bundle directory (new image, one more verb), and the
	// spec pointing at it.
	bumped := filepath.Join(repo, "bundles", "greeter-0.3.0")
	if err := os.CopyFS(bumped, os.DirFS(old)); err != nil {
		t.Fatal(err)
	}
	csvPath := filepath.Join(bumped, "manifests", "greeter-operator.clusterserviceversion.yaml")
	csv, _ := os.ReadFile(csvPath)
	text := strings.NewReplacer("v0.2.0", "v0.3.0", "version: 0.2.0", "version: 0.3.0",
		`verbs: ["get", "list", "watch", "update", "patch"]`, `verbs: ["get", "list", "watch", "update", "patch", "delete"]`).Replace(string(csv))
	if text == string(csv) || !strings.Contains(text, `"patch", "delete"]`) {
		t.Fatal("the demo CSV changed: update this test's edits")
	}
	os.WriteFile(csvPath, []byte(text), 0o644)
	os.WriteFile(filepath.Join(app, "olm-cmp.yaml"), []byte(strings.Replace(spec, "greeter-0.2.0", "greeter-0.3.0", 1)), 0o644)

	r := diffJSON(t, diffChanges, app, "--git-base", "HEAD")
	if r.From.Version != "0.2.0" || r.To.Version != "0.3.0" || !strings.HasPrefix(r.From.Source, "../../bundles/greeter-0.2.0 (sha256:") {
		t.Errorf("sides: %+v -> %+v", r.From, r.To)
	}
	assertRBACPaired(t, r)
	if c := r.change("Deployment", "greeter-operator-controller"); c == nil || !slices.Contains(c.Summary, "container manager: image quay.io/olm-cmp/greeter-operator:v0.2.0 -> quay.io/olm-cmp/greeter-operator:v0.3.0") {
		t.Errorf("Deployment change: %+v", c)
	}
	if c := r.change("ClusterRole", ""); c == nil || c.PreviousName == "" || c.PreviousName == c.Name ||
		!slices.ContainsFunc(c.Summary, func(s string) bool { return strings.HasPrefix(s, "rule added: get,list,watch,update,patch,delete on") }) {
		t.Errorf("hashed ClusterRole not paired with its rule diff: %+v", c)
	}
	// Markdown, the form CI posts.
	out, _, code := runStatus(t, "diff", app, "--git-base", "HEAD", "-o", "markdown")
	if code != diffChanges || !strings.Contains(out, "### olm-cmp diff: `greeter-operator 0.2.0 -> 0.3.0`") || !strings.Contains(out, "<details><summary>Deployment.apps greeter-system/greeter-operator-controller</summary>") {
		t.Errorf("markdown (status %d):\n%.1500s", code, out)
	}
	// An application that is new in the working tree: everything is added.
	fresh := filepath.Join(repo, "apps", "new")
	os.CopyFS(fresh, os.DirFS(app))
	if r := diffJSON(t, diffChanges, fresh, "--git-base", "HEAD"); len(r.Added) == 0 || len(r.Changed)+len(r.Removed) != 0 || !strings.Contains(r.From.Source, "no olm-cmp.yaml at HEAD") {
		t.Errorf("new application: %d added, %d changed, %d removed, from %q", len(r.Added), len(r.Changed), len(r.Removed), r.From.Source)
	}
	// A revision the clone lacks: status 3, and what to do.
	if _, stderr, code := runStatus(t, "diff", app, "--git-base", "origin/main"); code != diffRenderError || !strings.Contains(stderr, "fetch-depth: 0") {
		t.Errorf("missing revision: status %d, %s", code, stderr)
	}
}

func TestDiffForms(t *testing.T) {
	bumped := t.TempDir()
	if err := os.CopyFS(bumped, os.DirFS("../../examples/demo/bundle")); err != nil {
		t.Fatal(err)
	}
	csvPath := filepath.Join(bumped, "manifests", "greeter-operator.clusterserviceversion.yaml")
	csv, _ := os.ReadFile(csvPath)
	os.WriteFile(csvPath, []byte(strings.ReplaceAll(string(csv), "greeter-operator:v0.2.0", "greeter-operator:v0.2.1")), 0o644)

	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string // in the text output
		stderr string
	}{
		// Without a TO side DIR would be compared with itself: "no changes"
		// for a CI job that forgot --git-base.
		{"no TO side", []string{"../../examples/demo"}, diffRenderError, "", "give the TO side with --to-version V, --to-bundle REF or a spec flag"},
		{"same spec, given twice", []string{"../../examples/demo", "../../examples/demo/olm-cmp.yaml"}, diffNoChanges, "# no changes", ""},
		{"--to-bundle of a missing directory", []string{"../../examples/demo", "--to-bundle", "./nonexist"}, diffRenderError, "", "error: --to-bundle ./nonexist: no such directory (a path is relative to the working directory)\n"},
		{"--to-bundle of a file", []string{"../../examples/demo", "--to-bundle", "../../examples/demo/olm-cmp.yaml"}, diffRenderError, "", "--to-bundle ../../examples/demo/olm-cmp.yaml: not a directory"},
		{"--bundle of a missing directory", []string{"../../examples/demo", "--bundle", "../nonexist"}, diffRenderError, "", "error: --bundle ../nonexist: no such directory"},
		{"spec flag changes TO", []string{"../../examples/demo", "-n", "moved"}, diffChanges, "+ Namespace moved", ""},
		{"two directories", []string{"../../examples/demo", "../../examples/demo"}, diffNoChanges, "# no changes", ""},
		{"--to-bundle with a directory", []string{"../../examples/demo", "--to-bundle", bumped}, diffChanges,
			"  * container manager: image mirror.example.com/olm-cmp/greeter-operator:v0.2.0 -> mirror.example.com/olm-cmp/greeter-operator:v0.2.1", ""},
		{"--to-version on a directory bundle", []string{"../../examples/demo", "--to-version", "0.3.0"}, diffRenderError, "", "give the new bundle's directory with --to-bundle DIR"},
		{"unknown flag", []string{"../../examples/demo", "--no-such-flag"}, diffRenderError, "", "unknown flag"},
		{"bad --fail-on", []string{"../../examples/demo", "--fail-on", "info"}, diffRenderError, "", "--fail-on \"info\": use error or warning"},
		{"two dirs and a target", []string{"a", "b", "--to-version", "1"}, diffRenderError, "", "take one DIR"},
		{"missing spec", []string{t.TempDir(), "-n", "x"}, diffRenderError, "", "olm-cmp.yaml"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := runStatus(t, append([]string{"diff"}, tc.args...)...)
			if code != tc.code || !strings.Contains(out, tc.stdout) || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("status %d (want %d)\nstdout:\n%.800s\nstderr:\n%s", code, tc.code, out, stderr)
			}
		})
	}
	// Other commands keep status 1 for errors.
	if _, _, code := runStatus(t, "render", "--no-such-flag"); code != 1 {
		t.Errorf("render with a bad flag: status %d, want 1", code)
	}
}

func TestDiffStatus(t *testing.T) {
	warn := safety.Finding{Severity: safety.Warning, Rule: "upgradeEdge", Message: "m"}
	fail := safety.Finding{Severity: safety.Error, Rule: "scope", Message: "m"}
	acked := safety.Finding{Severity: safety.Error, Rule: "scope", Message: "m", Acknowledged: "judged"}
	changed := []diff.Change{{Object: diff.Object{Kind: "ConfigMap", Name: "x"}}}
	cases := []struct {
		name     string
		findings []safety.Finding
		changed  []diff.Change
		failOn   safety.Severity
		want     int
	}{
		{"nothing", nil, nil, safety.Error, diffNoChanges},
		{"changes", nil, changed, safety.Error, diffChanges},
		{"a warning below --fail-on error", []safety.Finding{warn}, changed, safety.Error, diffChanges},
		{"a warning at --fail-on warning", []safety.Finding{warn}, changed, safety.Warning, diffUnsafe},
		{"an error", []safety.Finding{warn, fail}, changed, safety.Error, diffUnsafe},
		{"an error at --fail-on warning", []safety.Finding{fail}, changed, safety.Warning, diffUnsafe},
		{"an acknowledged error", []safety.Finding{acked}, changed, safety.Error, diffChanges},
		{"an acknowledged error at --fail-on warning", []safety.Finding{acked}, changed, safety.Warning, diffChanges},
		{"an acknowledged error and a warning at --fail-on warning", []safety.Finding{acked, warn}, changed, safety.Warning, diffUnsafe},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &diff.Report{Safety: tc.findings, Changed: tc.changed}
			if got := diffStatus(r, tc.failOn); got != tc.want {
				t.Errorf("status %d, want %d", got, tc.want)
			}
		})
	}
}

// TestDiffToVersion bumps an image bundle's tag: the tag in spec.bundle is
// replaced, not added to.
func TestDiffToVersion(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	bundletest.PushDir(t, host, "demo/greeter-bundle", "v0.2.0", "../../examples/demo/bundle")
	bumped := t.TempDir()
	if err := os.CopyFS(bumped, os.DirFS("../../examples/demo/bundle")); err != nil {
		t.Fatal(err)
	}
	csvPath := filepath.Join(bumped, "manifests", "greeter-operator.clusterserviceversion.yaml")
	csv, _ := os.ReadFile(csvPath)
	os.WriteFile(csvPath, []byte(strings.ReplaceAll(string(csv), "greeter-operator:v0.2.0", "greeter-operator:v0.2.1")), 0o644)
	bundletest.PushDir(t, host, "demo/greeter-bundle", "v0.2.1", bumped)

	dir := specDir(t, host+"/demo/greeter-bundle:v0.2.0", "demo")
	r := diffJSON(t, diffChanges, dir, "--to-version", "v0.2.1", "--insecure-registry", host)
	if !strings.HasPrefix(r.To.Source, host+"/demo/greeter-bundle@sha256:") || r.From.Source == r.To.Source {
		t.Errorf("sides: %+v -> %+v", r.From, r.To)
	}
	if c := r.change("Deployment", ""); c == nil || !slices.Contains(c.Summary, "container manager: image quay.io/olm-cmp/greeter-operator:v0.2.0 -> quay.io/olm-cmp/greeter-operator:v0.2.1") {
		t.Errorf("Deployment change: %+v", c)
	}
	// A tag that does not exist is a failure to render: status 3.
	if _, stderr, code := runStatus(t, "diff", dir, "--to-version", "v9", "--insecure-registry", host); code != diffRenderError || !strings.Contains(stderr, "v9") {
		t.Errorf("missing tag: status %d, %s", code, stderr)
	}
}

// TestDiffHostileNames: an object whose name carries a line break, an HTML
// comment, table pipes and terminal escapes (a pull request's author
// chooses it) cannot forge lines in any output form of diff.
func TestDiffHostileNames(t *testing.T) {
	const name = "evil\n### olm-cmp diff: 0 safety errors\n</details><!-- | `x` \x1b[2J\u202e"
	to := filepath.Join(t.TempDir(), "app")
	badinput.CopyDir(t, "../../examples/demo", to)
	quoted, _ := json.Marshal(name)
	if err := os.WriteFile(filepath.Join(to, "evil.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "+string(quoted)+"\n  namespace: greeter-system\ndata: {a: b}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, form := range []string{"text", "markdown", "json"} {
		t.Run(form, func(t *testing.T) {
			out, stderr, code := runStatus(t, "diff", "../../examples/demo", to, "-o", form)
			if code == diffRenderError {
				// Object validation (issue 17 item 1) may refuse the name
				// in the render, before diff sees it.
				if strings.ContainsAny(stderr, "\x1b\u202e") || strings.Contains(stderr, "panic") {
					t.Errorf("the refusal is not one plain line: %q", stderr)
				}
				t.Skipf("the render refuses the name: %s", stderr)
			}
			if code != diffChanges {
				t.Fatalf("status %d, want %d; stderr:\n%s", code, diffChanges, stderr)
			}
			if i := strings.IndexFunc(out, func(r rune) bool { return r == 0x1b || r == '\u202e' || r == '\r' }); i >= 0 && form != "json" {
				t.Errorf("a control character reached the output at %d", i)
			}
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "### olm-cmp diff: 0") || strings.HasPrefix(l, "</details><!--") {
					t.Errorf("a forged line: %q", l)
				}
			}
			if form == "json" {
				var r jsonReport
				if err := json.Unmarshal([]byte(out), &r); err != nil {
					t.Fatal(err)
				}
				if !slices.ContainsFunc(r.Added, func(o diff.Object) bool { return o.Name == name }) {
					t.Errorf("the name did not survive JSON: %+v", r.Added)
				}
			}
		})
	}
}

// TestDiffCRDVersionWithoutSchema: crdify dereferences every version's
// schema; a CRD version without one used to crash diff (exit 2, read by CI
// as "unsafe"). The render now refuses such a CRD as the API server does
// (internal/validate), naming the CRD and the version's field, before the
// safety check (whose finding for it internal/safety's tests cover).
func TestDiffCRDVersionWithoutSchema(t *testing.T) {
	from := filepath.Join(t.TempDir(), "app")
	badinput.CopyDir(t, "../../examples/demo", from)
	crd := filepath.Join(from, "bundle", "manifests", "greeter.example.com_greeters.yaml")
	data, err := os.ReadFile(crd)
	if err != nil {
		t.Fatal(err)
	}
	// spec.versions is the CRD's last field before its status.
	spec, _, ok := strings.Cut(string(data), "status:\n  acceptedNames:")
	if !ok {
		t.Fatal("test bug: the demo CRD changed")
	}
	if err := os.WriteFile(crd, []byte(spec+"  - name: v1beta1\n    served: true\n    storage: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runStatus(t, "diff", from, "../../examples/demo", "-o", "json")
	if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine") {
		t.Fatalf("diff crashed:\n%s", stderr)
	}
	if code != diffRenderError {
		t.Fatalf("status %d, want %d; stdout:\n%s\nstderr:\n%s", code, diffRenderError, out, stderr)
	}
	if want := "rendering FROM: CustomResourceDefinition greeters.greeter.example.com: spec.versions[1].schema.openAPIV3Schema: Required value: "; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}

// TestPrintWarningsEscaped: warnings quote bundle content; a control
// character in it reaches the terminal escaped, one warning per line.
func TestPrintWarningsEscaped(t *testing.T) {
	var b bytes.Buffer
	printWarnings(&b, []string{"image \"a\x1b[2J\nwarning: forged\u202e\" matches nothing"})
	if got, want := b.String(), `warning: image "a\x1b[2J\nwarning: forged\u202e" matches nothing`+"\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
}
