package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
)

// TestDiffGitBaseBlockedBump: the bump upgrade --write makes for a blocked
// upgrade (version and upgradeFrom together) is reviewed by diff --git-base
// with its safety findings (status 2), not refused as a render failure of TO
// (status 3) by TO's own upgradeFrom check: the bot's draft pull request
// shows what blocks it.
func TestDiffGitBaseBlockedBump(t *testing.T) {
	host, repo, git := blockedBumpRepo(t)
	file := filepath.Join(repo, "olm-cmp.yaml")
	head := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: " + host + "/demo/greeter-bundle\n  namespace: greeter-system\n"
	writeFile(t, file, []byte(head+"  version: v0.10.2\n"))
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "0.10.2")
	writeFile(t, file, []byte(head+"  version: v0.11.0\n  upgradeFrom: v0.10.2\n"))

	out, stderr, code := runStatus(t, "diff", repo, "--git-base", "HEAD", "-o", "markdown", "--insecure-registry", host)
	want := "| error | existingFieldRemoval | greeters.greeter.example.com | v1alpha1 | `.spec.extra` |"
	if code != diffUnsafe || !strings.Contains(out, want) {
		t.Errorf("diff --git-base of a blocked bump: status %d, want %d with the finding %q\n%s%s", code, diffUnsafe, want, out, stderr)
	}
	// The render the plugin makes of the same spec still refuses it.
	if _, stderr, code := runStatus(t, "render", repo, "--insecure-registry", host); code == 0 || !strings.Contains(stderr, "existingFieldRemoval") {
		t.Errorf("render of the blocked bump: status %d, want a failure naming existingFieldRemoval\n%s", code, stderr)
	}
}

// blockedBumpRepo is the registry of a blocked bump (demo 0.10.2, and
// 0.11.0 whose CRD drops a stored field) and an empty directory with a git
// runner for it, for the diff --git-base tests. It skips without git.
func blockedBumpRepo(t *testing.T) (host, repo string, git func(args ...string)) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	host, _ = bundletest.NewRegistry(t)
	bundletest.PushDemoVersion(t, host, demoBundle, "0.10.2", "greeter-operator.v0.10.1")
	bundletest.PushDemoVersion(t, host, demoBundle, "0.11.0", "greeter-operator.v0.10.2",
		"              extra:\n                type: object\n                x-kubernetes-preserve-unknown-fields: true\n", "")
	repo = t.TempDir()
	git = func(args ...string) {
		t.Helper()
		c := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return host, repo, git
}
