// Package demoregistry fills an OCI registry with the demo operator's
// bundle versions and its catalog (examples/demo-catalog, whose bundles
// otherwise live on quay.io), so that the commands that read a registry
// (versions, resolve, upgrade, init --catalog) can be tried offline:
// `go run ./hack/demoregistry` serves them on localhost:5000 with
// go-containerregistry's in-process registry. The images are built from the
// repository's files, deterministically (the same files give the same
// digests).
package demoregistry

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// The repositories the demo catalog names, under the registry's host
// instead of quay.io.
const (
	quayPrefix  = "quay.io/olm-cmp/"
	BundleRepo  = "olm-cmp/greeter-operator-bundle"
	CatalogRepo = "olm-cmp/greeter-catalog"
	CatalogTag  = "latest"
	// configsDir is where the catalog image holds the catalog.
	configsDir = "/configs"
)

// Versions are the demo catalog's bundles, each with the CSV it replaces
// (its channel entries say the same).
var Versions = []struct{ Version, Replaces string }{
	{"0.1.0", ""},
	{"0.1.1", "greeter-operator.v0.1.0"},
	{"0.2.0", "greeter-operator.v0.1.1"},
	{"0.3.0-rc.1", "greeter-operator.v0.2.0"},
}

// Populate pushes to the registry at host (plain HTTP: a local registry)
// every version of the demo bundle, built from root/examples/demo/bundle
// with its CSV's name, version and replaces set, as BundleRepo:v<version>,
// and the catalog root/examples/demo-catalog, its images moved to host, as
// CatalogRepo:CatalogTag. It returns the references it pushed, by tag.
func Populate(host, root string) ([]string, error) {
	var pushed []string
	for _, v := range Versions {
		img, err := bundleImage(filepath.Join(root, "examples", "demo", "bundle"), v.Version, v.Replaces)
		if err != nil {
			return nil, err
		}
		ref := fmt.Sprintf("%s/%s:v%s", host, BundleRepo, v.Version)
		if err := push(ref, img); err != nil {
			return nil, err
		}
		pushed = append(pushed, ref)
	}
	img, err := catalogImage(filepath.Join(root, "examples", "demo-catalog"), host)
	if err != nil {
		return nil, err
	}
	ref := fmt.Sprintf("%s/%s:%s", host, CatalogRepo, CatalogTag)
	if err := push(ref, img); err != nil {
		return nil, err
	}
	return append(pushed, ref), nil
}

func push(ref string, img v1.Image) error {
	tag, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		return err
	}
	if err := remote.Write(tag, img); err != nil {
		return fmt.Errorf("pushing %s: %w", ref, err)
	}
	return nil
}

// csvFile is the demo bundle's CSV, whose version fields are edited.
const csvFile = "manifests/greeter-operator.clusterserviceversion.yaml"

// bundleImage is the demo bundle as version v, replacing replaces ("" for
// none): its CSV's metadata.name, spec.version and spec.replaces edited.
func bundleImage(dir, v, replaces string) (v1.Image, error) {
	files, err := readTree(dir, "")
	if err != nil {
		return nil, err
	}
	csv, ok := files[csvFile]
	if !ok {
		return nil, fmt.Errorf("%s: no %s", dir, csvFile)
	}
	text := string(csv)
	for _, e := range [][2]string{
		{"  name: greeter-operator.v0.2.0\n", "  name: greeter-operator.v" + v + "\n"},
		{"  version: 0.2.0\n", "  version: " + v + "\n"},
		{"  replaces: greeter-operator.v0.1.0\n", ""},
	} {
		if !strings.Contains(text, e[0]) {
			return nil, fmt.Errorf("%s: the demo CSV no longer holds %q: update demoregistry", dir, strings.TrimSpace(e[0]))
		}
		text = strings.Replace(text, e[0], e[1], 1)
	}
	if replaces != "" {
		text = strings.Replace(text, "  version: "+v+"\n", "  version: "+v+"\n  replaces: "+replaces+"\n", 1)
	}
	files[csvFile] = []byte(text)
	return image(files, nil)
}

// catalogImage is the catalog in dir under configsDir, labelled as OLM's
// catalog images are, with its quay.io images moved to host.
func catalogImage(dir, host string) (v1.Image, error) {
	files, err := readTree(dir, strings.TrimPrefix(configsDir, "/")+"/")
	if err != nil {
		return nil, err
	}
	for p, data := range files {
		files[p] = bytes.ReplaceAll(data, []byte(`"`+quayPrefix), []byte(`"`+host+"/olm-cmp/"))
	}
	return image(files, map[string]string{bundle.ConfigsLabel: configsDir})
}

// readTree reads the regular files under dir, keyed by their slash path
// under prefix.
func readTree(dir, prefix string) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		files[prefix+filepath.ToSlash(rel)] = data
		return err
	})
	return files, err
}

// image is a one-layer image of files (with their directories), in name
// order and without times, so the same files make the same digest.
func image(files map[string][]byte, labels map[string]string) (v1.Image, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		for d := path.Dir(p); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var entries []string
	for d := range dirs {
		entries = append(entries, d+"/")
	}
	entries = append(entries, slices.Collect(maps.Keys(files))...)
	slices.Sort(entries)
	for _, e := range entries {
		h := &tar.Header{Name: e, Mode: 0o644, Typeflag: tar.TypeReg, Size: int64(len(files[e])), Format: tar.FormatPAX}
		if strings.HasSuffix(e, "/") {
			h.Mode, h.Typeflag, h.Size = 0o755, tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(files[e]); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil || len(labels) == 0 {
		return img, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg := *cf.Config.DeepCopy()
	cfg.Labels = labels
	return mutate.Config(img, cfg)
}
