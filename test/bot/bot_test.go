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
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "olm-cmp"), "./cmd/olm-cmp")
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

// pushVersion pushes the demo bundle as version v of host/repo (tag "v"+v),
// as bundletest.PushDemoVersion does for demo/greeter-bundle.
func pushVersion(t *testing.T, host, repo, v, replaces string, crdEdits ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := os.CopyFS(dir, os.DirFS(demoBundle)); err != nil {
		t.Fatal(err)
	}
	edit := func(file string, pairs ...string) {
		p := filepath.Join(dir, "manifests", file)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out := string(data)
		for i := 0; i+1 < len(pairs); i += 2 {
			if !strings.Contains(out, pairs[i]) {
				t.Fatalf("the demo's %s lacks %q: update this test", file, pairs[i])
			}
			out = strings.Replace(out, pairs[i], pairs[i+1], 1)
		}
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit("greeter-operator.clusterserviceversion.yaml",
		"name: greeter-operator.v0.2.0", "name: greeter-operator.v"+v,
		"version: 0.2.0", "version: "+v,
		"replaces: greeter-operator.v0.1.0", "replaces: "+replaces)
	edit("greeter.example.com_greeters.yaml", crdEdits...)
	return bundletest.PushDir(t, host, repo, "v"+v, dir)
}

// dropExtra removes the stored field .spec.extra from the demo's CRD: an
// upgrade OLM v1 refuses (existingFieldRemoval).
var dropExtra = []string{"              extra:\n                type: object\n                x-kubernetes-preserve-unknown-fields: true\n", ""}

// pushCatalog pushes host/demo/catalog:latest: a file-based catalog of
// package greeter-operator, channel stable, one bundle per version (by
// digest), each replacing the one before.
func pushCatalog(t *testing.T, host string, versions []string, digests map[string]string) {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(`{"schema":"olm.package","name":"greeter-operator","defaultChannel":"stable"}` + "\n")
	var entries []string
	for i, v := range versions {
		e := `{"name":"greeter-operator.v` + v + `"`
		if i > 0 {
			e += `,"replaces":"greeter-operator.v` + versions[i-1] + `"`
		}
		entries = append(entries, e+"}")
	}
	b.WriteString(`{"schema":"olm.channel","name":"stable","package":"greeter-operator","entries":[` + strings.Join(entries, ",") + "]}\n")
	for _, v := range versions {
		fmt.Fprintf(&b, `{"schema":"olm.bundle","name":"greeter-operator.v%s","package":"greeter-operator","image":"%s/demo/greeter-bundle@%s","properties":[{"type":"olm.package","value":{"packageName":"greeter-operator","version":"%s"}}]}`+"\n", v, host, digests[v], v)
	}
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bundletest.Push(t, host, "demo/catalog", "latest", bundletest.CatalogImage(t, dir, "/configs"))
}

// fleet is the repository of the main test: four applications.
//
//	apps/greeter         image demo/greeter-bundle v0.10.2, pinned: 0.11.0 is a safe bump
//	apps/greeter-catalog catalog demo/catalog, package greeter-operator, 0.10.2
//	apps/strict          image demo/strict-bundle v0.10.2: 0.11.0 drops a stored field (blocked)
//	apps/solo            image demo/solo-bundle v1.0.0, its only version (current)
type fleet struct {
	*env
	digests map[string]string // greeter versions
}

func newFleet(t *testing.T) *fleet {
	host, _ := bundletest.NewRegistry(t)
	f := &fleet{env: newEnv(t, host), digests: map[string]string{}}
	for _, v := range [][2]string{{"0.10.1", "0.10.0"}, {"0.10.2", "0.10.1"}, {"0.11.0", "0.10.2"}} {
		f.digests[v[0]] = pushVersion(t, host, "demo/greeter-bundle", v[0], "greeter-operator.v"+v[1])
	}
	pushCatalog(t, host, []string{"0.10.1", "0.10.2", "0.11.0"}, f.digests)
	pushVersion(t, host, "demo/strict-bundle", "0.10.2", "greeter-operator.v0.10.1")
	pushVersion(t, host, "demo/strict-bundle", "0.11.0", "greeter-operator.v0.10.2", dropExtra...)
	pushVersion(t, host, "demo/solo-bundle", "1.0.0", "greeter-operator.v0.9.0")

	f.writeApp("greeter", "  bundle: "+host+"/demo/greeter-bundle\n  version: v0.10.2  # the bot bumps this\n  namespace: greeter-system\n")
	f.writeApp("greeter-catalog", "  catalog: "+host+"/demo/catalog:latest\n  package: greeter-operator\n  channel: stable\n  version: \"0.10.2\"\n  namespace: greeter-catalog\n")
	f.writeApp("strict", "  bundle: "+host+"/demo/strict-bundle\n  version: v0.10.2\n  namespace: strict\n")
	f.writeApp("solo", "  bundle: "+host+"/demo/solo-bundle\n  version: v1.0.0\n  namespace: solo\n")
	if out, code := f.olmCmp("resolve", "--write", "apps/greeter"); code != 0 {
		t.Fatalf("resolve --write apps/greeter: %d\n%s", code, out)
	}
	f.commitAndPush("four applications")
	return f
}
