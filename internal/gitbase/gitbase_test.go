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
