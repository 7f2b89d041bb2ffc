package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A manifests/ file name with a line break or an escape character would
// reach every message naming the file (and the spec.excludeFiles hint)
// raw: refused with the name escaped.
func TestManifestFileNameWithControlCharacters(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "manifests"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "metadata"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "metadata", "annotations.yaml"), []byte("annotations:\n  operators.operatorframework.io.bundle.package.v1: p\n"), 0o644)
	if err := os.WriteFile(filepath.Join(dir, "manifests", "y\x1b[2J\nerror: forged.yaml"), []byte("not: [valid"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadDir(dir)
	if err == nil {
		t.Fatal("loaded")
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\n\x1b") || !strings.Contains(msg, `y\x1b[2J\nerror: forged.yaml`) {
		t.Errorf("got %q, want the file name escaped", msg)
	}
}
