//go:build unix

package upgrade

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestRemotesConfigFIFO: a checkout whose .git file points at a directory
// whose config is a FIFO (or whose .git/config is a link to one) has no
// remotes; reading them used to block forever in open(2).
func TestRemotesConfigFIFO(t *testing.T) {
	evil := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(evil, "config"), 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: "+evil+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan []string, 1)
	go func() { done <- Remotes(root) }()
	select {
	case got := <-done:
		if got != nil {
			t.Errorf("Remotes = %q, want none", got)
		}
	case <-time.After(30 * time.Second): // a deadlock guard, not a timing
		t.Fatal("Remotes blocked on a FIFO config")
	}
}
