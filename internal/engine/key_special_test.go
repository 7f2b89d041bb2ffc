//go:build unix

package engine

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/render"
)

// TestKeyNamesSpecialFiles: a FIFO or a link named like an extra manifest
// (which the render refuses) changes the key, so a render cached before it
// appeared is not served as if it were not there; the FIFO is not opened.
func TestKeyNamesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("x: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	req := render.Request{SourceDir: dir}
	before, err := hashSourceFiles(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "x.yaml"), 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	withFIFO, err := hashSourceFiles(req)
	if err != nil || withFIFO == before {
		t.Errorf("a FIFO beside the spec: key %s (%v), before %s", withFIFO, err, before)
	}
	os.Remove(filepath.Join(dir, "x.yaml"))
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "x.yaml")); err != nil {
		t.Fatal(err)
	}
	withLink, err := hashSourceFiles(req)
	if err != nil || withLink == before || withLink == withFIFO {
		t.Errorf("a link beside the spec: key %s (%v), before %s, FIFO %s", withLink, err, before, withFIFO)
	}
}
