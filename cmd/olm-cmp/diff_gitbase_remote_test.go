package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDiffGitBaseAppsFromWithRemote: in a checkout with a remote (every CI
// checkout has one), the application at --git-base's revision is matched by
// the checkout's URL as it is now; the URL once read "/host/org/repo" at the
// revision, so FROM quietly fell back to olm-cmp.yaml alone.
func TestDiffGitBaseAppsFromWithRemote(t *testing.T) {
	host, repo, git := blockedBumpRepo(t)
	dir := filepath.Join(repo, "apps", "greeter")
	os.MkdirAll(dir, 0o755)
	writeFile(t, filepath.Join(dir, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: "+host+"/demo/greeter-bundle\n  namespace: greeter-system\n  version: v0.10.2\n"))
	application := func(version string) []byte {
		return []byte("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: greeter\nspec:\n  source:\n    repoURL: https://example.com/org/gitops.git\n    path: apps/greeter\n    plugin:\n      name: olm-cmp\n      parameters:\n        - name: version\n          string: " + version + "\n")
	}
	manifest := filepath.Join(repo, "app.yaml")
	writeFile(t, manifest, application("v0.11.0"))
	git("init", "-q")
	git("remote", "add", "origin", "https://example.com/org/gitops.git")
	git("add", "-A")
	git("commit", "-qm", "0.11.0")
	r := diffJSON(t, diffNoChanges, dir, "--git-base", "HEAD", "--apps-from", manifest, "--insecure-registry", host)
	if r.From.Version != "0.11.0" || r.To.Version != "0.11.0" {
		t.Errorf("unchanged application with a remote: %+v -> %+v, want 0.11.0 on both sides", r.From, r.To)
	}
}
