package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/safety"
)

// TestDiffGitBaseAppsFrom: an application whose version is an Argo CD
// Application's plugin parameter (where upgrade --write keeps it) is
// reviewed by diff --git-base --apps-from: FROM renders the parameter as it
// was at the base, TO as it is now, with the safety verdict; without the
// flag, olm-cmp.yaml alone is compared, as before.
func TestDiffGitBaseAppsFrom(t *testing.T) {
	host, repo, git := blockedBumpRepo(t)
	dir := filepath.Join(repo, "apps", "greeter")
	os.MkdirAll(dir, 0o755)
	os.MkdirAll(filepath.Join(repo, "argocd"), 0o755)
	writeFile(t, filepath.Join(dir, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: "+host+"/demo/greeter-bundle\n  namespace: greeter-system\n  version: v0.10.2\n"))
	application := func(name, path, version string) string {
		return "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: " + name + "\nspec:\n  source:\n    repoURL: https://example.com/org/gitops.git\n    path: " + path + "\n    plugin:\n      name: olm-cmp\n      parameters:\n        - name: version\n          string: " + version + "\n"
	}
	manifest := filepath.Join(repo, "argocd", "greeter.yaml")
	writeFile(t, manifest, []byte(application("greeter", "apps/greeter", "v0.10.2")))
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "0.10.2")
	// The bump upgrade --write makes: the parameter, not olm-cmp.yaml.
	writeFile(t, manifest, []byte(application("greeter", "apps/greeter", "v0.11.0")))

	r := diffJSON(t, diffUnsafe, dir, "--git-base", "HEAD", "--apps-from", manifest, "--insecure-registry", host)
	if r.From.Version != "0.10.2" || r.To.Version != "0.11.0" {
		t.Errorf("sides with --apps-from: %+v -> %+v", r.From, r.To)
	}
	found := false
	for _, f := range r.Safety {
		found = found || strings.Contains(f.String(), "existingFieldRemoval")
	}
	if !found {
		t.Errorf("safety findings with --apps-from: %+v, want existingFieldRemoval", r.Safety)
	}
	// Without the flag: olm-cmp.yaml did not change.
	if r := diffJSON(t, diffNoChanges, dir, "--git-base", "HEAD", "--insecure-registry", host); r.From.Version != "0.10.2" || r.To.Version != "0.10.2" {
		t.Errorf("sides without --apps-from: %+v -> %+v", r.From, r.To)
	}
	// Manifests naming no application of DIR: said, and olm-cmp.yaml alone.
	other := filepath.Join(repo, "argocd", "other.yaml")
	writeFile(t, other, []byte(application("other", "apps/other", "v0.11.0")))
	_, stderr, code := runStatus(t, "diff", dir, "--git-base", "HEAD", "--apps-from", other, "--insecure-registry", host)
	if code != diffNoChanges || !strings.Contains(stderr, "no Argo CD application in the --apps-from manifests renders") || !strings.Contains(stderr, "none of the --apps-from manifests existed at HEAD") {
		t.Errorf("--apps-from naming no application of DIR: status %d\n%s", code, stderr)
	}
	// Two applications of DIR at different versions: refused, as upgrade does.
	writeFile(t, other, []byte(application("greeter-too", "apps/greeter", "v0.10.2")))
	_, stderr, code = runStatus(t, "diff", dir, "--git-base", "HEAD", "--apps-from", filepath.Join(repo, "argocd"), "--insecure-registry", host)
	if code != diffRenderError || !strings.Contains(stderr, "do not render one version") {
		t.Errorf("two applications at different versions: status %d\n%s", code, stderr)
	}
	// Two directories: the current parameters on both sides.
	if r := diffJSON(t, diffNoChanges, dir, dir, "--apps-from", manifest, "--insecure-registry", host); r.From.Version != "0.11.0" || r.To.Version != "0.11.0" {
		t.Errorf("FROM_DIR TO_DIR with --apps-from: %+v -> %+v", r.From, r.To)
	}
	// A spec flag changes TO over the application's parameter. Going down
	// a version is refused under OLM v1's default upgradeConstraintPolicy.
	if r := diffJSON(t, diffUnsafe, dir, dir, "--apps-from", manifest, "--version", "v0.10.2", "--insecure-registry", host); r.From.Version != "0.11.0" || r.To.Version != "0.10.2" ||
		!slices.ContainsFunc(r.Safety, func(f safety.Finding) bool {
			return f.Rule == "upgradeEdge" && f.Severity == safety.Error && strings.Contains(f.Message, "OLM v1's default upgradeConstraintPolicy, CatalogProvided, refuses it: render 0.11.0 or a newer version")
		}) {
		t.Errorf("--version with --apps-from: %+v -> %+v, want 0.11.0 -> 0.10.2 and an upgradeEdge error; safety %+v", r.From, r.To, r.Safety)
	}
}
