package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffGitBaseAppsFromSkippedAtRevision: a manifest named by --apps-from
// that the scan would pass over at --git-base's revision (over 1 MiB there)
// is refused naming the revision, not read as "no application at REV".
func TestDiffGitBaseAppsFromSkippedAtRevision(t *testing.T) {
	_, repo, git := blockedBumpRepo(t) // a Git runner and its repository
	dir := filepath.Join(repo, "apps", "demo")
	os.MkdirAll(dir, 0o755)
	writeFile(t, filepath.Join(dir, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ./bundle\n  namespace: x\n"))
	// The bundle directory is extracted at the revision; the manifest is
	// refused before anything is rendered from it.
	os.MkdirAll(filepath.Join(dir, "bundle"), 0o755)
	writeFile(t, filepath.Join(dir, "bundle", "README"), []byte("placeholder\n"))
	app := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: demo\nspec:\n  source:\n    repoURL: https://example.com/org/gitops.git\n    path: apps/demo\n"
	manifest := filepath.Join(repo, "app.yaml")
	writeFile(t, manifest, []byte(app+"# "+strings.Repeat("x", 2<<20)+"\n"))
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "big")
	writeFile(t, manifest, []byte(app))
	_, stderr, code := runStatus(t, "diff", dir, "--git-base", "HEAD", "--apps-from", manifest)
	if code != diffRenderError || !strings.Contains(stderr, `--git-base "HEAD": --apps-from "HEAD:app.yaml" is`) || !strings.Contains(stderr, "1048576-byte bound") {
		t.Errorf("a manifest over the bound at the revision: status %d\n%s", code, stderr)
	}
}
