package upgrade

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestNormalizeRepoURL(t *testing.T) {
	same := []string{
		"https://github.com/org/gitops",
		"https://github.com/org/gitops.git",
		"https://github.com/org/gitops/",
		"https://user:pw@GitHub.com/org/gitops.git/",
		"http://github.com:443/org/gitops",
		"ssh://git@github.com/org/gitops.git",
		"ssh://git@github.com:22/org/gitops",
		"git@github.com:org/gitops.git",
		"github.com:org/gitops",
		"git://github.com/org/gitops",
	}
	for _, u := range same {
		if got := NormalizeRepoURL(u); got != "github.com/org/gitops" {
			t.Errorf("%s: %q, want github.com/org/gitops", u, got)
		}
	}
	for _, u := range []string{"https://github.com/org/gitops-other", "https://github.com/other/gitops", "https://gitlab.com/org/gitops", "https://github.com/Org/gitops"} {
		if NormalizeRepoURL(u) == "github.com/org/gitops" {
			t.Errorf("%s reads as github.com/org/gitops", u)
		}
	}
	if got := NormalizeRepoURL("file:///srv/git/gitops.git"); got != NormalizeRepoURL("/srv/git/gitops") || got != "/srv/git/gitops" {
		t.Errorf("file URL %q and path %q differ", got, NormalizeRepoURL("/srv/git/gitops"))
	}
	for _, u := range []string{"", "  ", "https://{{.repo}}/x", "https://%zz"} {
		if got := NormalizeRepoURL(u); got != "" {
			t.Errorf("%q: %q, want none", u, got)
		}
	}
}

// TestRemotes reads remote URLs from a Git config as git writes it, from a
// linked work tree's .git file (the shared config), and none without one.
func TestRemotes(t *testing.T) {
	main := t.TempDir()
	os.Mkdir(filepath.Join(main, ".git"), 0o755)
	cfg := "[core]\n\tbare = false\n\turl = https://not.a/remote\n[remote \"origin\"]\n\turl = git@github.com:org/gitops.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n" +
		"[branch \"main\"]\n\tremote = origin\n[remote \"mirror\"]\n\tURL = \"https://mirror.example/org/gitops\"\n[remote \"dup\"]\n\turl = git@github.com:org/gitops.git\n"
	os.WriteFile(filepath.Join(main, ".git", "config"), []byte(cfg), 0o644)
	want := []string{"git@github.com:org/gitops.git", "https://mirror.example/org/gitops"}
	if got := Remotes(main); !slices.Equal(got, want) {
		t.Errorf("remotes %q, want %q", got, want)
	}
	wt := t.TempDir()
	gd := filepath.Join(main, ".git", "worktrees", "wt")
	os.MkdirAll(gd, 0o755)
	os.WriteFile(filepath.Join(gd, "commondir"), []byte("../..\n"), 0o644)
	os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+gd+"\n"), 0o644)
	if got := Remotes(wt); !slices.Equal(got, want) {
		t.Errorf("linked work tree: remotes %q, want %q", got, want)
	}
	if got := Remotes(t.TempDir()); got != nil {
		t.Errorf("no .git: %q", got)
	}
	// Hostile configs: one 2 MiB line, NUL bytes, a .git file pointing
	// nowhere. No remote, no panic.
	for name, cfg := range map[string]string{
		"long line": "[remote \"origin\"]\n\turl = " + strings.Repeat("a", 2<<20),
		"binary":    "\x00\xff[remote\x00\n\x00url=\n",
	} {
		d := t.TempDir()
		os.Mkdir(filepath.Join(d, ".git"), 0o755)
		os.WriteFile(filepath.Join(d, ".git", "config"), []byte(cfg), 0o644)
		if got := Remotes(d); got != nil {
			t.Errorf("%s: %.80q", name, got)
		}
	}
	d := t.TempDir()
	os.WriteFile(filepath.Join(d, ".git"), []byte("gitdir: /nonexistent/x\n"), 0o644)
	if got := Remotes(d); got != nil {
		t.Errorf("dangling gitdir: %q", got)
	}
}

