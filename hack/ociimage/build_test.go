package ociimage

import (
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"io"
	"log"
	"maps"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

var testEpoch = time.Unix(1764288000, 0).UTC()

// build builds the layout for this machine's architecture: enough to show
// reproducibility without compiling every package for a second one (make
// image builds both).
func build(t *testing.T) (string, *Result) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds olm-cmp: skipped with -short")
	}
	if _, err := os.Stat(DefaultCACerts); err != nil {
		t.Skipf("%s: install Debian's ca-certificates package", DefaultCACerts)
	}
	dir := filepath.Join(t.TempDir(), "oci")
	res, err := Build(dir, Options{Repo: "../..", Platforms: []string{"linux/" + runtime.GOARCH}, Version: "v0.0.0-test", Epoch: testEpoch})
	if err != nil {
		t.Fatal(err)
	}
	return dir, res
}

// TestBuildReproducible: two builds of one tree give the same index, image
// and SBOM digests, and the same index.json.
func TestBuildReproducible(t *testing.T) {
	dir1, r1 := build(t)
	dir2, r2 := build(t)
	if r1.Index != r2.Index || r1.SBOM != r2.SBOM {
		t.Errorf("two builds differ: index %s vs %s, sbom %s vs %s", r1.Index, r2.Index, r1.SBOM, r2.SBOM)
	}
	a, _ := os.ReadFile(filepath.Join(dir1, "index.json"))
	b, _ := os.ReadFile(filepath.Join(dir2, "index.json"))
	if string(a) != string(b) || !strings.Contains(string(a), r1.Index.String()) {
		t.Errorf("index.json differs or lacks the index:\n%s\n%s", a, b)
	}
	t.Logf("index %s, sbom %s, sizes %v", r1.Index, r1.SBOM, r1.Size)
	mods := checkImage(t, dir1, r1)
	checkPush(t, dir1, r1, mods)
}

// checkImage: the layer holds exactly the root filesystem, root-owned, at
// the epoch, in order; the config is the Dockerfile's. It returns the Go
// modules (path@version) linked into the image's binaries, olm-cmp and
// olm-cmp-check, each built from its own ./cmd/ package.
func checkImage(t *testing.T, dir string, r *Result) map[string]bool {
	idx, err := OpenIndex(dir, r.Index)
	if err != nil {
		t.Fatal(err)
	}
	img, err := idx.Image(r.Image["linux/"+runtime.GOARCH])
	if err != nil {
		t.Fatal(err)
	}
	hs, data, err := ReadLayer(img)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	modes := map[string]int64{}
	for _, h := range hs {
		if h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(testEpoch) || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: owner %d:%d (%q:%q), time %s", h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime)
		}
		names = append(names, h.Name)
		modes[h.Name] = h.Mode
	}
	want := []string{"etc/", "etc/group", "etc/passwd", "etc/ssl/", "etc/ssl/certs/", "etc/ssl/certs/ca-certificates.crt",
		"home/", "home/argocd/", "home/argocd/cmp-server/", "home/argocd/cmp-server/config/", "home/argocd/cmp-server/config/plugin.yaml",
		"tmp/", "usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/olm-cmp", "usr/local/bin/olm-cmp-check"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("layer entries:\n%v\nwant\n%v", names, want)
	}
	if modes["tmp/"] != 0o1777 || modes["usr/local/bin/olm-cmp"] != 0o755 || modes["usr/local/bin/olm-cmp-check"] != 0o755 || modes["etc/passwd"] != 0o644 {
		t.Errorf("modes %v", modes)
	}
	mods := map[string]bool{}
	for _, b := range Binaries {
		bi, err := buildinfo.Read(bytes.NewReader(data[b]))
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if bi.Path != "github.com/olm-cmp/olm-cmp/cmd/"+path.Base(b) {
			t.Errorf("%s is built from %s", b, bi.Path)
		}
		for _, d := range bi.Deps {
			if d.Replace != nil {
				d = d.Replace
			}
			mods[d.Path+"@"+d.Version] = true
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "999:999" || strings.Join(cf.Config.Entrypoint, " ") != BinaryPath || !cf.Created.Time.Equal(testEpoch) || cf.Architecture != runtime.GOARCH {
		t.Errorf("config %+v", cf)
	}
	return mods
}

// checkPush pushes the layout to go-containerregistry's registry: the tag
// resolves to the index, and the index's referrers list the SBOM, whose
// blob is CycloneDX JSON naming exactly the modules of the image's binaries
// (mods).
func checkPush(t *testing.T, dir string, r *Result, mods map[string]bool) {
	srv := httptest.NewServer(registry.New(registry.WithReferrersSupport(true), registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	image := strings.TrimPrefix(srv.URL, "http://") + "/olm-cmp/olm-cmp:v0.0.0-test"
	got, err := Push(dir, image)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := name.ParseReference(image)
	desc, err := remote.Head(ref)
	if err != nil || got != r.Index || desc.Digest != r.Index {
		t.Fatalf("pushed %s, tag resolves to %v (%v), want %s", got, desc, err, r.Index)
	}
	refs, err := remote.Referrers(ref.Context().Digest(r.Index.String()))
	if err != nil {
		t.Fatal(err)
	}
	im, _ := refs.IndexManifest()
	if len(im.Manifests) != 1 || im.Manifests[0].Digest != r.SBOM || im.Manifests[0].ArtifactType != SBOMArtifactType {
		t.Fatalf("referrers of the index: %+v, want the SBOM %s", im.Manifests, r.SBOM)
	}
	img, err := remote.Image(ref.Context().Digest(r.SBOM.String()))
	if err != nil {
		t.Fatal(err)
	}
	ls, _ := img.Layers()
	rc, err := ls[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var bom struct {
		BOMFormat  string `json:"bomFormat"`
		Components []struct {
			Name, Version string
		} `json:"components"`
		Metadata struct {
			Timestamp string
			Component struct{ Name, Version string }
		} `json:"metadata"`
	}
	if err := json.NewDecoder(rc).Decode(&bom); err != nil {
		t.Fatal(err)
	}
	found := false
	listed := map[string]bool{}
	for _, c := range bom.Components {
		found = found || c.Name == "github.com/google/go-containerregistry"
		listed[c.Name+"@"+c.Version] = true
	}
	if !maps.Equal(listed, mods) {
		t.Errorf("SBOM lists the modules %v\nthe binaries link %v", slices.Sorted(maps.Keys(listed)), slices.Sorted(maps.Keys(mods)))
	}
	if bom.BOMFormat != "CycloneDX" || !found || bom.Metadata.Component.Version != "v0.0.0-test" || bom.Metadata.Timestamp != testEpoch.Format(time.RFC3339) {
		t.Errorf("SBOM: %+v", bom)
	}
}
