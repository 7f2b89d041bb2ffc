// Package bot tests the upgrade bot of deploy/bot end to end: the script
// (deploy/bot/olm-cmp-upgrade-bot.sh) runs in a real Git clone whose remote
// is a bare repository, with the olm-cmp binary built from this checkout,
// an in-process registry serving several versions of bundles and a catalog
// image, and recording stand-ins for gh and glab on PATH (standin_test.go).
package bot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
)

const (
	root       = "../.."
	script     = root + "/deploy/bot/olm-cmp-upgrade-bot.sh"
	demoBundle = root + "/examples/demo/bundle"
)

// olmCmp is the binary built from this checkout (TestMain).
var olmCmp string

func TestMain(m *testing.M) {
	if tool := os.Getenv(envStandIn); tool != "" {
		os.Exit(runStandIn(tool, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	bin, err := os.MkdirTemp("", "olm-cmp-bot-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// olm-cmp and, beside it, the olm-cmp-check it runs, as installed.
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "./cmd/olm-cmp", "./cmd/olm-cmp-check")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building olm-cmp: %v\n%s", err, out)
		os.Exit(1)
	}
	olmCmp = filepath.Join(bin, "olm-cmp")
	code := m.Run()
	os.RemoveAll(bin)
	os.Exit(code)
}

// env is one repository of applications, its bare remote, a forge and the
// tools the bot runs.
type env struct {
	t      *testing.T
	host   string // the registry
	remote string // the bare repository
	clone  string // the checkout the bot runs in
	bin    string // olm-cmp, gh, glab
	forge  string // the stand-ins' state and call log
	home   string
	seen   int // calls already returned by newCalls
}

func tools(t *testing.T) {
	for _, tool := range []string{"git", "bash", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (the bot needs it)", tool)
		}
	}
}

func newEnv(t *testing.T, host string) *env {
	t.Helper()
	tools(t)
	e := &env{t: t, host: host, remote: filepath.Join(t.TempDir(), "remote.git"), clone: filepath.Join(t.TempDir(), "clone"),
		bin: t.TempDir(), forge: t.TempDir(), home: t.TempDir()}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"olm-cmp": "#!/bin/sh\nexec '" + olmCmp + "' \"$@\"\n",
		"gh":      "#!/bin/sh\n" + envStandIn + "=gh exec '" + self + "' \"$@\"\n",
		"glab":    "#!/bin/sh\n" + envStandIn + "=glab exec '" + self + "' \"$@\"\n",
	} {
		if err := os.WriteFile(filepath.Join(e.bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.git("", "init", "-q", "--bare", "-b", "main", e.remote)
	e.git("", "clone", "-q", e.remote, e.clone)
	return e
}

func (e *env) environ(extra ...string) []string {
	env := append(os.Environ(),
		"PATH="+e.bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+e.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"OLM_CMP_INSECURE_REGISTRIES="+e.host, "OLM_CMP_CACHE_DIR="+filepath.Join(e.home, "cache"),
		envForgeDir+"="+e.forge,
		// The job's own variables, left unset: the tests set what they need.
		"GITHUB_RUN_ID=", "CI_JOB_URL=", "GITLAB_CI=", "CI_DEFAULT_BRANCH=",
	)
	return append(env, extra...)
}

// git runs git in dir (the clone when ""), as a person with an identity.
func (e *env) git(dir string, args ...string) string {
	e.t.Helper()
	if dir == "" {
		dir = e.clone
	}
	c := exec.Command("git", append([]string{"-c", "user.name=Person", "-c", "user.email=person@example.com", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
	if _, err := os.Stat(dir); err == nil {
		c.Dir = dir
	}
	c.Env = e.environ()
	out, err := c.CombinedOutput()
	if err != nil {
		e.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// olmCmp runs the binary in the clone.
func (e *env) olmCmp(args ...string) (string, int) {
	e.t.Helper()
	c := exec.Command(olmCmp, args...)
	c.Dir, c.Env = e.clone, e.environ()
	out, err := c.CombinedOutput()
	code := 0
	if x, ok := err.(*exec.ExitError); ok {
		code = x.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return string(out), code
}

// writeApp writes apps/NAME/olm-cmp.yaml with spec lines (two-space indented).
func (e *env) writeApp(name, specLines string) {
	e.t.Helper()
	dir := filepath.Join(e.clone, "apps", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	doc := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata:\n  name: " + name + "\nspec:\n" + specLines
	if err := os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), []byte(doc), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) commitAndPush(msg string) {
	e.t.Helper()
	e.git("", "add", "-A")
	e.git("", "commit", "-qm", msg)
	e.git("", "push", "-q", "origin", "HEAD:main")
}

// run runs the bot script in the clone and returns its output and status.
func (e *env) run(extra ...string) (string, int) {
	e.t.Helper()
	abs, err := filepath.Abs(script)
	if err != nil {
		e.t.Fatal(err)
	}
	c := exec.Command("bash", abs)
	c.Dir, c.Env = e.clone, e.environ(extra...)
	out, err := c.CombinedOutput()
	code := 0
	if x, ok := err.(*exec.ExitError); ok {
		code = x.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return string(out), code
}

// mustRun runs the bot and fails the test unless it exits 0.
func (e *env) mustRun(extra ...string) string {
	e.t.Helper()
	out, code := e.run(extra...)
	if code != 0 {
		e.t.Fatalf("the bot exited %d:\n%s", code, out)
	}
	return out
}

// branches maps the remote's branches to their commits.
func (e *env) branches() map[string]string {
	e.t.Helper()
	m := map[string]string{}
	out := e.git(e.remote, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads")
	for _, line := range strings.Split(out, "\n") {
		if name, sha, ok := strings.Cut(line, " "); ok {
			m[name] = sha
		}
	}
	return m
}

// show is a file on a branch of the remote.
func (e *env) show(branch, path string) string {
	e.t.Helper()
	return e.git(e.remote, "show", branch+":"+path)
}

func (e *env) state() *forgeState {
	e.t.Helper()
	s, err := loadState(e.forge)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// request is the forge's one request from branch, or nil.
func (e *env) request(branch string) *request {
	e.t.Helper()
	var found *request
	for _, r := range e.state().Requests {
		if r.Head == branch {
			if found != nil && r.State == "open" && found.State == "open" {
				e.t.Fatalf("two open requests from %s: #%d and #%d", branch, found.Number, r.Number)
			}
			if found == nil || r.State == "open" {
				found = r
			}
		}
	}
	return found
}

// newCalls returns the stand-in calls made since the last newCalls.
func (e *env) newCalls() []call {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.forge, "calls.jsonl"))
	if err != nil && !os.IsNotExist(err) {
		e.t.Fatal(err)
	}
	var all []call
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var c call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			e.t.Fatal(err)
		}
		all = append(all, c)
	}
	calls := all[e.seen:]
	e.seen = len(all)
	return calls
}

// writes are the calls that change the forge (anything but a list).
func writes(calls []call) []string {
	var out []string
	for _, c := range calls {
		if len(c.Args) >= 2 && c.Args[1] == "list" {
			continue
		}
		out = append(out, c.Tool+" "+strings.Join(c.Args, " "))
	}
	return out
}

// pushVersion pushes the demo bundle as version v of host/repo (tag "v"+v).
func pushVersion(t *testing.T, host, repo, v, replaces string, crdEdits ...string) string {
	t.Helper()
	return bundletest.PushDemoVersionTo(t, host, repo, demoBundle, v, replaces, crdEdits...)
}

// dropExtra removes the stored field .spec.extra from the demo's CRD: an
// upgrade OLM v1 refuses (existingFieldRemoval).
var dropExtra = []string{"              extra:\n                type: object\n                x-kubernetes-preserve-unknown-fields: true\n", ""}

// entry is one version in the catalog's channel stable.
type entry struct{ version, replaces, skips string }

// pushCatalog pushes host/demo/catalog:latest: a file-based catalog of
// package greeter-operator, channel stable, one bundle per entry (by
// digest).
func pushCatalog(t *testing.T, host string, entries []entry, digests map[string]string) {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(`{"schema":"olm.package","name":"greeter-operator","defaultChannel":"stable"}` + "\n")
	var es []string
	for _, e := range entries {
		s := `{"name":"greeter-operator.v` + e.version + `"`
		if e.replaces != "" {
			s += `,"replaces":"greeter-operator.v` + e.replaces + `"`
		}
		if e.skips != "" {
			s += `,"skips":["greeter-operator.v` + e.skips + `"]`
		}
		es = append(es, s+"}")
	}
	b.WriteString(`{"schema":"olm.channel","name":"stable","package":"greeter-operator","entries":[` + strings.Join(es, ",") + "]}\n")
	for _, e := range entries {
		fmt.Fprintf(&b, `{"schema":"olm.bundle","name":"greeter-operator.v%s","package":"greeter-operator","image":"%s/demo/greeter-bundle@%s","properties":[{"type":"olm.package","value":{"packageName":"greeter-operator","version":"%s"}}]}`+"\n", e.version, host, digests[e.version], e.version)
	}
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bundletest.Push(t, host, "demo/catalog", "latest", bundletest.CatalogImage(t, dir, "/configs"))
}

// The greeter versions: 0.11.0 replaces 0.10.2 and adds an optional field
// to the CRD, with a long description (a body worth cutting); 0.12.0,
// published later, replaces 0.11.0 and skips 0.10.2, so OLM moves 0.10.2
// straight to it.
var (
	greeterVersions = []entry{{"0.10.1", "0.10.0", ""}, {"0.10.2", "0.10.1", ""}, {"0.11.0", "0.10.2", ""}}
	greeter012      = entry{"0.12.0", "0.11.0", "0.10.2"}
	addField        = []string{"              replicas:\n", "              greeting:\n                type: string\n                description: " + strings.Repeat("The greeting the operator answers with. ", 60) + "\n              replicas:\n"}
)

// pushGreeter pushes version e of demo/greeter-bundle.
func pushGreeter(t *testing.T, host string, e entry) string {
	t.Helper()
	replaces := "greeter-operator.v" + e.replaces
	if e.skips != "" {
		replaces += "\n  skips:\n  - greeter-operator.v" + e.skips
	}
	var edits []string
	if e.version != "0.10.1" && e.version != "0.10.2" {
		edits = addField
	}
	return pushVersion(t, host, "demo/greeter-bundle", e.version, replaces, edits...)
}

// paramApp is the Argo CD Application of apps/param: it passes the version.
const paramApp = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: param
spec:
  source:
    repoURL: https://git.example.com/gitops.git
    path: apps/param
    plugin:
      name: olm-cmp-v1
      parameters:
      - {name: version, string: v0.10.2}
`

// fleet is the repository of the main test: five applications.
//
//	apps/greeter         image demo/greeter-bundle v0.10.2, pinned: 0.11.0 is a safe bump
//	apps/greeter-catalog catalog demo/catalog, package greeter-operator, 0.10.2
//	apps/strict          image demo/strict-bundle v0.10.2: 0.11.0 drops a stored field (blocked)
//	apps/solo            image demo/solo-bundle v1.0.0, its only version (current)
//	apps/param           image demo/param-bundle, v0.10.2 passed by argocd/param.yaml's Application
type fleet struct {
	*env
	digests map[string]string // greeter versions
}

func newFleet(t *testing.T) *fleet {
	host, _ := bundletest.NewRegistry(t)
	f := &fleet{env: newEnv(t, host), digests: map[string]string{}}
	for _, e := range greeterVersions {
		f.digests[e.version] = pushGreeter(t, host, e)
	}
	pushCatalog(t, host, greeterVersions, f.digests)
	pushVersion(t, host, "demo/strict-bundle", "0.10.2", "greeter-operator.v0.10.1")
	pushVersion(t, host, "demo/strict-bundle", "0.11.0", "greeter-operator.v0.10.2", dropExtra...)
	pushVersion(t, host, "demo/solo-bundle", "1.0.0", "greeter-operator.v0.9.0")
	pushVersion(t, host, "demo/param-bundle", "0.10.2", "greeter-operator.v0.10.1")
	pushVersion(t, host, "demo/param-bundle", "0.11.0", "greeter-operator.v0.10.2")

	f.writeApp("greeter", "  bundle: "+host+"/demo/greeter-bundle\n  version: v0.10.2  # the bot bumps this\n  namespace: greeter-system\n")
	f.writeApp("greeter-catalog", "  catalog: "+host+"/demo/catalog:latest\n  package: greeter-operator\n  channel: stable\n  version: \"0.10.2\"\n  namespace: greeter-catalog\n")
	// SelfCertified (spec.upgradeConstraintPolicy) changes nothing here
	// (0.11.0 replaces 0.10.2); the body names it.
	f.writeApp("strict", "  bundle: "+host+"/demo/strict-bundle\n  version: v0.10.2\n  namespace: strict\n  upgradeConstraintPolicy: SelfCertified\n")
	f.writeApp("solo", "  bundle: "+host+"/demo/solo-bundle\n  version: v1.0.0\n  namespace: solo\n")
	f.writeApp("param", "  bundle: "+host+"/demo/param-bundle\n  namespace: param\n")
	if err := os.MkdirAll(filepath.Join(f.clone, "argocd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.clone, "argocd", "param.yaml"), []byte(paramApp), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := f.olmCmp("resolve", "--write", "apps/greeter"); code != 0 {
		t.Fatalf("resolve --write apps/greeter: %d\n%s", code, out)
	}
	f.commitAndPush("five applications")
	return f
}

const (
	branchGreeter = "olm-cmp/upgrade/apps-greeter"
	branchCatalog = "olm-cmp/upgrade/apps-greeter-catalog"
	branchStrict  = "olm-cmp/upgrade/apps-strict"
	branchSolo    = "olm-cmp/upgrade/apps-solo"
	branchParam   = "olm-cmp/upgrade/apps-param"
)

// TestBotGitHub runs the bot against GitHub (gh) five times: the first run
// pushes a branch and opens one pull request per application that has a
// bump (a draft for the blocked one), the second changes nothing, a newer
// version refreshes the same pull request, and an application made current
// by a person has its pull request closed; a pull request a person closed
// is not reopened, and the request of an application removed from the base
// branch is closed.
func TestBotGitHub(t *testing.T) {
	t.Parallel() // each test has its own registry, repositories and forge
	f := newFleet(t)
	logURL := "OLM_CMP_BOT_LOG_URL=https://github.com/org/repo/actions/runs/1"

	// Run 1: three bumps, three pull requests.
	out := f.mustRun(logURL)
	t.Logf("run 1:\n%s", out)
	b := f.branches()
	for _, br := range []string{branchGreeter, branchCatalog, branchStrict, branchParam} {
		if b[br] == "" {
			t.Errorf("no branch %s pushed; the remote has %v", br, b)
		}
	}
	if b[branchSolo] != "" {
		t.Errorf("a branch was pushed for apps/solo, which is current")
	}
	spec := f.show(branchGreeter, "apps/greeter/olm-cmp.yaml")
	if !strings.Contains(spec, "version: v0.11.0") || !strings.Contains(spec, f.digests["0.11.0"]) || strings.Contains(spec, f.digests["0.10.2"]) {
		t.Errorf("%s's spec does not move version and pin to 0.11.0 together:\n%s", branchGreeter, spec)
	}
	if got := f.git(f.remote, "log", "--format=%an <%ae>", "-1", branchGreeter); got != "olm-cmp-bot <olm-cmp-bot@users.noreply.localhost>" {
		t.Errorf("the bump is committed by %q, want the bot", got)
	}
	if files := f.git(f.remote, "diff", "--name-only", "main", branchGreeter); files != "apps/greeter/olm-cmp.yaml" {
		t.Errorf("%s changes %q, want only apps/greeter/olm-cmp.yaml", branchGreeter, files)
	}
	if spec := f.show(branchCatalog, "apps/greeter-catalog/olm-cmp.yaml"); !strings.Contains(spec, "0.11.0") {
		t.Errorf("%s's spec does not name 0.11.0:\n%s", branchCatalog, spec)
	}

	greeter := f.request(branchGreeter)
	if greeter == nil {
		t.Fatalf("no pull request from %s; forge: %+v", branchGreeter, f.state().Requests)
	}
	for _, want := range []string{
		"greeter-operator 0.10.2 -> 0.11.0",
		"### olm-cmp diff: `greeter-operator 0.10.2 -> 0.11.0`",
		"No safety error",
		"apps/greeter/olm-cmp.yaml",
		"Upgrade edge of apps/greeter judged under `upgradeConstraintPolicy` CatalogProvided (the OLM v1 default: the new version must replace, skip or skip-range the current one).",
		"Job log: https://github.com/org/repo/actions/runs/1",
	} {
		if !strings.Contains(greeter.Body, want) {
			t.Errorf("the pull request's body lacks %q:\n%s", want, greeter.Body)
		}
	}
	if greeter.Draft || strings.Join(greeter.Labels, ",") != "olm-cmp:safe" || greeter.Base != "main" || !strings.Contains(greeter.Title, "greeter-operator v0.10.2 -> v0.11.0") {
		t.Errorf("pull request %+v: want a ready one into main labelled olm-cmp:safe, titled with the bump", *greeter)
	}
	strict := f.request(branchStrict)
	if strict == nil {
		t.Fatal("no pull request for the blocked bump of apps/strict: it must be opened as a draft, never skipped")
	}
	if !strict.Draft || strings.Join(strict.Labels, ",") != "olm-cmp:blocked" {
		t.Errorf("blocked bump: draft %v, labels %v; want a draft labelled olm-cmp:blocked", strict.Draft, strict.Labels)
	}
	for _, want := range []string{"Blocked by a safety error", "### olm-cmp diff: `greeter-operator 0.10.2 -> 0.11.0`", "| error | existingFieldRemoval | greeters.greeter.example.com | v1alpha1 | `.spec.extra` |",
		"Upgrade edge of apps/strict judged under `upgradeConstraintPolicy` SelfCertified (the spec says a person checked the upgrade: a missing replaces, skips or skipRange edge is only a warning)."} {
		if !strings.Contains(strict.Body, want) {
			t.Errorf("the blocked bump's body lacks %q:\n%s", want, strict.Body)
		}
	}
	// apps/param: the version moves in the Application, upgradeFrom in
	// olm-cmp.yaml; the review reads the Application (diff --apps-from,
	// the file upgrade's where names) at the base and now.
	if files := f.git(f.remote, "diff", "--name-only", "main", branchParam); files != "apps/param/olm-cmp.yaml\nargocd/param.yaml" {
		t.Errorf("%s changes %q, want the Application and olm-cmp.yaml", branchParam, files)
	}
	if app := f.show(branchParam, "argocd/param.yaml"); !strings.Contains(app, "{name: version, string: v0.11.0}") {
		t.Errorf("%s's Application:\n%s", branchParam, app)
	}
	if r := f.request(branchParam); r == nil || !strings.Contains(r.Body, "Application param (argocd/param.yaml") ||
		!strings.Contains(r.Body, "### olm-cmp diff: `greeter-operator 0.10.2 -> 0.11.0`") || strings.Contains(r.Body, "does not read") || strings.Contains(r.Body, "olm-cmp diff failed") {
		t.Errorf("apps/param: want a pull request whose body says where the version is kept and reviews 0.10.2 -> 0.11.0; got %+v", r)
	}
	if f.request(branchCatalog) == nil || f.request(branchSolo) != nil {
		t.Errorf("want a pull request for apps/greeter-catalog and none for apps/solo; forge: %+v", f.state().Requests)
	}
	for _, r := range f.state().Requests {
		if len(r.Body) > 65000 {
			t.Errorf("#%d: body of %d bytes, over the bot's 65,000", r.Number, len(r.Body))
		}
	}
	if w := writes(f.newCalls()); len(w) < 5 {
		t.Errorf("run 1 made %d forge writes, want label creation and four pull requests: %q", len(w), w)
	}

	// Run 2: nothing new, nothing done (another job log, too).
	before := f.branches()
	out = f.mustRun("OLM_CMP_BOT_LOG_URL=https://github.com/org/repo/actions/runs/2")
	if after := f.branches(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("run 2 moved branches:\nbefore %v\nafter  %v", before, after)
	}
	if w := writes(f.newCalls()); len(w) != 0 {
		t.Errorf("run 2 changed the forge: %q\n%s", w, out)
	}
	if n := len(f.state().Requests); n != 4 {
		t.Errorf("%d pull requests after run 2, want 4", n)
	}

	// Run 3: 0.12.0 is published; the same pull request is refreshed.
	f.digests["0.12.0"] = pushGreeter(t, f.host, greeter012)
	pushCatalog(t, f.host, append(greeterVersions, greeter012), f.digests)
	out = f.mustRun(logURL)
	t.Logf("run 3:\n%s", out)
	after := f.branches()
	if after[branchGreeter] == before[branchGreeter] || after[branchStrict] != before[branchStrict] {
		t.Errorf("run 3: want %s moved and %s kept:\nbefore %v\nafter  %v", branchGreeter, branchStrict, before, after)
	}
	if spec := f.show(branchGreeter, "apps/greeter/olm-cmp.yaml"); !strings.Contains(spec, "version: v0.12.0") || !strings.Contains(spec, f.digests["0.12.0"]) {
		t.Errorf("after 0.12.0 was published, %s holds:\n%s", branchGreeter, spec)
	}
	if n := f.git(f.remote, "rev-list", "--count", "main.."+branchGreeter); n != "1" {
		t.Errorf("%s is %s commits ahead of main, want 1 (the branch is rebuilt, not stacked)", branchGreeter, n)
	}
	refreshed := f.request(branchGreeter)
	if refreshed.Number != greeter.Number || !strings.Contains(refreshed.Title, "greeter-operator v0.10.2 -> v0.12.0") || !strings.Contains(refreshed.Body, "greeter-operator 0.10.2 -> 0.12.0") {
		t.Errorf("run 3: pull request #%d %q; want #%d refreshed to 0.12.0:\n%s", refreshed.Number, refreshed.Title, greeter.Number, refreshed.Body)
	}
	if n := len(f.state().Requests); n != 4 {
		t.Errorf("%d pull requests after run 3, want still 4 (refreshed, not opened)", n)
	}
	for _, w := range writes(f.newCalls()) {
		if strings.HasPrefix(w, "gh pr create") {
			t.Errorf("run 3 opened a pull request: %s", w)
		}
	}

	// Run 4: a person moves apps/greeter to 0.12.0 on main, and closes the
	// blocked pull request without merging it.
	if out, code := f.olmCmp("upgrade", "--write", "apps/greeter"); code != 2 {
		t.Fatalf("olm-cmp upgrade --write apps/greeter by hand: exit %d, want 2\n%s", code, out)
	}
	// ... and removes apps/greeter-catalog.
	f.git("", "rm", "-rq", "apps/greeter-catalog")
	f.commitAndPush("greeter 0.12.0, by hand; greeter-catalog removed")
	s := f.state()
	for _, r := range s.Requests {
		if r.Head == branchStrict {
			r.State = "closed"
		}
	}
	if err := saveState(f.forge, s); err != nil {
		t.Fatal(err)
	}
	out = f.mustRun(logURL)
	t.Logf("run 4:\n%s", out)
	if r := f.request(branchGreeter); r.State != "closed" || len(r.Comments) != 1 || !strings.Contains(r.Comments[0], "is current") {
		t.Errorf("apps/greeter is current on main: want #%d closed with a comment saying so, got %+v", r.Number, *r)
	}
	if b := f.branches(); b[branchGreeter] != "" {
		t.Errorf("the branch %s of a closed pull request is still on the remote", branchGreeter)
	}
	if r := f.request(branchCatalog); r.State != "closed" || len(r.Comments) != 1 || !strings.Contains(r.Comments[0], "no directory on main holds this application") {
		t.Errorf("apps/greeter-catalog was removed from main: want #%d closed with a comment saying so, got %+v", r.Number, *r)
	}
	if b := f.branches(); b[branchCatalog] != "" {
		t.Errorf("the branch %s of a removed application is still on the remote", branchCatalog)
	}
	if r := f.request(branchStrict); r.State != "closed" {
		t.Errorf("the pull request a person closed was reopened: %+v", *r)
	}
	if n := len(f.state().Requests); n != 4 {
		t.Errorf("%d pull requests after run 4, want 4 (the closed bump is not opened again)", n)
	}
}

// TestBotGitLab runs the bot as a GitLab CI job would (GITLAB_CI set, so
// glab) with a small body limit and upgrade flags passed through: merge
// requests are opened, the blocked one as a draft, every body within the
// limit with the cut said and the job log linked, the version an
// Application passes found through --apps-from, and a second run (another
// job) changes nothing.
func TestBotGitLab(t *testing.T) {
	t.Parallel() // each test has its own registry, repositories and forge
	f := newFleet(t)
	const limit = 2500
	job := func(n int) []string {
		return []string{"GITLAB_CI=true", "CI_DEFAULT_BRANCH=main", fmt.Sprintf("CI_JOB_URL=https://gitlab.example.com/org/repo/-/jobs/%d", n), fmt.Sprintf("OLM_CMP_BOT_MAX_BODY=%d", limit), "OLM_CMP_BOT_POLICY=olmv1", "OLM_CMP_BOT_UPGRADE_ARGS=--apps-from argocd/"}
	}
	// A directory named by someone hostile: its name is escaped in the
	// body and makes a valid branch name.
	const odd = "apps/Odd <b>|x_y-->"
	oddDir := filepath.Join(f.clone, filepath.FromSlash(odd))
	if err := os.CopyFS(oddDir, os.DirFS(filepath.Join(f.clone, "apps", "strict"))); err != nil {
		t.Fatal(err)
	}
	f.commitAndPush("an odd directory name")
	out := f.mustRun(job(1)...)
	t.Logf("run 1:\n%s", out)
	reqs := f.state().Requests
	if len(reqs) != 5 {
		t.Fatalf("%d merge requests, want 5: %+v", len(reqs), reqs)
	}
	oddReq := f.request("olm-cmp/upgrade/apps-odd--b--x_y")
	if oddReq == nil {
		t.Errorf("no merge request for %q", odd)
	} else if want := "<!-- olm-cmp-upgrade-bot: apps/Odd <b_|x_y-_ -->\n## olm-cmp upgrade: apps/Odd &lt;b&gt;\\|x\\_y--&gt;\n"; !strings.HasPrefix(oddReq.Body, want) {
		t.Errorf("the odd directory's request:\n%.300s\nwant it to start with:\n%s", oddReq.Body, want)
	}
	cut := 0
	for _, r := range reqs {
		if len(r.Body) > limit {
			t.Errorf("!%d: body of %d bytes, over OLM_CMP_BOT_MAX_BODY=%d", r.Number, len(r.Body), limit)
		}
		if strings.Contains(r.Body, "The whole `olm-cmp diff` output is in the job log (linked below).") {
			cut++
			if strings.Count(r.Body, "<details>") != strings.Count(r.Body, "</details>") || strings.Count(r.Body, "```")%2 != 0 {
				t.Errorf("!%d: the cut leaves a <details> or a code fence open:\n%s", r.Number, r.Body)
			}
			if !strings.HasSuffix(r.Body, "\n<sub>Job log: https://gitlab.example.com/org/repo/-/jobs/1</sub>") {
				t.Errorf("!%d: the body does not end with the job log's address:\n%s", r.Number, r.Body)
			}
		}
	}
	if cut == 0 {
		t.Errorf("no body says it was cut, with %d bytes for each", limit)
	}
	strict := f.request(branchStrict)
	if strict == nil || !strict.Draft || !strings.HasPrefix(strict.Title, "Draft: ") || strings.Join(strict.Labels, ",") != "olm-cmp:blocked" {
		t.Errorf("blocked bump: %+v; want a draft merge request labelled olm-cmp:blocked", strict)
	}
	if p := f.request(branchParam); p == nil || !strings.Contains(p.Title, "v0.10.2 -> v0.11.0") || strings.Contains(p.Body, "olm-cmp diff failed") || strings.Contains(p.Body, "does not read") {
		t.Errorf("apps/param (its version in argocd/param.yaml, read through --apps-from argocd/): %+v", p)
	}
	if g := f.request(branchGreeter); g == nil || g.Draft || strings.Join(g.Labels, ",") != "olm-cmp:safe" {
		t.Errorf("safe bump: %+v; want a merge request labelled olm-cmp:safe, not a draft", g)
	}
	f.newCalls()
	before := f.branches()
	out = f.mustRun(job(2)...)
	if w := writes(f.newCalls()); len(w) != 0 {
		t.Errorf("run 2 changed the forge: %q\n%s", w, out)
	}
	if after := f.branches(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("run 2 moved branches:\nbefore %v\nafter  %v", before, after)
	}
}

// TestBotSharedBundles: the pull request bodies for two real bumps,
// cert-manager-operator 1.19.1 -> 1.20.0 and loki-operator 0.10.2 -> 0.11.0
// (blocked: its CRD drops a stored field), from ../shared/bundles pushed to
// the in-process registry. With OLM_CMP_BOT_BODIES_DIR set, each body is
// written there as <package>.md.
func TestBotSharedBundles(t *testing.T) {
	t.Parallel() // each test has its own registry, repositories and forge
	shared := filepath.Join(root, "..", "shared", "bundles")
	if _, err := os.Stat(shared); err != nil {
		t.Skipf("../shared/bundles is absent (%v): the shared reference bundles are not on this machine", err)
	}
	host, _ := bundletest.NewRegistry(t)
	e := newEnv(t, host)
	for _, b := range []struct{ pkg, ns, from, to string }{
		{"cert-manager-operator", "cert-manager-operator", "1.19.1", "1.20.0"},
		{"loki-operator", "openshift-operators-redhat", "0.10.2", "0.11.0"},
	} {
		for _, v := range []string{b.from, b.to} {
			bundletest.PushDir(t, host, "shared/"+b.pkg+"-bundle", "v"+v, filepath.Join(shared, b.pkg+"-"+v))
		}
		e.writeApp(b.pkg, "  bundle: "+host+"/shared/"+b.pkg+"-bundle\n  version: v"+b.from+"\n  namespace: "+b.ns+"\n")
	}
	e.commitAndPush("two operators")
	out, code := e.run("OLM_CMP_BOT_LOG_URL=https://github.com/org/repo/actions/runs/1")
	t.Logf("bot:\n%s", out)
	if code != 0 {
		t.Fatalf("the bot exited %d", code)
	}
	cert, loki := e.request("olm-cmp/upgrade/apps-cert-manager-operator"), e.request("olm-cmp/upgrade/apps-loki-operator")
	if cert == nil || loki == nil {
		t.Fatalf("want a pull request for each operator; forge: %+v", e.state().Requests)
	}
	if !strings.Contains(cert.Body, "cert-manager-operator 1.19.1 -> 1.20.0") {
		t.Errorf("cert-manager-operator's body:\n%s", cert.Body)
	}
	if !loki.Draft || strings.Join(loki.Labels, ",") != "olm-cmp:blocked" || !strings.Contains(loki.Body, "loki-operator 0.10.2 -> 0.11.0") || !strings.Contains(loki.Body, "Blocked by a safety error") ||
		!strings.Contains(loki.Body, "| error | existingFieldRemoval | lokistacks.loki.grafana.com | v1 | `.status.networkPolicyRuleSet` |") {
		t.Errorf("loki-operator 0.10.2 -> 0.11.0 must be a blocked draft: draft %v, labels %v\n%s", loki.Draft, loki.Labels, loki.Body)
	}
	if dir := os.Getenv("OLM_CMP_BOT_BODIES_DIR"); dir != "" {
		for name, r := range map[string]*request{"cert-manager-operator": cert, "loki-operator": loki} {
			meta := fmt.Sprintf("<!-- title: %s | draft: %v | labels: %s -->\n", r.Title, r.Draft, strings.Join(r.Labels, ","))
			if err := os.WriteFile(filepath.Join(dir, name+".md"), []byte(meta+r.Body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