// TestOfTemplatedRepoURL: an ApplicationSet list element's repoURL is the
// template's with the element's keys put in: each element is matched (or
// skipped) by its own repository.
func TestOfTemplatedRepoURL(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[remote \"origin\"]\n\turl = https://github.com/org/gitops\n"), 0o644)
	os.WriteFile(filepath.Join(root, "set.yaml"), []byte(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: s}
spec:
  generators:
  - list:
      elements:
      - {name: mine, repo: github.com/org/gitops, version: v0.1.0}
      - {name: theirs, repo: github.com/org/other, version: v0.1.0}
  template:
    spec:
      source:
        repoURL: 'https://{{.repo}}.git'
        path: apps/g
        plugin: {parameters: [{name: version, string: '{{.version}}'}]}
`), 0o644)
	ix, err := Scan(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	apps, elsewhere, err := ix.Of(filepath.Join(root, "apps", "g"))
	if err != nil || !slices.Equal(names(apps), []string{"ApplicationSet s, element mine"}) || !slices.Equal(names(elsewhere), []string{"ApplicationSet s, element theirs"}) || elsewhere[0].RepoURL != "https://github.com/org/other.git" {
		t.Fatalf("apps %q elsewhere %q err %v", names(apps), names(elsewhere), err)
	}
}

// otherRepoApps: an Application of this repository, one of another
// repository naming the same path, and an ApplicationSet (git generator,
// unread) of another repository whose path pattern matches.
const otherRepoApps = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: here}
spec:
  source:
    repoURL: https://github.com/org/gitops.git
    path: apps/g
    plugin: {parameters: [{name: version, string: v0.1.0}]}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: there}
spec:
  sources:
  - repoURL: git@github.com:someone/else.git
    path: apps/g
    plugin: {parameters: [{name: version, string: v9.0.0}]}
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: elsewhere}
spec:
  generators:
  - git: {repoURL: https://github.com/someone/else, directories: [{path: apps/*}]}
  template:
    spec:
      source:
        repoURL: https://github.com/someone/else
        path: '{{.path.path}}'
        plugin: {parameters: [{name: version, string: '{{.version}}'}]}
`

func otherRepoIndex(t *testing.T, remote string) *Index {
	t.Helper()
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	if remote != "" {
		os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[remote \"origin\"]\n\turl = "+remote+"\n"), 0o644)
	}
	os.MkdirAll(filepath.Join(root, "apps", "g"), 0o755)
	os.WriteFile(filepath.Join(root, "apps.yaml"), []byte(otherRepoApps), 0o644)
	ix, err := Scan(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func names(apps []*App) []string {
	var out []string
	for _, a := range apps {
		out = append(out, a.What)
	}
	return out
}

// TestOfOtherRepository: with the repository's remote known (in any
// spelling), only its Application matches; the other repository's is
// returned apart, and its unread ApplicationSet does not refuse the
// directory. Without a remote, every one matches by path (as before), and
// --repo-url (AddRepoURLs) stands in for the remote.
func TestOfOtherRepository(t *testing.T) {
	ix := otherRepoIndex(t, "ssh://git@GITHUB.com/org/gitops")
	apps, elsewhere, err := ix.Of(filepath.Join(ix.Root, "apps", "g"))
	if err != nil || !slices.Equal(names(apps), []string{"Application here"}) || apps[0].ByPath ||
		!slices.Equal(names(elsewhere), []string{"Application there"}) || elsewhere[0].RepoURL != "git@github.com:someone/else.git" {
		t.Fatalf("apps %q elsewhere %q err %v", names(apps), names(elsewhere), err)
	}

	for _, remote := range []string{"", "/srv/mirrors/gitops.git", "file:///srv/mirrors/gitops.git"} {
		ix = otherRepoIndex(t, remote)
		if len(ix.RepoURLs()) != 0 {
			t.Errorf("remote %q: repository URLs %q, want none (a local path is no URL Argo CD reads by)", remote, ix.RepoURLs())
		}
	}
	if _, _, err := ix.Of(filepath.Join(ix.Root, "apps", "g")); err == nil || !strings.Contains(err.Error(), "ApplicationSet elsewhere (apps.yaml:") {
		t.Fatalf("no remote: the unread ApplicationSet is not refused by path: %v", err)
	}
	if err := ix.AddRepoURLs("https://github.com/org/gitops/"); err != nil {
		t.Fatal(err)
	}
	apps, elsewhere, err = ix.Of(filepath.Join(ix.Root, "apps", "g"))
	if err != nil || !slices.Equal(names(apps), []string{"Application here"}) || !slices.Equal(names(elsewhere), []string{"Application there"}) {
		t.Fatalf("--repo-url: apps %q elsewhere %q err %v", names(apps), names(elsewhere), err)
	}
	if err := ix.AddRepoURLs("{{.repo}}"); err == nil || !strings.Contains(err.Error(), `--repo-url "{{.repo}}": not a Git repository URL`) {
		t.Errorf("bad --repo-url: %v", err)
	}
}

// TestRunOtherRepository: upgrade --write bumps this repository's
// Application only; the other repository's, naming the same path, is left
// as written and named in OtherRepos. Without a remote, both match by path
// and ByPath says so.
func TestRunOtherRepository(t *testing.T) {
	e := newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"})
	e.file(t, "apps/g/olm-cmp.yaml", specDoc("bundle: "+e.repo()))
	apps := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: here}
spec:
  source:
    repoURL: https://github.com/org/gitops.git
    path: apps/g
    plugin: {parameters: [{name: version, string: v0.1.0}]}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: there}
spec:
  source:
    repoURL: https://github.com/someone/else.git
    path: apps/g
    plugin: {parameters: [{name: version, string: v0.1.0}]}
`
	e.file(t, "argocd/apps.yaml", apps)
	r := one(t, e.run(t, OLMv1, false, "apps/g"))
	if r.Status != Available || len(r.ByPath) != 2 || !strings.Contains(r.ByPath[0], "Application here (argocd/apps.yaml:1): matched by its path alone, this checkout has no Git remote (but local paths) to compare its repoURL with (name the repository with --repo-url)") || len(r.OtherRepos) != 0 {
		t.Fatalf("no remote: got %+v", r)
	}

	e.file(t, ".git/config", "[remote \"origin\"]\n\turl = git@github.com:org/gitops\n")
	r = one(t, e.run(t, OLMv1, true, "apps/g"))
	want := []OtherRepo{{Application: "Application there (argocd/apps.yaml:10)", File: "argocd/apps.yaml", RepoURL: "https://github.com/someone/else.git"}}
	if r.Status != Written || !strings.HasPrefix(r.Where, "Application here (argocd/apps.yaml:1)") || !slices.Equal(r.OtherRepos, want) || r.ByPath != nil {
		t.Fatalf("with remote: got %+v", r)
	}
	got := e.read(t, "argocd/apps.yaml")
	if wantApps := strings.Replace(apps, "string: v0.1.0", "string: v0.2.0", 1); !strings.HasPrefix(got, wantApps[:strings.Index(wantApps, "---")]) || !strings.HasSuffix(got, apps[strings.Index(apps, "---"):]) {
		t.Errorf("written:\n%s", got)
	}
}
