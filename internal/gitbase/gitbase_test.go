package gitbase

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo is a Git repository holding app/olm-cmp.yaml, which names the
// bundle directory ../bundle, committed once; run runs git in it.
func repo(t *testing.T) (dir string, run func(args ...string)) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir = t.TempDir()
	run = func(args ...string) {
		t.Helper()
		c := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("app/olm-cmp.yaml", "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ../bundle\n  namespace: demo\n")
	write("bundle/manifests/csv.yaml", "then\n")
	write("other/file", "not extracted\n")
	run("init", "-q")
	run("add", "-A")
	run("commit", "-qm", "one")
	return dir, run
}

// The spec directory and the bundle directory it names are extracted as
// they were at the revision, in their places; nothing else is.
func TestExtractAtRevision(t *testing.T) {
	dir, _ := repo(t)
	os.WriteFile(filepath.Join(dir, "bundle/manifests/csv.yaml"), []byte("now\n"), 0o644)
	tree, err := Extract(context.Background(), filepath.Join(dir, "app"), "HEAD", nil)
	if err != nil || tree == nil {
		t.Fatalf("Extract: %v, %v", tree, err)
	}
	root := filepath.Dir(tree.Dir)
	if got, _ := os.ReadFile(filepath.Join(root, "bundle/manifests/csv.yaml")); string(got) != "then\n" {
		t.Errorf("bundle file %q, want it as committed", got)
	}
	if _, err := os.Stat(filepath.Join(tree.Dir, "olm-cmp.yaml")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(root, "other")); err == nil {
		t.Error("a directory the spec does not name was extracted")
	}
	if ix, err := tree.Index(context.Background(), nil); ix != nil || err != nil {
		t.Errorf("Index without --apps-from: %v, %v", ix, err)
	}
	tree.Close()
	if _, err := os.Stat(root); err == nil {
		t.Error("Close left the extracted files")
	}
}

// A directory without olm-cmp.yaml at the revision is a new application
// (no tree, no error); a revision that does not exist is one line naming it.
func TestExtractNewAppAndUnknownRevision(t *testing.T) {
	dir, run := repo(t)
	os.MkdirAll(filepath.Join(dir, "new"), 0o755)
	os.WriteFile(filepath.Join(dir, "new/olm-cmp.yaml"), []byte("x\n"), 0o644)
	run("add", "-A")
	run("commit", "-qm", "two")
	tree, err := Extract(context.Background(), filepath.Join(dir, "new"), "HEAD~1", nil)
	if tree != nil || err != nil {
		t.Errorf("new application: %v, %v; want neither", tree, err)
	}
	_, err = Extract(context.Background(), filepath.Join(dir, "app"), "nope", nil)
	if err == nil || !strings.HasPrefix(err.Error(), `--git-base "nope": no such revision in the repository of `) {
		t.Errorf("unknown revision: %v", err)
	}
}

// A bundle directory that is a symbolic link at the revision
// (app/bundle -> ../linked/real, linked -> shared) is extracted with the
// links and their target, as a
// checkout of the revision would hold it; a link leaving the repository is
// refused in render's words.
func TestExtractSymlinkedBundle(t *testing.T) {
	dir, run := repo(t)
	os.WriteFile(filepath.Join(dir, "app/olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ./bundle\n  namespace: demo\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "shared/real"), 0o755)
	// A chain: app/bundle -> ../linked/real, linked -> shared.
	os.MkdirAll(filepath.Join(dir, "shared/real/manifests"), 0o755)
	os.WriteFile(filepath.Join(dir, "shared/real/manifests/csv.yaml"), []byte("shared then\n"), 0o644)
	if err := os.Symlink("shared", filepath.Join(dir, "linked")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	os.Symlink("../linked/real", filepath.Join(dir, "app/bundle"))
	run("add", "-A")
	run("commit", "-qm", "two")
	os.WriteFile(filepath.Join(dir, "shared/real/manifests/csv.yaml"), []byte("now\n"), 0o644)

	tree, err := Extract(context.Background(), filepath.Join(dir, "app"), "HEAD", nil)
	if err != nil || tree == nil {
		t.Fatalf("Extract: %v, %v", tree, err)
	}
	defer tree.Close()
	if got, err := os.ReadFile(filepath.Join(tree.Dir, "bundle/manifests/csv.yaml")); string(got) != "shared then\n" {
		t.Errorf("through the link: %q, %v; want the target as committed", got, err)
	}
	if fi, err := os.Lstat(filepath.Join(tree.Dir, "bundle")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("app/bundle is not the link it was at the revision: %v", err)
	}

	// At a revision where the link leaves the repository: render's words.
	os.Remove(filepath.Join(dir, "app/bundle"))
	os.Symlink("../../outside", filepath.Join(dir, "app/bundle"))
	run("add", "-A")
	run("commit", "-qm", "three")
	_, err = Extract(context.Background(), filepath.Join(dir, "app"), "HEAD", nil)
	if want := `--git-base "HEAD": spec.bundle "./bundle": the bundle directory must be inside the repository`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("a link leaving the repository: %v; want %s…", err, want)
	}
	os.Remove(filepath.Join(dir, "app/bundle"))
	os.Symlink("/etc", filepath.Join(dir, "app/bundle"))
	run("add", "-A")
	run("commit", "-qm", "four")
	if _, err = Extract(context.Background(), filepath.Join(dir, "app"), "HEAD", nil); err == nil || !strings.Contains(err.Error(), "must be inside the repository") {
		t.Errorf("an absolute link: %v", err)
	}

	// A link to nothing at the revision is left for render to call not
	// found (in the tree at the revision), not a git archive failure.
	os.Remove(filepath.Join(dir, "app/bundle"))
	os.Symlink("../nothing", filepath.Join(dir, "app/bundle"))
	run("add", "-A")
	run("commit", "-qm", "five")
	tree, err = Extract(context.Background(), filepath.Join(dir, "app"), "HEAD", nil)
	if err != nil || tree == nil {
		t.Fatalf("a dangling link: %v, %v", tree, err)
	}
	defer tree.Close()
	if _, err := os.Stat(filepath.Join(tree.Dir, "bundle")); err == nil {
		t.Error("a dangling link left a bundle directory")
	}
}
