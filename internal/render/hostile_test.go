package render

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	kustomizetypes "sigs.k8s.io/kustomize/api/types"

	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// billionLaughs is the classic alias bomb, 602 bytes: nine levels of nine
// aliases each, a billion nodes once expanded.
const billionLaughs = `apiVersion: v1
kind: ConfigMap
metadata: {name: lol}
data:
  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
  f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
  g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
  h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
  i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
`

// TestHostileYAMLIsBounded: YAML that would loop forever (an alias cycle: a
// fatal stack overflow, which no recover catches, for every Application on
// the server), expand to gigabytes, or parse into millions of nodes fails
// the render with one line naming the file or field and the limit.
func TestHostileYAMLIsBounded(t *testing.T) {
	million := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\nbinaryData:\n  x:\n" + strings.Repeat("  - 1\n", 600000)
	deep := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\ndata: " + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "\n"
	for _, c := range []struct {
		name, file, body string
		patch            string
		want             []string
	}{
		{name: "alias cycle", file: "cycle.yaml", body: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: &a [*a]}\n", want: []string{"extra manifest cycle.yaml", "refers to a node that contains it"}},
		{name: "billion laughs", file: "lol.yaml", body: billionLaughs, want: []string{"extra manifest lol.yaml", "aliases expand to more than"}},
		{name: "million scalars", file: "million.yaml", body: million, want: []string{"extra manifest million.yaml", "YAML items"}},
		{name: "deep nesting", file: "deep.yaml", body: deep, want: []string{"extra manifest deep.yaml"}},
		{name: "patch alias cycle", patch: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: greeter-operator\n  labels: &l {x: *l}\n", want: []string{"patches[0]", "refers to a node that contains it"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			copyTree(t, demoDir, dir)
			if c.file != "" {
				if err := os.WriteFile(filepath.Join(dir, c.file), []byte(c.body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			req := demoRequest(t)
			req.SourceDir = dir
			if c.patch != "" {
				req.Spec.Patches = []kustomizetypes.Patch{{Patch: c.patch}}
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			res, err := (&Renderer{}).Render(context.Background(), req)
			runtime.ReadMemStats(&after)
			if err == nil || res != nil {
				t.Fatalf("rendered: %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 200<<20 {
				t.Errorf("allocated %d MiB refusing it", grew>>20)
			}
		})
	}
}

// TestNoExistenceOracle: in the plugin (RootDir set), a bundle or catalog
// directory outside the repository gets the same answer whether it exists
// on the server or not, decided before anything outside is looked at; a
// missing directory inside the repository is "not found".
func TestNoExistenceOracle(t *testing.T) {
	repo := t.TempDir()
	app := filepath.Join(repo, "apps", "op")
	copyTree(t, demoDir, app)
	outsideDir := t.TempDir() // exists, outside the repository
	os.Symlink(outsideDir, filepath.Join(app, "link-exists"))
	os.Symlink(filepath.Join(outsideDir, "missing"), filepath.Join(app, "link-missing"))
	os.Symlink("../../../../../../../../../../nonexistent", filepath.Join(app, "rel-link-missing"))
	up := strings.Repeat("../", 12)
	for _, field := range []string{"bundle", "catalog"} {
		outside := []string{up + "etc", up + "nonexistent-dir", up + outsideDir[1:], outsideDir, "/nonexistent", "./link-exists", "./link-missing", "./rel-link-missing", "./bundle/../../../.."}
		for _, p := range outside {
			t.Run(field+" "+p, func(t *testing.T) {
				req := demoRequest(t)
				req.SourceDir, req.RootDir = app, repo
				if field == "catalog" {
					req.Spec.Bundle, req.Spec.Catalog, req.Spec.Package = "", p, "greeter-operator"
				} else {
					req.Spec.Bundle = p
				}
				_, err := (&Renderer{}).Render(context.Background(), req)
				want := fmt.Sprintf("spec.%s %q: the %s directory must be inside the repository", field, p, field)
				if err == nil || err.Error() != want {
					t.Errorf("got %v\nwant %s", err, want)
				}
			})
		}
		t.Run(field+" missing inside", func(t *testing.T) {
			req := demoRequest(t)
			req.SourceDir, req.RootDir = app, repo
			p := "./no-such-dir"
			if field == "catalog" {
				req.Spec.Bundle, req.Spec.Catalog, req.Spec.Package = "", p, "greeter-operator"
			} else {
				req.Spec.Bundle = p
			}
			_, err := (&Renderer{}).Render(context.Background(), req)
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("spec.%s %q: %s directory not found", field, p, field)) {
				t.Errorf("got %v", err)
			}
		})
	}
}

// TestPatchPathNoOracle: a patch path that is a symbolic link leaving the
// source directory gets one answer whether its target exists or not, and
// a missing file inside says so, without Go's syscall names.
func TestPatchPathNoOracle(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, demoDir, dir)
	os.Symlink("/etc/hostname", filepath.Join(dir, "exists.yaml"))
	os.Symlink("/nonexistent/x.yaml", filepath.Join(dir, "missing.yaml"))
	for p, want := range map[string]string{
		"exists.yaml":  `patches[0]: path "exists.yaml": must be relative and inside the directory of olm-cmp.yaml (it is a symbolic link that leaves it)`,
		"missing.yaml": `patches[0]: path "missing.yaml": must be relative and inside the directory of olm-cmp.yaml (it is a symbolic link that leaves it)`,
		"nothere.yaml": `patches[0]: path "nothere.yaml": no such file in the directory of olm-cmp.yaml; files there: greeter-extra.yaml`,
	} {
		req := demoRequest(t)
		req.SourceDir = dir
		req.Spec.Patches = []kustomizetypes.Patch{{Path: p}}
		// Not extra manifests (which are refused as links), only patches.
		req.Spec.ExtraManifests = &spec.ExtraManifests{Exclude: []string{"exists.yaml", "missing.yaml"}}
		_, err := (&Renderer{}).Render(context.Background(), req)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v\nwant %s", p, err, want)
		}
	}
}
