package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/upgrade"
)

// upgradeRepo is a repository (with .git) holding one application directory
// per spec line: dir -> the spec's bundle and version lines.
func upgradeRepo(t *testing.T, specs map[string]string) string {
	t.Helper()
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, ".git"), 0o755)
	for dir, lines := range specs {
		os.MkdirAll(filepath.Join(root, dir), 0o755)
		doc := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata:\n  name: greeter\nspec:\n" + lines + "  namespace: greeter-system\n"
		if err := os.WriteFile(filepath.Join(root, dir, "olm-cmp.yaml"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestUpgradeExitStatuses: 0 nothing to move to, 2 available or written and
// safe, 3 blocked, 1 a failure; -o json holds every application.
func TestUpgradeExitStatuses(t *testing.T) {
	demo := "../../examples/demo/bundle"
	safe, _ := bundletest.NewRegistry(t)
	bundletest.PushDemoVersion(t, safe, demo, "0.1.0", "x")
	bundletest.PushDemoVersion(t, safe, demo, "0.2.0", "greeter-operator.v0.1.0")
	unsafe, _ := bundletest.NewRegistry(t)
	bundletest.PushDemoVersion(t, unsafe, demo, "0.1.0", "x")
	bundletest.PushDemoVersion(t, unsafe, demo, "0.2.0", "greeter-operator.v0.1.0",
		"replicas:\n                type: integer", "replicas:\n                type: string")
	root := upgradeRepo(t, map[string]string{
		"latest":  "  bundle: " + safe + "/demo/greeter-bundle\n  version: v0.2.0\n",
		"safe":    "  bundle: " + safe + "/demo/greeter-bundle\n  version: v0.1.0\n",
		"self":    "  bundle: " + safe + "/demo/greeter-bundle\n  version: v0.1.0\n  upgradeConstraintPolicy: SelfCertified\n",
		"unsafe":  "  bundle: " + unsafe + "/demo/greeter-bundle\n  version: v0.1.0\n",
		"broken":  "  bundle: " + safe + "/demo/greeter-bundle\n  version: v9.9.9\n",
		"invalid": "  bundle: ./nowhere\n  version: v1\n",
	})
	reg := []string{"--insecure-registry", safe, "--insecure-registry", unsafe}
	dir := func(d string) string { return filepath.Join(root, d) }
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{dir("latest")}, 0, "  status      none\n  reason      v0.2.0 is the newest semver tag of " + safe + "/demo/greeter-bundle (2 semver tags)\n"},
		{[]string{dir("safe")}, 2, "  candidates  v0.2.0 (replaces greeter-operator.v0.1.0)\n"},
		// The policy the upgrade edge was judged under is named.
		{[]string{dir("safe")}, 2, "  safety      safe (upgradeConstraintPolicy CatalogProvided)\n"},
		{[]string{dir("self")}, 2, "  safety      safe (upgradeConstraintPolicy SelfCertified)\n"},
		{[]string{dir("unsafe")}, 3, "  safety      blocked (upgradeConstraintPolicy CatalogProvided)\n              error: type: CRD greeters.greeter.example.com version v1alpha1 path .spec.replicas"},
		{[]string{dir("broken"), dir("safe")}, 1, "  status      failed\n"},
		{[]string{dir("latest"), "--policy", "newest"}, 1, ""},
	} {
		out, stderr, code := runStatus(t, append(append([]string{"upgrade"}, tc.args...), reg...)...)
		if code != tc.code || !strings.Contains(out, tc.out) {
			t.Errorf("upgrade %v: status %d (want %d)\n%s%s", tc.args, code, tc.code, out, stderr)
		}
	}
	_, stderr, _ := runStatus(t, append([]string{"upgrade", dir("latest"), "--policy", "newest"}, reg...)...)
	if !strings.Contains(stderr, `--policy "newest": use olmv1`) {
		t.Errorf("bad --policy: %s", stderr)
	}

	// --write, JSON: every application of the repository (its root as DIR,
	// the directories below it), the files written.
	before, _ := os.ReadFile(dir("latest") + "/olm-cmp.yaml")
	out, stderr, code := runStatus(t, append([]string{"upgrade", root, "--write", "-o", "json"}, reg...)...)
	if code != 1 { // broken and invalid fail
		t.Fatalf("status %d\n%s%s", code, out, stderr)
	}
	var rep upgrade.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	got := map[string]upgrade.Status{}
	for _, a := range rep.Applications {
		got[filepath.Base(a.Dir)] = a.Status
	}
	want := map[string]upgrade.Status{"broken": upgrade.Failed, "invalid": upgrade.Failed, "latest": upgrade.None, "safe": upgrade.Written, "self": upgrade.Written, "unsafe": upgrade.Blocked}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: status %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	// -o json names the policy too, in the key bots read.
	if !strings.Contains(out, `"upgradeConstraintPolicy": "SelfCertified"`) || !strings.Contains(out, `"upgradeConstraintPolicy": "CatalogProvided"`) {
		t.Errorf("the JSON report does not name the policies:\n%s", out)
	}
	if after, _ := os.ReadFile(dir("latest") + "/olm-cmp.yaml"); string(after) != string(before) {
		t.Error("an application with nothing to move to was written")
	}
	for _, d := range []string{"safe", "self", "unsafe"} {
		data, _ := os.ReadFile(dir(d) + "/olm-cmp.yaml")
		if !strings.Contains(string(data), "  version: v0.2.0\n  digest: \"sha256:") || !strings.Contains(string(data), "upgradeFrom: \"v0.1.0\"") {
			t.Errorf("%s not written:\n%s", d, data)
		}
	}
}

// TestUpgradeHelpNamesExitStatuses: upgrade -h documents the statuses.
func TestUpgradeHelpNamesExitStatuses(t *testing.T) {
	out, _, err := run(t, "upgrade", "-h")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Exit status: 0 nothing to move to, 2 an upgrade available (or written) and\nsafe, 3", "1 a failure", "--policy", "--write", "docs/upgrade.md"} {
		if !strings.Contains(out, w) {
			t.Errorf("upgrade -h lacks %q", w)
		}
	}
}

