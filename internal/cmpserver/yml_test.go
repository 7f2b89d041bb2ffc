package cmpserver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/render"
)

// An application directory holding olm-cmp.yml is not discovered (the
// plugin's rule is olm-cmp.yaml, as the CLI's), and rendering it by name
// says what to rename.
func TestYmlIsNamedNotRead(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "olm-cmp.yml"), []byte("kind: OperatorBundle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if HasSpec(dir) {
		t.Error("olm-cmp.yml discovered")
	}
	var out, errOut bytes.Buffer
	err := Generate(context.Background(), Fixed(&render.Renderer{}), dir, nil, &out, &errOut)
	want := "olm-cmp.yaml not found in " + dir + ", but olm-cmp.yml is there: rename it to olm-cmp.yaml (olm-cmp and its Argo CD plugin look for that name only)"
	if err == nil || err.Error() != want || out.Len() != 0 {
		t.Errorf("want %s, got %v (%d bytes out)", want, err, out.Len())
	}
}
