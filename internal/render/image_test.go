package render

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
)

// renderViaRegistry pushes dir as an image to an in-process registry and
// renders it from there, with the rest of the spec as given.
func renderViaRegistry(t *testing.T, dir string, req Request) (*Result, *bundletest.Counter) {
	t.Helper()
	host, requests := bundletest.NewRegistry(t)
	digest := bundletest.PushDir(t, host, "olm-cmp/test-bundle", "v1", dir)
	r := &Renderer{Loader: &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}}
	req.Spec.Bundle = host + "/olm-cmp/test-bundle"
	req.Spec.Version = "v1"
	res, err := r.Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Origin.Digest != digest || !strings.HasSuffix(res.Origin.Image, "@"+digest) {
		t.Errorf("origin %+v does not report the pushed digest %s", res.Origin, digest)
	}
	return res, requests
}

// sameExceptSource compares two renders; only the source and digest
// annotations (which name the image or the directory) may differ.
func sameExceptSource(t *testing.T, fromDir, fromImage *Result) {
	t.Helper()
	if len(fromDir.Manifests) != len(fromImage.Manifests) {
		t.Fatalf("%d objects from the directory, %d from the image", len(fromDir.Manifests), len(fromImage.Manifests))
	}
	strip := func(s string, r *Result) string {
		src := r.Origin.Image
		if src == "" {
			src = r.Origin.Ref
		}
		// The digest annotation differs too: an image's manifest digest, a
		// directory's content digest.
		return strings.ReplaceAll(strings.ReplaceAll(s, src, "SOURCE"), r.Origin.Digest, "DIGEST")
	}
	for i := range fromDir.Manifests {
		a, b := strip(fromDir.Manifests[i], fromDir), strip(fromImage.Manifests[i], fromImage)
		if a != b {
			t.Fatalf("object %d differs:\n--- directory\n%s\n--- image\n%s", i, a, b)
		}
	}
}

func TestImageRendersLikeDirectory(t *testing.T) {
	req := demoRequest(t)
	fromDir := mustRender(t, req)
	fromImage, requests := renderViaRegistry(t, filepath.Join(demoDir, "bundle"), req)
	sameExceptSource(t, fromDir, fromImage)
	if requests.Manifests() == 0 {
		t.Error("the registry was never asked for the manifest")
	}
	if !bytes.Contains(fromImage.YAML(), []byte("@sha256:")) {
		t.Error("the image render should name the pinned digest in its source annotation")
	}
}

func TestSailImageRendersLikeDirectory(t *testing.T) {
	requireShared(t)
	dir := filepath.Join(sharedDir, "bundles/sailoperator-1.30.3")
	req := dirRequest(t, dir, "sail-operator")
	fromDir := mustRender(t, req)
	fromImage, _ := renderViaRegistry(t, dir, req)
	sameExceptSource(t, fromDir, fromImage)
}

// A bare name that happens to be a directory on the server is not a bundle:
// only explicit paths are, and they stay inside RootDir.
func TestBareNameNeverReadsServerDirectories(t *testing.T) {
	req := demoRequest(t)
	abs, _ := filepath.Abs(filepath.Join(demoDir, "bundle"))
	t.Chdir(filepath.Dir(abs))
	req.Spec.Bundle = "bundle"
	r := &Renderer{Loader: &bundle.ImageLoader{CacheDir: t.TempDir()}}
	_, err := r.Render(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "write it as ./bundle") {
		t.Fatalf("want the local-directory error, got %v", err)
	}
}

// TestPinCost: a pinned spec asks the registry what it would ask for an
// unpinned tag (one manifest request), and pulls nothing once cached; a pin
// by digest alone asks nothing.
func TestPinCost(t *testing.T) {
	host, requests := bundletest.NewRegistry(t)
	digest := bundletest.PushDir(t, host, "olm-cmp/test-bundle", "v1", demoDir+"/bundle")
	r := &Renderer{Loader: &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}}
	req := demoRequest(t)
	req.Spec.Bundle, req.Spec.Version = host+"/olm-cmp/test-bundle", "v1"
	if _, err := r.Render(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name             string
		bundle, version  string
		digest           string
		manifests, blobs int
	}{
		{"tag", host + "/olm-cmp/test-bundle", "v1", "", 1, 0},
		{"tag and spec.digest", host + "/olm-cmp/test-bundle", "v1", digest, 1, 0},
		{"tag@digest", host + "/olm-cmp/test-bundle:v1@" + digest, "", "", 1, 0},
		{"digest alone", host + "/olm-cmp/test-bundle@" + digest, "", "", 0, 0},
	} {
		requests.Reset()
		req.Spec.Bundle, req.Spec.Version, req.Spec.Digest = tc.bundle, tc.version, tc.digest
		if _, err := r.Render(context.Background(), req); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if m, b := requests.Manifests(), requests.BlobGets(); m != tc.manifests || b != tc.blobs {
			t.Errorf("%s: %d manifest requests, %d blob downloads; want %d, %d", tc.name, m, b, tc.manifests, tc.blobs)
		}
	}
}
