package diff

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// TestSidesRequests: FROM is DIR's spec, TO is TO_DIR's (or DIR's) with
// the spec flags, then --to-version or --to-bundle: a version replaces an
// image's tag and drops FROM's digest pin, a bundle replaces a catalog, and
// a directory bundle has no versions to choose from.
func TestSidesRequests(t *testing.T) {
	specs := map[string]spec.Spec{
		"img": {Bundle: "quay.io/org/op-bundle:v1", Digest: "sha256:" + strings.Repeat("a", 64), Namespace: "ns"},
		"cat": {Catalog: "quay.io/org/cat:v1", Package: "op", Version: "1.x", Namespace: "ns"},
		"dir": {Bundle: "./bundle", Namespace: "ns"},
	}
	var loads []string
	load := func(dir string, flags bool) (render.Request, error) {
		loads = append(loads, dir+map[bool]string{true: "+flags", false: ""}[flags])
		return render.Request{SourceDir: dir, Spec: specs[dir]}, nil
	}
	var notes bytes.Buffer
	ctx := context.Background()

	from, to, cleanup, err := Sides{Dir: "img", ToVersion: "v2", Load: load, Notes: &notes}.Requests(ctx)
	cleanup()
	if err != nil {
		t.Fatal(err)
	}
	if from.Spec.Bundle != "quay.io/org/op-bundle:v1" || from.Spec.Digest == "" {
		t.Errorf("FROM changed: %+v", from.Spec)
	}
	if to.Spec.Bundle != "quay.io/org/op-bundle" || to.Spec.Version != "v2" || to.Spec.Digest != "" {
		t.Errorf("TO --to-version v2: %+v", to.Spec)
	}
	if strings.Join(loads, ",") != "img+flags,img" {
		t.Errorf("loads %q: TO with the flags, then FROM without", loads)
	}

	loads = nil
	from, to, _, err = Sides{Dir: "cat", ToDir: "img", Load: load, Notes: &notes}.Requests(ctx)
	if err != nil || from.SourceDir != "cat" || to.SourceDir != "img" || strings.Join(loads, ",") != "img+flags,cat" {
		t.Errorf("FROM_DIR TO_DIR: %v, from %s, to %s, loads %q", err, from.SourceDir, to.SourceDir, loads)
	}

	_, to, _, err = Sides{Dir: "cat", ToBundle: "quay.io/org/op-bundle:v3", Load: load, Notes: &notes}.Requests(ctx)
	if err != nil || to.Spec.Catalog != "" || to.Spec.Package != "" || to.Spec.Version != "" || to.Spec.Bundle != "quay.io/org/op-bundle:v3" {
		t.Errorf("--to-bundle over a catalog: %v, %+v", err, to.Spec)
	}

	_, to, _, err = Sides{Dir: "cat", ToVersion: "2.x", Load: load, Notes: &notes}.Requests(ctx)
	if err != nil || to.Spec.Catalog == "" || to.Spec.Version != "2.x" {
		t.Errorf("--to-version on a catalog: %v, %+v", err, to.Spec)
	}

	_, _, _, err = Sides{Dir: "dir", ToVersion: "v2", Load: load, Notes: &notes}.Requests(ctx)
	if want := `--to-version "v2": spec.bundle "./bundle" is a directory`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("--to-version on a directory bundle: %v, want %s…", err, want)
	}
	if notes.Len() != 0 {
		t.Errorf("notes without --apps-from: %q", notes.String())
	}
}
