package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpgradeFromIsPartOfTheKey: spec.upgradeFrom's tag moving to an unsafe
// bundle must fail the next render, not serve the cached one.
func TestUpgradeFromIsPartOfTheKey(t *testing.T) {
	loader := newLoader(t)
	const fromRef = "example.com/demo-bundle:v0.1.0"
	abs, err := filepath.Abs(demoBundle)
	if err != nil {
		t.Fatal(err)
	}
	loader.Add(fromRef, abs, digestB) // the same CRDs: safe
	e := NewEngine(EngineOptions{Loader: loader})
	req := imageReq(t)
	req.Spec.UpgradeFrom = "v0.1.0"
	if _, _, err := e.Render(context.Background(), req); err != nil {
		t.Fatal(err)
	}

	// FROM's tag now names a bundle whose CRD has replicas as a string:
	// TO's integer is a type change.
	unsafe := filepath.Join(t.TempDir(), "bundle")
	copyTree(t, demoBundle, unsafe)
	crd := filepath.Join(unsafe, "manifests", "greeter.example.com_greeters.yaml")
	data, err := os.ReadFile(crd)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "replicas:\n                type: integer", "replicas:\n                type: string", 1)
	if edited == string(data) {
		t.Fatal("the demo CRD changed: update this test")
	}
	if err := os.WriteFile(crd, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	loader.Add(fromRef, unsafe, "sha256:"+strings.Repeat("c", 64))
	_, info, err := e.Render(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "error: type: CRD greeters.greeter.example.com version v1alpha1 path .spec.replicas") {
		t.Fatalf("got %v (cache %s), want the type finding", err, info.Cache)
	}
}
