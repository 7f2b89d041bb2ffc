// Package catalogtest writes synthetic file-based catalogs shaped like a
// vendor index, for benchmarks and hack/gencatalog: 40 bundles per package
// (a replaces chain with skipRanges in one channel), each with the
// properties opm renders (olm.package, olm.gvk, olm.bundle.mediatype) and an
// olm.csv.metadata holding a 4 KB description and an 8 KB base64 icon, which
// is what makes real catalogs large. Output is deterministic.
package catalogtest

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// Options shape a generated catalog.
type Options struct {
	// Bundles is the total number of bundles (rounded up to whole packages).
	Bundles int
	// PerPackage is the number of bundles per package; 0 means 40.
	PerPackage int
	// ImagePrefix starts every bundle image: PREFIX/<package>-bundle:v<version>;
	// empty means example.com/vendor.
	ImagePrefix string
	// SingleFile writes one catalog.json for every package (as a repository
	// might) instead of <package>/catalog.json per package (as opm does).
	SingleFile bool
}

// PackageName is the name of the i-th package (0-based) of a generated catalog.
func PackageName(i int) string { return fmt.Sprintf("operator-%05d", i) }

// Version is the version of the j-th bundle (0-based) of every package.
func Version(j int) string { return fmt.Sprintf("1.%d.0", j) }

// Generate writes the catalog into dir (created if needed) and returns the
// number of bytes written.
func Generate(dir string, o Options) (int64, error) {
	per := o.PerPackage
	if per <= 0 {
		per = 40
	}
	prefix := o.ImagePrefix
	if prefix == "" {
		prefix = "example.com/vendor"
	}
	pkgs := (o.Bundles + per - 1) / per
	rng := rand.New(rand.NewPCG(1, 2))
	var total int64
	var single *output
	if o.SingleFile {
		var err error
		if single, err = create(filepath.Join(dir, "catalog.json")); err != nil {
			return 0, err
		}
	}
	for i := range pkgs {
		out := single
		if out == nil {
			var err error
			if out, err = create(filepath.Join(dir, PackageName(i), "catalog.json")); err != nil {
				return 0, err
			}
		}
		writePackage(out, rng, PackageName(i), per, prefix)
		if single == nil {
			n, err := out.close()
			if err != nil {
				return 0, err
			}
			total += n
		}
	}
	if single != nil {
		n, err := single.close()
		if err != nil {
			return 0, err
		}
		total = n
	}
	return total, nil
}

type output struct {
	f   *os.File
	w   *bufio.Writer
	enc *json.Encoder
	n   int64
}

func create(name string) (*output, error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	return &output{f: f, w: w, enc: json.NewEncoder(w)}, nil
}

func (o *output) write(v any) {
	o.enc.Encode(v) // errors surface at close, from the bufio.Writer
}

func (o *output) close() (int64, error) {
	if err := o.w.Flush(); err != nil {
		o.f.Close()
		return 0, err
	}
	fi, err := o.f.Stat()
	if err != nil {
		o.f.Close()
		return 0, err
	}
	return fi.Size(), o.f.Close()
}

type property struct {
	Type  string `json:"type"`
	Value any    `json:"value"`
}

func writePackage(out *output, rng *rand.Rand, pkg string, per int, prefix string) {
	out.write(map[string]any{
		"schema": "olm.package", "name": pkg, "defaultChannel": "stable",
		"description": "The " + pkg + " operator.",
	})
	entries := make([]map[string]any, per)
	for j := range per {
		e := map[string]any{"name": bundleName(pkg, j)}
		if j > 0 {
			e["replaces"] = bundleName(pkg, j-1)
			e["skipRange"] = fmt.Sprintf(">=1.0.0 <%s", Version(j))
		}
		entries[j] = e
	}
	out.write(map[string]any{"schema": "olm.channel", "name": "stable", "package": pkg, "entries": entries})
	desc := strings.Repeat("This operator manages the lifecycle of its application on Kubernetes. ", 60)[:4096]
	icon := make([]byte, 6144) // 8 KB once base64-encoded
	for j := range per {
		for k := range icon {
			icon[k] = byte(rng.Uint32())
		}
		v := Version(j)
		group := pkg + ".example.com"
		out.write(map[string]any{
			"schema":  "olm.bundle",
			"name":    bundleName(pkg, j),
			"package": pkg,
			"image":   fmt.Sprintf("%s/%s-bundle:v%s", prefix, pkg, v),
			"properties": []property{
				{"olm.gvk", map[string]string{"group": group, "kind": "Widget", "version": "v1"}},
				{"olm.gvk", map[string]string{"group": group, "kind": "Gadget", "version": "v1alpha1"}},
				{"olm.package", map[string]string{"packageName": pkg, "version": v}},
				{"olm.bundle.mediatype", "registry+v1"},
				{"olm.csv.metadata", map[string]any{
					"annotations": map[string]string{
						"capabilities":   "Seamless Upgrades",
						"categories":     "Developer Tools",
						"containerImage": fmt.Sprintf("%s/%s:v%s", prefix, pkg, v),
						"createdAt":      "2026-01-01T00:00:00Z",
						"description":    "Manages " + pkg,
						"repository":     "https://example.com/" + pkg,
					},
					"apiServiceDefinitions": map[string]any{},
					"crdDescriptions": map[string]any{"owned": []map[string]string{
						{"name": "widgets." + group, "kind": "Widget", "version": "v1", "displayName": "Widget"},
						{"name": "gadgets." + group, "kind": "Gadget", "version": "v1alpha1", "displayName": "Gadget"},
					}},
					"description": desc,
					"displayName": pkg,
					"icon":        []map[string]string{{"base64data": base64.StdEncoding.EncodeToString(icon), "mediatype": "image/png"}},
					"installModes": []map[string]any{
						{"type": "OwnNamespace", "supported": true}, {"type": "SingleNamespace", "supported": true},
						{"type": "MultiNamespace", "supported": false}, {"type": "AllNamespaces", "supported": true},
					},
					"keywords":    []string{"synthetic", "benchmark"},
					"links":       []map[string]string{{"name": "Documentation", "url": "https://example.com/" + pkg + "/docs"}},
					"maintainers": []map[string]string{{"name": "Vendor", "email": "support@example.com"}},
					"maturity":    "stable",
					"provider":    map[string]string{"name": "Vendor"},
				}},
			},
			"relatedImages": []map[string]string{
				{"name": "", "image": fmt.Sprintf("%s/%s-bundle:v%s", prefix, pkg, v)},
				{"name": "operator", "image": fmt.Sprintf("%s/%s:v%s", prefix, pkg, v)},
			},
		})
	}
}

func bundleName(pkg string, j int) string { return pkg + ".v" + Version(j) }
