package upgrade

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRemotesInclude: a remote defined in a file the config includes
// ([include] path=, relative to the config) is one of the checkout's, as
// git says; an include loop ends at the depth bound.
func TestRemotesInclude(t *testing.T) {
	root := t.TempDir()
	gitDir := filepath.Join(root, ".git")
	if err := os.Mkdir(gitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(gitDir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("config", "[remote \"upstream\"]\n\turl = https://example.com/other/z\n[include]\n\tpath = remotes.cfg\n")
	write("remotes.cfg", "[include]\n\tpath = remotes.cfg\n[remote \"origin\"]\n\turl = https://example.com/org/gitops.git\n")
	got := Remotes(root)
	if !slices.Equal(got, []string{"https://example.com/other/z", "https://example.com/org/gitops.git"}) {
		t.Errorf("Remotes = %q, want the config's and the included file's", got)
	}
}
