package catalog

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
)

// TestReadLimits: the item limits hold for JSON catalogs as for YAML ones,
// each failing with one line naming the file and the limit.
func TestReadLimits(t *testing.T) {
	var many bytes.Buffer
	for range maxObjectsPerFile + 1 {
		many.WriteString("{}\n")
	}
	var entries bytes.Buffer
	entries.WriteString(`{"schema": "olm.package", "name": "p"}` + "\n" + `{"schema": "olm.channel", "name": "c", "package": "p", "entries": [`)
	for i := range maxPackageItems + 1 {
		if i > 0 {
			entries.WriteByte(',')
		}
		entries.WriteString(`{"name": "b"}`)
	}
	entries.WriteString("]}\n")
	huge := `{"schema": "olm.bundle", "name": "x", "package": "p", "properties": [{"type": "olm.csv.metadata", "value": "` + strings.Repeat("a", maxObjectBytes) + `"}]}`
	hugeYAML := "schema: olm.bundle\nname: x\npackage: p\nvalue: " + strings.Repeat("a", maxObjectBytes) + "\n"
	for _, tc := range []struct {
		name, file, data string
		want             string
	}{
		{"objects per JSON file", "c.json", many.String(), fmt.Sprintf("catalog file c.json: more than %d objects", maxObjectsPerFile)},
		{"items per package", "c.json", entries.String(), fmt.Sprintf(`catalog file c.json: document 2: package "p" has over %d bundles, properties and channel entries`, maxPackageItems)},
		{"bytes per JSON object", "c.json", huge, "catalog file c.json: document 1 is over 32 MiB"},
		{"bytes per YAML document", "c.yaml", hugeYAML, "catalog file c.yaml: document 1 is over 32 MiB"},
		{"YAML alias bomb", "c.yaml", "schema: olm.package\nname: p\na: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n", "catalog file c.yaml: document 1: aliases expand to more than"},
		{"JSON broken mid-stream", "c.json", `{"schema": "olm.package", "name": "p"}` + "\n{\"schema\": \"olm.bundle\",,}\n", "catalog file c.json: document 2: not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{tc.file: {Data: []byte(tc.data)}}
			_, _, err := Choose(context.Background(), fsys, Query{Package: "p"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			if err != nil && strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

// TestReadFormats: JSON streams, JSON in a .yaml file, YAML flow mappings
// in a .json file, multi-document YAML with comments and a byte order mark
// all read alike; fields other than those choosing reads, however large,
// are skipped.
func TestReadFormats(t *testing.T) {
	bundle := func(v string) string {
		return `{"schema": "olm.bundle", "name": "p.v` + v + `", "package": "p", "image": "x/p:` + v + `", "properties": [{"type": "olm.csv.metadata", "value": {"icon": "` + strings.Repeat("A", 100000) + `"}}, {"type": "olm.package", "value": {"packageName": "p", "version": "` + v + `"}}]}`
	}
	for name, fsys := range map[string]fstest.MapFS{
		"JSON stream":                {"c.json": {Data: []byte(`{"schema": "olm.package", "name": "p"}` + bundle("1.0.0") + "\n" + bundle("1.1.0"))}},
		"JSON in .yaml with a BOM":   {"c.yaml": {Data: []byte("\ufeff  " + `{"schema": "olm.package", "name": "p"}` + "\n" + bundle("1.0.0") + bundle("1.1.0"))}},
		"YAML flow mapping in .json": {"c.json": {Data: []byte("{schema: olm.package, name: p}\n---\n" + bundle("1.1.0") + "\n---\n" + bundle("1.0.0") + "\n")}},
		"YAML documents":             {"c.yml": {Data: []byte("# a catalog\n---\nschema: olm.package\nname: p\n--- " + bundle("1.0.0") + "\n---\n\n---\n# comment\nschema: olm.bundle\nname: p.v1.1.0\npackage: p\nimage: x/p:1.1.0\nproperties:\n- type: olm.package\n  value:\n    packageName: p\n    version: 1.1.0\n  # ---\n")}},
	} {
		image, version, err := Choose(context.Background(), fsys, Query{Package: "p"})
		if err != nil || image != "x/p:1.1.0" || version != "1.1.0" {
			t.Errorf("%s: %s %s %v", name, image, version, err)
		}
	}
}

// TestReadCancelled: a pass stops when its context ends.
func TestReadCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fsys := fstest.MapFS{"c.json": {Data: []byte(`{"schema": "olm.package", "name": "p"}`)}}
	if err := readAll(ctx, fsys, "", func(*object) error { return nil }); err != context.Canceled {
		t.Errorf("readAll = %v, want context.Canceled", err)
	}
}

// TestReadIndentedYAML: a YAML catalog whose first line is indented (a
// document with leading white space) keeps its indentation.
func TestReadIndentedYAML(t *testing.T) {
	fsys := fstest.MapFS{"c.yaml": {Data: []byte("\n  schema: olm.package\n  name: p\n---\n  schema: olm.bundle\n  name: p.v1\n  package: p\n  image: x/p:1\n  properties:\n  - type: olm.package\n    value: {packageName: p, version: 1.0.0}\n")}}
	if image, _, err := Choose(context.Background(), fsys, Query{Package: "p"}); err != nil || image != "x/p:1" {
		t.Errorf("%s %v", image, err)
	}
}

// TestReadNotRegular: a FIFO in a catalog directory is refused by name, not
// opened (which would block).
func TestReadNotRegular(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.json"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	_, _, err := Choose(context.Background(), os.DirFS(dir), Query{Package: "p"})
	if err == nil || !strings.Contains(err.Error(), "catalog file pipe.json is not a regular file") {
		t.Errorf("got %v", err)
	}
}

// TestReadZipFS: a catalog image read without a cache is an in-memory zip
// archive (bundle's memoryFS); its files read like a directory's.
func TestReadZipFS(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"widget.yaml", "sub/gadget.json"} {
		data, err := os.ReadFile(filepath.Join(testCatalog, name))
		if err != nil {
			t.Fatal(err)
		}
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		w.Write(data)
	}
	zw.Close()
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	for pkg, want := range map[string]string{"widget": "example.com/widget-bundle:v2.0.0-rc.1", "gadget": "example.com/gadget:2"} {
		if image, _, err := Choose(context.Background(), zr, Query{Package: pkg, Range: map[string]string{"widget": "", "gadget": ">=1.0.0"}[pkg]}); err != nil || image != want {
			t.Errorf("%s: %s %v, want %s", pkg, image, err, want)
		}
	}
}

// TestPackagePropertyTypeError: an olm.package property whose version is a
// JSON number is named by field and types, in the author's terms, not by
// encoding/json's Go struct names.
func TestPackagePropertyTypeError(t *testing.T) {
	fsys := fstest.MapFS{"c.json": {Data: []byte(`{"schema": "olm.package", "name": "p", "defaultChannel": "s"}
{"schema": "olm.channel", "name": "s", "package": "p", "entries": [{"name": "p.v1"}]}
{"schema": "olm.bundle", "name": "p.v1", "package": "p", "image": "r/p:v1", "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": 1}}]}
`)}}
	_, _, err := Choose(context.Background(), fsys, Query{Package: "p"})
	if err == nil {
		t.Fatal("a numeric version was accepted")
	}
	if msg := err.Error(); !strings.Contains(msg, "field version: expected string, got a JSON number") || strings.Contains(msg, "Go struct") {
		t.Errorf("message: %s", msg)
	}
}
