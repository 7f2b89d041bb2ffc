package deploy_test

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/hack/ociimage"
)

var ociBuilt struct {
	once sync.Once
	dir  string
	img  v1.Image
	err  error
}

// ociImage builds the image as `make image` does (hack/ociimage), for this
// machine's architecture, once per test process.
func ociImage(t *testing.T) v1.Image {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the image: skipped with -short")
	}
	if _, err := os.Stat(ociimage.DefaultCACerts); err != nil {
		t.Skipf("%s: install Debian's ca-certificates package", ociimage.DefaultCACerts)
	}
	ociBuilt.once.Do(func() {
		if ociBuilt.dir, ociBuilt.err = os.MkdirTemp("", "olm-cmp-oci"); ociBuilt.err != nil {
			return
		}
		dir := filepath.Join(ociBuilt.dir, "oci")
		p := "linux/" + runtime.GOARCH
		var res *ociimage.Result
		res, ociBuilt.err = ociimage.Build(dir, ociimage.Options{Repo: "..", Platforms: []string{p}, Version: testVersion, Epoch: time.Unix(1764288000, 0)})
		if ociBuilt.err != nil {
			return
		}
		idx, err := ociimage.OpenIndex(dir, res.Index)
		if err != nil {
			ociBuilt.err = err
			return
		}
		ociBuilt.img, ociBuilt.err = idx.Image(res.Image[p])
	})
	if ociBuilt.err != nil {
		t.Fatal(ociBuilt.err)
	}
	return ociBuilt.img
}

// layerEntries reads the image's one layer: headers and contents.
func layerEntries(t *testing.T, img v1.Image) ([]*tar.Header, map[string][]byte) {
	t.Helper()
	hs, data, err := ociimage.ReadLayer(img)
	if err != nil {
		t.Fatal(err)
	}
	return hs, data
}

// TestOCIImageMatchesDockerfile: the image make image builds without
// Docker holds what the Dockerfile's image holds, and runs the same way.
// Files: the Dockerfile's COPY destinations plus what its distroless base
// provides (ociimage.BaseProvided), nothing else; plugin.yaml byte for byte;
// the binary static, -trimpath, CGO off, as the Dockerfile builds it. Config:
// USER, ENTRYPOINT and CMD equal, the Dockerfile's ENV included, and beyond
// it only the base's PATH and SSL_CERT_FILE.
func TestOCIImageMatchesDockerfile(t *testing.T) {
	df := parseDockerfile(t)
	img := ociImage(t)
	hs, data := layerEntries(t, img)
	var leaves []string
	for i, h := range hs {
		p := "/" + strings.TrimSuffix(h.Name, "/")
		if i+1 < len(hs) && strings.HasPrefix("/"+hs[i+1].Name, p+"/") {
			continue // a parent directory
		}
		leaves = append(leaves, p)
	}
	var want []string
	for dst := range df.Files {
		want = append(want, dst)
	}
	want = append(want, ociimage.BaseProvided...)
	sort.Strings(want)
	if !slices.Equal(leaves, want) {
		t.Errorf("image files %v\nwant (Dockerfile COPY + base) %v", leaves, want)
	}
	for dst, src := range df.Files {
		if df.FromBuild[dst] {
			bi, err := buildinfo.Read(bytes.NewReader(data[dst]))
			if err != nil {
				t.Fatalf("%s: %v", dst, err)
			}
			settings := map[string]string{}
			for _, s := range bi.Settings {
				settings[s.Key] = s.Value
			}
			if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" || bi.Path != "github.com/olm-cmp/olm-cmp/cmd/olm-cmp" {
				t.Errorf("%s: build %s, settings %v", dst, bi.Path, settings)
			}
			continue
		}
		b, err := os.ReadFile(filepath.Join("..", src))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, data[dst]) {
			t.Errorf("%s differs from %s", dst, src)
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if c.User != df.User || !slices.Equal(c.Entrypoint, df.Entrypoint) || !slices.Equal(c.Cmd, df.Cmd) {
		t.Errorf("config user %q entrypoint %q cmd %q; Dockerfile %q %q %q", c.User, c.Entrypoint, c.Cmd, df.User, df.Entrypoint, df.Cmd)
	}
	extra := map[string]bool{}
	for _, e := range c.Env {
		k, v, _ := strings.Cut(e, "=")
		if dv, ok := df.Env[k]; ok {
			if dv != v {
				t.Errorf("env %s=%q, Dockerfile %q", k, v, dv)
			}
			delete(df.Env, k)
			continue
		}
		extra[k] = true
	}
	if len(df.Env) != 0 || len(extra) != 2 || !extra["PATH"] || !extra["SSL_CERT_FILE"] {
		t.Errorf("env %v: missing from the Dockerfile's %v, beyond the base's PATH and SSL_CERT_FILE %v", c.Env, df.Env, extra)
	}
}