// TestUpgradeAppsFrom: --apps-from none reads no Argo CD manifest (the
// version is olm-cmp.yaml's); by default the Application's parameter is
// the version. No DIR is the working directory.
func TestUpgradeAppsFrom(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	bundletest.PushDemoVersion(t, host, "../../examples/demo/bundle", "0.1.0", "x")
	bundletest.PushDemoVersion(t, host, "../../examples/demo/bundle", "0.2.0", "greeter-operator.v0.1.0")
	root := upgradeRepo(t, map[string]string{"g": "  bundle: " + host + "/demo/greeter-bundle\n  version: v0.2.0\n"})
	os.WriteFile(filepath.Join(root, "app.yaml"), []byte("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: g}\nspec: {source: {path: g, plugin: {parameters: [{name: version, string: v0.1.0}]}}}\n"), 0o644)
	t.Chdir(filepath.Join(root, "g"))
	out, stderr, code := runStatus(t, "upgrade", "--insecure-registry", host)
	if code != 2 || !strings.Contains(out, "  current     v0.1.0\n  where       Application g (app.yaml:1), parameter version\n") {
		t.Errorf("default: status %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = runStatus(t, "upgrade", "--insecure-registry", host, "--apps-from", "none")
	if code != 0 || !strings.Contains(out, "  current     v0.2.0\n  where       olm-cmp.yaml\n") {
		t.Errorf("--apps-from none: status %d\n%s%s", code, out, stderr)
	}
}

// TestUpgradeBadFlagValuesCapped: a hostile --policy or -o value is repeated
// quoted, escaped and cut, in one line.
func TestUpgradeBadFlagValuesCapped(t *testing.T) {
	long := strings.Repeat("a", 5000) + "\x1b[31m"
	for _, tc := range []struct{ flag, want string }{
		{"--policy", "--policy \"" + strings.Repeat("a", 120) + "\"… (5005 bytes): use olmv1"},
		{"-o", "--output \"" + strings.Repeat("a", 120) + "\"… (5005 bytes): use text or json"},
	} {
		_, stderr, code := runStatus(t, "upgrade", tc.flag, long, t.TempDir())
		if code != 1 || !strings.Contains(stderr, tc.want) || len(stderr) > 400 || strings.Contains(stderr, "\x1b") {
			t.Errorf("%s: status %d\n%s", tc.flag, code, stderr)
		}
	}
}

// TestUpgradeRepoURL: in a Git repository whose origin is
// github.com/org/gitops, an Application naming the same path of another
// repository is skipped and said; with no remote it matches by path and
// says so; --repo-url stands in for the remote.
func TestUpgradeRepoURL(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	host, _ := bundletest.NewRegistry(t)
	bundletest.PushDemoVersion(t, host, "../../examples/demo/bundle", "0.1.0", "x")
	bundletest.PushDemoVersion(t, host, "../../examples/demo/bundle", "0.2.0", "greeter-operator.v0.1.0")
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "g"), 0o755)
	os.WriteFile(filepath.Join(root, "g", "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata:\n  name: greeter\nspec:\n  bundle: "+host+"/demo/greeter-bundle\n  version: v0.2.0\n  namespace: greeter-system\n"), 0o644)
	os.WriteFile(filepath.Join(root, "app.yaml"), []byte("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: g}\nspec: {source: {repoURL: 'https://github.com/someone/else', path: g, plugin: {parameters: [{name: version, string: v0.1.0}]}}}\n"), 0o644)
	git := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("remote", "add", "origin", "https://github.com/org/gitops.git")
	t.Chdir(filepath.Join(root, "g"))
	skipped := "  skipped     Application g (app.yaml:1): its repoURL https://github.com/someone/else is another repository (not one of this checkout's Git remotes nor --repo-url)\n"
	out, stderr, code := runStatus(t, "upgrade", "--insecure-registry", host)
	if code != 0 || !strings.Contains(out, "  current     v0.2.0\n  where       olm-cmp.yaml\n") || !strings.Contains(out, skipped) {
		t.Errorf("origin: status %d\n%s%s", code, out, stderr)
	}
	out, _, _ = runStatus(t, "upgrade", "--insecure-registry", host, "-o", "json")
	if !strings.Contains(out, `"otherRepos": [`) || !strings.Contains(out, `"repoURL": "https://github.com/someone/else"`) || !strings.Contains(out, `"file": "app.yaml"`) {
		t.Errorf("origin, json:\n%s", out)
	}

	git("remote", "remove", "origin")
	out, stderr, code = runStatus(t, "upgrade", "--insecure-registry", host)
	if code != 2 || !strings.Contains(out, "  current     v0.1.0\n") || !strings.Contains(out, "  by path     Application g (app.yaml:1): matched by its path alone, this checkout has no Git remote (but local paths) to compare its repoURL with (name the repository with --repo-url)\n") {
		t.Errorf("no remote: status %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = runStatus(t, "upgrade", "--insecure-registry", host, "--repo-url", "git@github.com:org/gitops.git")
	if code != 0 || !strings.Contains(out, skipped) || strings.Contains(out, "by path") {
		t.Errorf("--repo-url: status %d\n%s%s", code, out, stderr)
	}
	_, stderr, code = runStatus(t, "upgrade", "--insecure-registry", host, "--repo-url", "")
	if code != 1 || !strings.Contains(stderr, `--repo-url "": not a Git repository URL`) {
		t.Errorf("empty --repo-url: status %d\n%s", code, stderr)
	}
}
