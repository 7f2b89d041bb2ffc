package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffAppsFromNamedFileNotSkipped: a file named by --apps-from that the
// scan would pass over (a symbolic link, a manifest over the size bound, a YAML alias bomb) is
// refused in one line with diff's status 3, not read as "no application".
func TestDiffAppsFromNamedFileNotSkipped(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ./bundle\n  namespace: x\n"))
	big := filepath.Join(dir, "big.yaml")
	writeFile(t, big, []byte("apiVersion: argoproj.io/v1alpha1\nkind: Application\n# "+strings.Repeat("x", 2<<20)+"\n"))
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(big, link); err != nil {
		t.Fatal(err)
	}
	bomb := filepath.Join(dir, "bomb.yaml")
	doc := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nx0: &a0 [l, l, l, l, l, l, l, l, l]\n"
	for i := 1; i < 10; i++ {
		p := fmt.Sprintf("*a%d", i-1)
		doc += fmt.Sprintf("x%d: &a%d [%s]\n", i, i, strings.Repeat(p+", ", 8)+p)
	}
	writeFile(t, bomb, []byte(doc+"spec:\n  source:\n    path: x\n    plugin:\n      parameters:\n      - name: namespace\n        string: *a9\n"))
	for _, c := range []struct{ path, want string }{
		{big, "over the 1048576-byte bound"},
		{bomb, "not YAML olm-cmp reads"},
		{link, "is a symbolic link"},
	} {
		_, stderr, code := runStatus(t, "diff", dir, dir, "--apps-from", c.path)
		if code != diffRenderError || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("--apps-from %s: status %d, want %d and %q in one line:\n%s", filepath.Base(c.path), code, diffRenderError, c.want, stderr)
		}
	}
}
