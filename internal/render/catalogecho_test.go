package render

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// The bundle image a catalog names is the catalog's value, echoed in every
// message about the bundle it chose: capped and escaped (a 30 MB image
// reference once made a 94 MB error line).
func TestCatalogImageReferenceEchoBounded(t *testing.T) {
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "catalog"), 0o755); err != nil {
		t.Fatal(err)
	}
	image := "example.com/x" + strings.Repeat("a", 1<<20) + "\x1b[2J"
	body := `{"schema":"olm.package","name":"greeter-operator"}
{"schema":"olm.bundle","name":"g.v0.2.0","package":"greeter-operator","image":"` + strings.ReplaceAll(image, "\x1b", `\u001b`) + `","properties":[{"type":"olm.package","value":{"packageName":"greeter-operator","version":"0.2.0"}}]}
`
	if err := os.WriteFile(filepath.Join(src, "catalog", "catalog.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	req := demoRequest(t)
	req.SourceDir = src
	req.Spec.Bundle, req.Spec.Catalog, req.Spec.Package = "", "./catalog", "greeter-operator"
	_, err := (&Renderer{Loader: &bundle.ImageLoader{CacheDir: t.TempDir()}}).Render(context.Background(), req)
	if err == nil {
		t.Fatal("rendered an image reference that does not parse")
	}
	if msg := err.Error(); len(msg) > 2048 || strings.ContainsAny(msg, "\x1b\n") || !strings.Contains(msg, "example.com/xaaa") {
		t.Errorf("message of %d bytes: %.300q", len(msg), msg)
	}
}
