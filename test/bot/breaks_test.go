package bot

// Attacks on the bot as a hostile repository and an unlucky CI run would
// make them; each test failed before the fix it names.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"sigs.k8s.io/yaml"
)

// twoVersions pushes v0.10.2 and v0.11.0 (a safe bump) of host/demo/REPO.
func twoVersions(t *testing.T, host, repo string) {
	t.Helper()
	pushVersion(t, host, repo, "0.10.2", "greeter-operator.v0.10.1")
	pushVersion(t, host, repo, "0.11.0", "greeter-operator.v0.10.2")
}

// writeSpec writes DIR/olm-cmp.yaml (DIR relative to the clone) at v0.10.2.
func (e *env) writeSpec(dir, repo string) {
	e.t.Helper()
	p := filepath.Join(e.clone, dir)
	if err := os.MkdirAll(p, 0o755); err != nil {
		e.t.Fatal(err)
	}
	doc := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata:\n  name: app\nspec:\n  bundle: " + e.host + "/demo/" + repo + "\n  version: v0.10.2\n  namespace: app\n"
	if err := os.WriteFile(filepath.Join(p, "olm-cmp.yaml"), []byte(doc), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// runArgs runs the bot with arguments (run takes environment).
func (e *env) runArgs(args ...string) (string, int) {
	e.t.Helper()
	abs, err := filepath.Abs(script)
	if err != nil {
		e.t.Fatal(err)
	}
	c := exec.Command("bash", append([]string{abs}, args...)...)
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

func (e *env) openRequests() []*request {
	var out []*request
	for _, r := range e.state().Requests {
		if r.State == "open" {
			out = append(out, r)
		}
	}
	return out
}

// Directory names Git quotes in ls-tree (non-ASCII, a quote), one holding
// $(...) and one that looks like a flag: each gets its request, nothing is
// run. Before: the first two were skipped without a word (ls-tree quoted
// them), the last was read by olm-cmp as a flag.
func TestBreakHostileDirectoryNames(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	e := newEnv(t, host)
	twoVersions(t, host, "demo/greeter-bundle")
	// The last: a title longer than 200 bytes, cut inside a character.
	dirs := []string{"apps/café", `apps/it's "$(touch pwned)"`, "-dash", "apps/xy" + strings.Repeat("é", 100)}
	for _, d := range dirs {
		e.writeSpec(d, "greeter-bundle")
	}
	e.commitAndPush("hostile names")
	out := e.mustRun()
	if _, err := os.Stat(filepath.Join(e.clone, "pwned")); err == nil {
		t.Fatalf("a directory name ran a command:\n%s", out)
	}
	open := e.openRequests()
	if len(open) != len(dirs) {
		t.Fatalf("%d open requests, want one per directory (%q):\n%s", len(open), dirs, out)
	}
	for _, d := range dirs {
		found := false
		for _, r := range open {
			found = found || strings.Contains(r.Title, "("+d+")")
		}
		if !found {
			t.Errorf("no request titled for %q:\n%s", d, out)
		}
	}
	// A second run with nothing new writes nothing.
	before := e.branches()
	e.newCalls()
	out = e.mustRun()
	if w := writes(e.newCalls()); len(w) > 0 || fmt.Sprint(e.branches()) != fmt.Sprint(before) {
		t.Errorf("a second run wrote %q (branches %v, were %v):\n%s", w, e.branches(), before, out)
	}
	// A name with a line break, given as an argument, is refused by name,
	// not split into two applications.
	out, code := e.runArgs("apps/café\napps/x")
	if code != 1 || !strings.Contains(out, "a directory name with a line break") {
		t.Errorf("a directory with a line break: exit %d\n%s", code, out)
	}
}

// A person pushed to the bot's branch; then the application became current
// on the base (a) or its directory was removed (b). The bot must neither
// delete the branch (the person's commit) nor close the request. Before: it
// closed both requests and deleted both branches.
func TestBreakPersonsBranchNotDeleted(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	e := newEnv(t, host)
	twoVersions(t, host, "demo/greeter-bundle")
	e.writeSpec("apps/a", "greeter-bundle")
	e.writeSpec("apps/b", "greeter-bundle")
	e.commitAndPush("two applications")
	e.mustRun()
	const ba, bb = "olm-cmp/upgrade/apps-a", "olm-cmp/upgrade/apps-b"
	bumped := e.show(ba, "apps/a/olm-cmp.yaml")

	// The person's commits, one on each branch.
	person := map[string]string{}
	for _, b := range []string{ba, bb} {
		e.git("", "fetch", "-q", "origin", b)
		e.git("", "checkout", "-q", "FETCH_HEAD")
		if err := os.WriteFile(filepath.Join(e.clone, "NOTES.md"), []byte("mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		e.git("", "add", "-A")
		e.git("", "commit", "-qm", "a person's note")
		e.git("", "push", "-q", "origin", "HEAD:refs/heads/"+b)
		person[b] = e.git("", "rev-parse", "HEAD")
	}
	e.git("", "checkout", "-q", "main")
	e.git("", "pull", "-q", "origin", "main")
	// a: bumped by hand on main; b: removed.
	if err := os.WriteFile(filepath.Join(e.clone, "apps/a/olm-cmp.yaml"), []byte(bumped+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(e.clone, "apps/b")); err != nil {
		t.Fatal(err)
	}
	e.commitAndPush("a by hand, b gone")
	out := e.mustRun()
	br := e.branches()
	for _, b := range []string{ba, bb} {
		if br[b] != person[b] {
			t.Errorf("%s is at %q, want the person's commit %s:\n%s", b, br[b], person[b], out)
		}
		if r := e.request(b); r == nil || r.State != "open" {
			t.Errorf("%s: the request on a person's branch was closed: %+v\n%s", b, r, out)
		}
	}
}

// The remote's default branch is trunk and the checkout has no
// refs/remotes/origin/HEAD (as actions/checkout leaves it), no
// OLM_CMP_BOT_BASE. Before: the bot took main and died on its fetch.
func TestBreakDefaultBranchNotMain(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	e := newEnv(t, host)
	twoVersions(t, host, "demo/greeter-bundle")
	e.writeSpec("apps/a", "greeter-bundle")
	e.git("", "add", "-A")
	e.git("", "commit", "-qm", "one application")
	e.git("", "push", "-q", "origin", "HEAD:refs/heads/trunk")
	e.git(e.remote, "symbolic-ref", "HEAD", "refs/heads/trunk")
	out := e.mustRun()
	r := e.request("olm-cmp/upgrade/apps-a")
	if r == nil || r.Base != "trunk" {
		t.Fatalf("the request %+v, want one into trunk:\n%s", r, out)
	}
}

// fencedField adds a field whose description holds ``` lines: diff fences
// the CRD's raw diff with four backticks or more.
var fencedField = []string{"              replicas:\n", "              greeting:\n                type: string\n                description: |\n" +
	strings.Repeat("                  ```sh\n                  echo hello\n                  ```\n", 80) + "              replicas:\n"}

// A body cut inside diff's ```` fence: the fence must be closed with its
// own length, so that the cut note and the footer are not code. Before: a
// ``` closed nothing.
func TestBreakBodyCutClosesLongFence(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	e := newEnv(t, host)
	pushVersion(t, host, "demo/fenced-bundle", "0.10.2", "greeter-operator.v0.10.1")
	pushVersion(t, host, "demo/fenced-bundle", "0.11.0", "greeter-operator.v0.10.2", fencedField...)
	e.writeSpec("apps/a", "fenced-bundle")
	e.commitAndPush("one application")
	out := e.mustRun("OLM_CMP_BOT_MAX_BODY=4000")
	r := e.request("olm-cmp/upgrade/apps-a")
	if r == nil {
		t.Fatalf("no request:\n%s", out)
	}
	if len(r.Body) > 4000 || !strings.Contains(r.Body, ":scissors:") || !strings.Contains(r.Body, "````") {
		t.Fatalf("want a body cut to 4000 bytes inside a ```` fence (%d bytes):\n%s", len(r.Body), r.Body)
	}
	// CommonMark: a fence closes on a line of its character, at least as
	// long as the opening, and nothing else.
	fence := ""
	for _, line := range strings.Split(r.Body, "\n") {
		if fence == "" {
			if strings.Contains(line, ":scissors:") || strings.HasPrefix(line, "<sub>") {
				continue
			}
			for _, ch := range []string{"`", "~"} {
				if strings.HasPrefix(line, ch+ch+ch) {
					fence = line[:len(line)-len(strings.TrimLeft(line, ch))]
				}
			}
			continue
		}
		if c := strings.TrimRight(line, " \t"); strings.HasPrefix(c, fence) && strings.Trim(c, fence[:1]) == "" {
			fence = ""
		} else if strings.Contains(line, ":scissors:") || strings.HasPrefix(line, "<sub>") {
			t.Fatalf("%q is inside the %s fence:\n%s", line, fence, r.Body)
		}
	}
	if fence != "" {
		t.Fatalf("the body ends inside a %s fence:\n%s", fence, r.Body)
	}
}

// The GitHub workflow: no permission beyond contents and pull-requests
// write, every action pinned to a commit (a tag can be moved under it).
func TestBreakWorkflowPinnedAndMinimal(t *testing.T) {
	var wf struct {
		Permissions map[string]string `json:"permissions"`
		Jobs        map[string]struct {
			Steps []struct {
				Uses string `json:"uses"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	data, err := os.ReadFile(root + "/deploy/bot/github-workflow.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	if len(wf.Permissions) != 2 || wf.Permissions["contents"] != "write" || wf.Permissions["pull-requests"] != "write" {
		t.Errorf("permissions %v, want contents and pull-requests write only", wf.Permissions)
	}
	pinned := regexp.MustCompile(`^[\w.-]+/[\w./-]+@[0-9a-f]{40}$`)
	for name, j := range wf.Jobs {
		for _, s := range j.Steps {
			if s.Uses != "" && !pinned.MatchString(s.Uses) {
				t.Errorf("job %s: uses %q, not pinned to a commit", name, s.Uses)
			}
		}
	}
}

// A checkout of depth 1 (actions/checkout's default) after the base moved:
// the bot must still tell its own branch from a person's, and refresh it
// for a newer version. Before: the history below the shallow base made
// every earlier commit look like someone else's, and the request was never
// refreshed again.
func TestBreakShallowClone(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	e := newEnv(t, host)
	twoVersions(t, host, "demo/greeter-bundle")
	e.writeSpec("apps/a", "greeter-bundle")
	e.commitAndPush("one application")
	e.mustRun()
	const b = "olm-cmp/upgrade/apps-a"
	pushVersion(t, host, "demo/greeter-bundle", "0.12.0", "greeter-operator.v0.11.0\n  skips:\n  - greeter-operator.v0.10.2")
	if err := os.WriteFile(filepath.Join(e.clone, "README.md"), []byte("unrelated\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.commitAndPush("unrelated")
	shallow := filepath.Join(t.TempDir(), "shallow")
	e.git("", "clone", "-q", "--depth", "1", "file://"+e.remote, shallow)
	e.clone = shallow
	out := e.mustRun()
	if got := e.show(b, "apps/a/olm-cmp.yaml"); !strings.Contains(got, "v0.12.0") {
		t.Fatalf("%s was not refreshed to v0.12.0 from a shallow clone:\n%s\n%s", b, got, out)
	}
	if r := e.request(b); r == nil || !strings.Contains(r.Title, "v0.12.0") {
		t.Fatalf("the request was not refreshed: %+v\n%s", r, out)
	}
}

// One application's upgrade fails (its repository is missing) and gh fails
// on another's create (a rate limit): the others are handled, the failures
// named, the run exits 1; the next run, gh healthy, opens the missing
// request without pushing again. The checkout, dirty at the start, is left
// as it was.
func TestBreakFailuresMidRun(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	e := newEnv(t, host)
	twoVersions(t, host, "demo/greeter-bundle")
	e.writeSpec("apps/a", "greeter-bundle")
	e.writeSpec("apps/b", "greeter-bundle")
	e.writeSpec("apps/broken", "no-such-bundle")
	e.writeSpec("apps/c", "greeter-bundle")
	e.commitAndPush("four applications")
	// Dirty: a tracked file edited, an untracked application.
	if err := os.WriteFile(filepath.Join(e.clone, "apps/a/olm-cmp.yaml"), []byte("edited by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.writeSpec("apps/untracked", "greeter-bundle")
	dirty := e.git("", "status", "--porcelain", "--untracked-files=all")

	gh := filepath.Join(e.bin, "gh")
	healthy, err := os.ReadFile(gh)
	if err != nil {
		t.Fatal(err)
	}
	flaky := "#!/bin/sh\ncase \"$*\" in *'pr create'*apps-b*) echo 'API rate limit exceeded' >&2; exit 1;; esac\n" + strings.TrimPrefix(string(healthy), "#!/bin/sh\n")
	if err := os.WriteFile(gh, []byte(flaky), 0o755); err != nil {
		t.Fatal(err)
	}
	out, code := e.run()
	if code != 1 || !strings.Contains(out, "apps/broken: olm-cmp upgrade failed") || !strings.Contains(out, "2 application(s) failed") {
		t.Fatalf("exit %d, want 1 naming apps/broken and two failures:\n%s", code, out)
	}
	for _, b := range []string{"apps-a", "apps-c"} {
		if r := e.request("olm-cmp/upgrade/" + b); r == nil || r.State != "open" {
			t.Errorf("%s: no open request after another application failed:\n%s", b, out)
		}
	}
	if e.request("olm-cmp/upgrade/apps-untracked") != nil {
		t.Errorf("an application not on the base got a request")
	}
	if got := e.git("", "status", "--porcelain", "--untracked-files=all"); got != dirty {
		t.Errorf("the checkout changed:\n%s\nwant\n%s", got, dirty)
	}
	if err := os.WriteFile(gh, healthy, 0o755); err != nil {
		t.Fatal(err)
	}
	pushed := e.branches()["olm-cmp/upgrade/apps-b"]
	e.newCalls()
	out, code = e.run()
	if code != 1 {
		t.Fatalf("exit %d, want 1 (apps/broken still fails):\n%s", code, out)
	}
	if r := e.request("olm-cmp/upgrade/apps-b"); r == nil || r.State != "open" || e.branches()["olm-cmp/upgrade/apps-b"] != pushed {
		t.Errorf("apps/b: want its request opened on the branch already pushed (%s): %+v\n%s", pushed, r, out)
	}
	var creates []string
	for _, w := range writes(e.newCalls()) {
		if !strings.HasPrefix(w, "gh label create ") {
			creates = append(creates, w)
		}
	}
	if len(creates) != 1 || !strings.HasPrefix(creates[0], "gh pr create --head olm-cmp/upgrade/apps-b ") {
		t.Errorf("the second run's forge writes: %q, want the one create of apps/b", creates)
	}
}

// A bundle whose olm.skipRange is 80,000 bytes (a valid range, one
// alternative repeated): the summary alone is over the limit. The body must
// still fit, or the request is never opened. Before: the review was cut to
// nothing, the body stayed too long, and gh refused it on every run.
func TestBreakHugeSkipRangeBody(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	e := newEnv(t, host)
	pushVersion(t, host, "demo/range-bundle", "0.10.2", "greeter-operator.v0.10.1")
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := os.CopyFS(dir, os.DirFS(demoBundle)); err != nil {
		t.Fatal(err)
	}
	csv := filepath.Join(dir, "manifests", "greeter-operator.clusterserviceversion.yaml")
	data, err := os.ReadFile(csv)
	if err != nil {
		t.Fatal(err)
	}
	r := ">=0.10.0 <0.11.0" + strings.Repeat(" || >=0.10.0 <0.11.0", 4000)
	out := string(data)
	for _, p := range [][2]string{
		{"    capabilities: Basic Install\n", "    capabilities: Basic Install\n    olm.skipRange: '" + r + "'\n"},
		{"name: greeter-operator.v0.2.0", "name: greeter-operator.v0.11.0"},
		{"version: 0.2.0", "version: 0.11.0"},
		{"replaces: greeter-operator.v0.1.0", "replaces: greeter-operator.v0.10.2"},
	} {
		if !strings.Contains(out, p[0]) {
			t.Fatalf("the demo CSV lacks %q: update this test", p[0])
		}
		out = strings.Replace(out, p[0], p[1], 1)
	}
	if err := os.WriteFile(csv, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	bundletest.PushDir(t, host, "demo/range-bundle", "v0.11.0", dir)
	e.writeSpec("apps/a", "range-bundle")
	e.commitAndPush("one application")
	log, code := e.run()
	req := e.request("olm-cmp/upgrade/apps-a")
	if code != 0 || req == nil {
		t.Fatalf("exit %d, request %v:\n%.3000s", code, req, log)
	}
	if len(req.Body) > 65000 || !strings.Contains(req.Body, "v0.11.0") || !strings.Contains(req.Body, "<sub>Opened by") {
		t.Fatalf("a body of %d bytes, want at most 65000 with the summary's start and the footer:\n%.2000s", len(req.Body), req.Body)
	}
}

// GitLab: a blocked bump (exit 3) is opened as a draft, never skipped; a
// person closes it; the next run does not open it again.
func TestBreakGitLabBlockedClosedByPerson(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	e := newEnv(t, host)
	pushVersion(t, host, "demo/strict-bundle", "0.10.2", "greeter-operator.v0.10.1")
	pushVersion(t, host, "demo/strict-bundle", "0.11.0", "greeter-operator.v0.10.2", dropExtra...)
	e.writeSpec("apps/s", "strict-bundle")
	e.commitAndPush("one application")
	out := e.mustRun("OLM_CMP_BOT_FORGE=gitlab")
	const b = "olm-cmp/upgrade/apps-s"
	r := e.request(b)
	if r == nil || !r.Draft || !strings.HasPrefix(r.Title, "Draft: ") || !strings.Contains(strings.Join(r.Labels, ","), "olm-cmp:blocked") {
		t.Fatalf("want a draft labelled olm-cmp:blocked: %+v\n%s", r, out)
	}
	s := e.state()
	s.Requests[0].State = "closed"
	if err := saveState(e.forge, s); err != nil {
		t.Fatal(err)
	}
	e.newCalls()
	out = e.mustRun("OLM_CMP_BOT_FORGE=gitlab")
	if w := writes(e.newCalls()); len(w) > 0 || len(e.openRequests()) != 0 {
		t.Fatalf("the closed draft came back: %q\n%s", w, out)
	}
}

// A person pushes to the bot's branch while the bot runs (after its fetch,
// before its push): --force-with-lease refuses, the person's commit stays,
// the run fails, and the next run leaves the branch to the person.
func TestBreakPersonPushesDuringRun(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	e := newEnv(t, host)
	twoVersions(t, host, "demo/greeter-bundle")
	e.writeSpec("apps/a", "greeter-bundle")
	e.commitAndPush("one application")
	e.mustRun()
	const b = "olm-cmp/upgrade/apps-a"
	pushVersion(t, host, "demo/greeter-bundle", "0.12.0", "greeter-operator.v0.11.0\n  skips:\n  - greeter-operator.v0.10.2")

	// The person's commit on the bot's branch, pushed by olm-cmp upgrade's
	// stand-in the first time it runs.
	person := filepath.Join(t.TempDir(), "person")
	e.git("", "clone", "-q", "-b", b, e.remote, person)
	if err := os.WriteFile(filepath.Join(person, "NOTES.md"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.git(person, "add", "-A")
	e.git(person, "commit", "-qm", "a person's note")
	mine := e.git(person, "rev-parse", "HEAD")
	marker := filepath.Join(t.TempDir(), "once")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wrapper := "#!/bin/sh\nif [ \"$1\" = upgrade ] && [ -e '" + marker + "' ]; then rm '" + marker + "'; git -C '" + person + "' push -q origin HEAD:refs/heads/" + b + " >/dev/null 2>&1; fi\nexec '" + olmCmp + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(e.bin, "olm-cmp"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	out, code := e.run()
	if code != 1 || e.branches()[b] != mine {
		t.Fatalf("exit %d, %s at %s; want 1 and the person's %s:\n%s", code, b, e.branches()[b], mine, out)
	}
	out = e.mustRun()
	if e.branches()[b] != mine || !strings.Contains(out, "commits by someone else") {
		t.Fatalf("the next run: %s at %s, want the person's %s left alone:\n%s", b, e.branches()[b], mine, out)
	}
}

// The GitLab job never writes its token into a remote's URL (.git/config,
// which a runner may keep for the next jobs, and git's own messages).
func TestBreakGitLabTokenNotInURL(t *testing.T) {
	var gl map[string]struct {
		Script []string `json:"script"`
	}
	data, err := os.ReadFile(root + "/deploy/bot/gitlab-ci.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &gl); err != nil {
		t.Fatal(err)
	}
	inURL := regexp.MustCompile(`://[^/\s"]*\$\{?OLM_CMP_GITLAB_TOKEN`)
	for _, line := range gl["olm-cmp-upgrade"].Script {
		if inURL.MatchString(line) {
			t.Errorf("gitlab-ci.yml puts the token in a URL: %s", line)
		}
	}
}
