package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
)

// TestMessagesEchoCatalogValuesBounded: a catalog is untrusted input from a
// repository or an image, and its errors travel to Argo CD's status, CI
// logs and terminals. Every value of the catalog a message repeats (names,
// file names, lists) is escaped and capped, and the message is one line.
func TestMessagesEchoCatalogValuesBounded(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	pkg := map[string]any{"schema": "olm.package", "name": "p"}
	bundle := func(name, version, image string, extra ...map[string]any) map[string]any {
		props := []any{map[string]any{"type": "olm.package", "value": map[string]any{"packageName": "p", "version": version}}}
		for _, e := range extra {
			props = append(props, e)
		}
		return map[string]any{"schema": "olm.bundle", "name": name, "package": "p", "image": image, "properties": props}
	}
	channel := func(name string, entries ...string) map[string]any {
		var es []any
		for _, e := range entries {
			es = append(es, map[string]any{"name": e})
		}
		return map[string]any{"schema": "olm.channel", "name": name, "package": "p", "entries": es}
	}
	stream := func(objs ...map[string]any) string {
		var b strings.Builder
		for _, o := range objs {
			data, err := json.Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(data)
			b.WriteByte('\n')
		}
		return b.String()
	}
	many := []map[string]any{pkg}
	for range 3000 {
		many = append(many, pkg)
	}
	channels := []map[string]any{pkg, bundle("b", "1.0.0", "img")}
	for i := range 3000 {
		channels = append(channels, channel(strings.Repeat("c", 40)+string(rune('a'+i%26))+strings.Repeat("y", i)))
	}
	for _, c := range []struct {
		name, file, data, channel, want string
	}{
		{"channel declared twice", "c.json", stream(pkg, channel(big), channel(big)), "", "declares channel"},
		{"two bundles alike", "c.json", stream(pkg, bundle(big, "1.0.0", "a"), bundle(big, "2.0.0", "b")), "", "two bundles named"},
		{"channel lists a missing bundle", "c.json", stream(pkg, channel("stable", big)), "", "which the package does not have"},
		{"dependency", "c.json", stream(pkg, bundle(big, "1.0.0", "a", map[string]any{"type": "olm.package.required", "value": map[string]any{}})), "", "declares a dependency"},
		{"no image", "c.json", stream(pkg, bundle(big, "1.0.0", "")), "", "has no image"},
		{"declared many times", "c.json", stream(many...), "", "is declared 3001 times"},
		{"no such channel among many", "c.json", stream(channels...), "nope", `has no channel "nope"`},
		{"version not semver", "c.json", stream(pkg, bundle(big, "1.0.0-"+strings.Repeat("!", 60000), "a")), "", "olm.package version"},
		{"escape sequence in a file name", "c\x1b[2J.json", stream(pkg, channel("stable"), channel("stable")), "", `c\x1b[2J.json`},
		{"YAML field of the wrong type", "c.yaml", "schema: olm.bundle\nname: b\npackage: p\nproperties: [1]\n", "", "c.yaml"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Choose(context.Background(), fstest.MapFS{c.file: {Data: []byte(c.data)}}, Query{Package: "p", Channel: c.channel})
			if err == nil {
				t.Fatal("chose from a broken catalog")
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) {
				t.Errorf("%.300s lacks %q", msg, c.want)
			}
			if len(msg) > 2048 {
				t.Errorf("message of %d bytes: %.300s…", len(msg), msg)
			}
			if strings.ContainsAny(msg, "\n\x1b") {
				t.Errorf("message holds a line break or an escape character: %.300q", msg)
			}
		})
	}
}

// olm-cmp's own message about a YAML catalog file is kept whole: only the
// catalog's values are cut.
func TestYAMLErrorOfACatalogFileKeptWhole(t *testing.T) {
	bomb := "schema: olm.package\nname: p\nx:\n  l0: &l0 [x, y, z]\n"
	for i := 1; i <= 16; i++ {
		bomb += fmt.Sprintf("  l%d: &l%d [*l%d, *l%d]\n", i, i, i-1, i-1)
	}
	_, _, err := Choose(context.Background(), fstest.MapFS{"c.yaml": {Data: []byte(bomb)}}, Query{Package: "p"})
	if err == nil || !strings.HasSuffix(err.Error(), "write the repeated parts out, or share less") {
		t.Fatalf("got %v, want yamlsafe's alias-bomb message whole", err)
	}
}

// What a package keeps of its objects (names, images, entries) is bounded
// in bytes, not only in items: eight bundles with 30 MB image references
// made a 240 MB catalog cost 373 MB to choose from.
func TestPackageKeptBytesBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"schema":"olm.package","name":"p"}` + "\n")
	img := strings.Repeat("a", 8<<20)
	for i := range 9 {
		fmt.Fprintf(&b, `{"schema":"olm.bundle","name":"b%d","package":"p","image":"%s","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.%d.0"}}]}`+"\n", i, img, i)
	}
	_, _, err := Choose(context.Background(), fstest.MapFS{"c.json": {Data: []byte(b.String())}}, Query{Package: "p"})
	if err == nil || !strings.Contains(err.Error(), `package "p" keeps over 64 MiB of names, images and channel entries`) {
		t.Fatalf("got %.300v", err)
	}
}
