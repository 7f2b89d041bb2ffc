package render

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

// A YAMLOnly render prints the same manifests and writes no JSON.
func TestYAMLOnlySkipsJSON(t *testing.T) {
	req := dirRequest(t, filepath.Join(demoDir, "bundle"), "greeter-system")
	full, err := (&Renderer{}).Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	lean, err := (&Renderer{YAMLOnly: true}).Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(full.JSON) == 0 || len(full.JSON) != len(full.Manifests) {
		t.Fatalf("a full render has %d JSON objects for %d manifests", len(full.JSON), len(full.Manifests))
	}
	if !slices.Equal(lean.Manifests, full.Manifests) {
		t.Error("YAMLOnly changed the manifests")
	}
	if lean.JSON != nil || lean.KeptYAML != 0 {
		t.Errorf("YAMLOnly wrote %d JSON objects (%d kept as YAML)", len(lean.JSON), lean.KeptYAML)
	}
	if !slices.Equal(lean.Warnings, full.Warnings) {
		t.Errorf("warnings differ:\n%q\n%q", lean.Warnings, full.Warnings)
	}
}
