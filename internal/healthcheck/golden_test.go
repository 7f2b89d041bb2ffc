package healthcheck

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated files under testdata (argocd-cm.yaml, outcomes.txt)")

// goldenFile compares got with the committed file (or, with -update, writes it).
func goldenFile(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go test ./internal/healthcheck -update, and review the diff", path)
	}
}

// GoldenFile is goldenFile for the external test package.
var GoldenFile = goldenFile
