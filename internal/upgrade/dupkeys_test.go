package upgrade

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDuplicateKeyRefused: an Application whose source: key appears twice
// (the first block passing the version, the second, the one Kubernetes'
// readers keep, another), and an ApplicationSet element with version:
// twice. upgrade --write edited the shadowed block; now the directory is
// refused in one line naming the file, the line and the key, and nothing is
// written.
func TestDuplicateKeyRefused(t *testing.T) {
	for _, c := range []struct {
		name, file, manifest, want string
	}{
		{"application source twice", "app.yaml",
			"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: m}\nspec:\n  source:\n    path: g\n    plugin:\n      parameters:\n      - name: version\n        string: v0.1.0\n  source:\n    path: g\n    plugin:\n      parameters:\n      - name: version\n        string: v0.2.0\n",
			`Application m (app.yaml:1) may render g, but its key "spec.source" appears twice (lines 5 and 11): Kubernetes refuses such a manifest and other readers keep the last one, so upgrade cannot tell which one Argo CD reads: remove one of them`},
		{"applicationset element key twice", "set.yaml",
			"apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: s}\nspec:\n  generators:\n  - list:\n      elements:\n      - name: g\n        version: v0.1.0\n        version: v0.2.0\n  template:\n    spec:\n      source:\n        path: '{{.name}}'\n        plugin:\n          parameters:\n          - name: version\n            string: '{{.version}}'\n",
			`ApplicationSet s (set.yaml:1) may render g, but its key "spec.generators[0].list.elements[0].version" appears twice (lines 9 and 10): Kubernetes refuses such a manifest and other readers keep the last one, so upgrade cannot tell which one Argo CD reads: remove one of them`},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"})
			spec := hostileSpec(e.repo())
			e.file(t, "g/olm-cmp.yaml", spec)
			e.file(t, c.file, c.manifest)
			r := one(t, e.run(t, OLMv1, true, "g"))
			if r.Status != Failed || r.Reason != c.want {
				t.Errorf("got %+v\nwant %s", r, c.want)
			}
			if e.read(t, c.file) != c.manifest || e.read(t, "g/olm-cmp.yaml") != spec {
				t.Error("a file was written")
			}
		})
	}
	// A duplicate key in an Application of another directory, or of
	// another repository, says nothing about this one.
	e := newEnv(t, []string{"0.1.0", "x"}, []string{"0.2.0", "greeter-operator.v0.1.0"})
	e.file(t, "g/olm-cmp.yaml", hostileSpec(e.repo())+"  version: v0.1.0\n")
	e.file(t, "other.yaml", "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: o}\nspec:\n  source: {path: other}\n  source: {path: other2}\n")
	e.file(t, ".git/config", "[remote \"origin\"]\n\turl = https://github.com/org/gitops\n")
	e.file(t, "theirs.yaml", "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: t}\nspec:\n  source: {repoURL: 'https://github.com/org/else', path: g}\n  source: {repoURL: 'https://github.com/org/else', path: g}\n")
	if r := one(t, e.run(t, OLMv1, false, "g")); r.Status == Failed || strings.Contains(r.Reason, "twice") {
		t.Errorf("another directory's manifest: %+v", r)
	}
}

// TestDuplicateKeyKeptAfterAWrite: upgrade rebuilds its index after each
// file it writes; an Application with a key twice is still refused for
// its directory afterwards (it was dropped, and the next directory read
// the shadowed block).
func TestDuplicateKeyKeptAfterAWrite(t *testing.T) {
	root := t.TempDir()
	dup := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: m}\nspec:\n  source: {path: g}\n  source: {path: g}\n"
	if err := os.WriteFile(filepath.Join(root, "app.yaml"), []byte(dup), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := Scan(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	before := ix.dups
	ix.replace("other.yaml", []byte("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: o}\nspec:\n  source: {path: h}\n"))
	if len(before) != 1 || len(ix.dups) != 1 || ix.dups[0].file != before[0].file {
		t.Fatalf("duplicate-key Applications before a write %d, after %d", len(before), len(ix.dups))
	}
}
