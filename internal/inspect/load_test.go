package inspect

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/render"
)

// TestLoadRefAndReport: a bundle directory named on the command line is
// loaded as it is (no trust policy: no signatures), and its report is the
// summary plus the requirements of a default spec's render; a name that
// is neither a directory nor an image with its registry is refused before
// anything is read.
func TestLoadRefAndReport(t *testing.T) {
	dir, err := filepath.Abs("../../examples/demo/bundle")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r := &render.Renderer{}
	rv, b, err := LoadRef(ctx, r, dir)
	if err != nil {
		t.Fatal(err)
	}
	if rv == nil || rv.Signatures != nil || b.Package != "greeter-operator" {
		t.Fatalf("loaded %+v, package %q", rv, b.Package)
	}
	s, err := Report(ctx, rv, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Package != "greeter-operator" || s.Catalog != nil || s.RequirementsError != "" || len(s.Requirements) == 0 {
		t.Errorf("report: package %q, catalog %v, requirements %d (%s)", s.Package, s.Catalog, len(s.Requirements), s.RequirementsError)
	}
	if _, _, err := LoadRef(ctx, r, "no-such-bundle"); err == nil {
		t.Error("a name that is neither a directory nor an image: no error")
	}
}