// ociRoot extracts the image's root filesystem into a new directory, as a
// container runtime does: modes from the layer, owned by root.
func ociRoot(t *testing.T) string {
	t.Helper()
	hs, data := layerEntries(t, ociImage(t))
	root, err := os.MkdirTemp("", "olm-cmp-root")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		p := filepath.Join(root, path.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.Mkdir(p, 0o755)
		case tar.TypeReg:
			err = os.WriteFile(p, data["/"+h.Name], 0o644)
		default:
			t.Fatalf("%s: type %c", h.Name, h.Typeflag)
		}
		if err == nil {
			err = os.Chmod(p, os.FileMode(h.Mode&0o777)|modeBits(h.Mode))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func modeBits(m int64) os.FileMode {
	if m&0o1000 != 0 {
		return os.ModeSticky
	}
	return 0
}

// TestImagePinned: every deployment's olm-cmp container names the image
// deploy/image.yaml (generated by `ociimage pin`) says, and the file is
// what the generator writes. A pin on a copy of deploy/ moves all of them
// to tag@digest.
func TestImagePinned(t *testing.T) {
	check := func(t *testing.T, dir string) ociimage.Pin {
		t.Helper()
		p, err := ociimage.ReadPin(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !ociimage.PinIsGenerated(dir, p) {
			t.Errorf("%s/%s is not what `go run ./hack/cmd/ociimage pin` writes: run it rather than editing", dir, ociimage.PinFile)
		}
		for _, f := range ociimage.PinnedFiles {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := yaml.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			var c map[string]any
			if strings.HasPrefix(f, "helm/") {
				c = byName(t, dig(t, doc, "repoServer", "extraContainers"), "olm-cmp")
			} else {
				c = byName(t, dig(t, doc, "spec", "template", "spec", "containers"), "olm-cmp")
			}
			if c == nil || c["image"] != p.Ref() {
				t.Errorf("%s: olm-cmp image %v, want %s (deploy/%s)", f, c["image"], p.Ref(), ociimage.PinFile)
			}
		}
		return p
	}
	p := check(t, ".")
	if p.Image != "ghcr.io/olm-cmp/olm-cmp" {
		t.Errorf("image %s", p.Image)
	}

	tmp := t.TempDir()
	for _, f := range append([]string{ociimage.PinFile}, ociimage.PinnedFiles...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(tmp, f)), 0o755)
		os.WriteFile(filepath.Join(tmp, f), b, 0o644)
	}
	p.Tag, p.Digest = "v9.8.7", "sha256:"+strings.Repeat("ab", 32)
	if err := ociimage.WritePin(tmp, p); err != nil {
		t.Fatal(err)
	}
	if got := check(t, tmp).Ref(); got != "ghcr.io/olm-cmp/olm-cmp:v9.8.7@sha256:"+strings.Repeat("ab", 32) {
		t.Errorf("after pin: %s", got)
	}
	for _, bad := range []ociimage.Pin{{Image: p.Image, Tag: "latest"}, {Image: p.Image, Tag: "v1", Digest: "sha256:xyz"}} {
		if err := ociimage.WritePin(tmp, bad); err == nil {
			t.Errorf("pin %+v accepted", bad)
		}
	}
}
