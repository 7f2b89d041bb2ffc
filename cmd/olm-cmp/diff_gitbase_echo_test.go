package main

import (
	"strings"
	"testing"
)

// TestDiffGitBaseLongRevisionCapped: a hostile --git-base (5 KB, control
// characters) is echoed capped and escaped in one short line, with diff's
// "could not compare" status.
func TestDiffGitBaseLongRevisionCapped(t *testing.T) {
	_, repo, git := blockedBumpRepo(t) // a Git runner and its repository
	writeFile(t, repo+"/olm-cmp.yaml", []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ./bundle\n  namespace: x\n"))
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "one")
	rev := strings.Repeat("a", 5000) + "\x1b[2J"
	_, stderr, code := runStatus(t, "diff", repo, "--git-base", rev)
	if code != diffRenderError || len(stderr) > 1000 || strings.Contains(stderr, "\x1b") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("5 KB --git-base: status %d, %d bytes of stderr:\n%.300s", code, len(stderr), stderr)
	}
}
