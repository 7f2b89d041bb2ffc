package bundle

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A symbolic link out of the bundle is refused in words, not os.Root's
// "statat ...: path escapes from parent", and the error is a DirError
// naming the directory as given, so callers can name it their own way.
func TestLoadDirEscapingLink(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/good")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "manifests", "zz.yaml")); err != nil {
		t.Fatal(err)
	}
	_, err := LoadDir(dir)
	var de *DirError
	if !errors.As(err, &de) || de.Dir != dir {
		t.Fatalf("error %v is not a DirError for %s", err, dir)
	}
	want := "reading manifests/zz.yaml: a symbolic link that leads outside the bundle directory: copy the file into the bundle instead"
	if de.Err.Error() != want || strings.Contains(err.Error(), "escapes from parent") {
		t.Errorf("error %q, want %q", de.Err, want)
	}
}
