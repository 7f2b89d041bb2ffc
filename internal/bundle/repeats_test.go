package bundle

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/yamlsafe"
)

// A key written twice with the same value, in manifests/ (YAML and JSON)
// and metadata/: the bundle loads with the repeat gone and one warning per
// file, naming its line, as OLM v1 installs such a bundle (testdata's
// README says where the quirk comes from).
func TestLoadDropsKeysRepeatedWithTheirValue(t *testing.T) {
	b, err := LoadDir("testdata/repeated-keys")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"metadata/annotations.yaml: line 5: annotations.operators.operatorframework.io.bundle.channels.v1 is set twice to the same value (first on line 4): rendered once, as OLM v1 installs it (the values are equal: the object is the same either way)",
		"manifests/repeat-config.json: line 4: data.mode is set twice to the same value (first on line 3): rendered once, as OLM v1 installs it (the values are equal: the object is the same either way)",
		"manifests/repeat-operator.clusterserviceversion.yaml: line 13: spec.install is set twice to the same value (first on line 9): rendered once, as OLM v1 installs it (the values are equal: the object is the same either way)",
		"manifests/repeat-role-binding.yaml: line 12: apiVersion is set twice to the same value (first on line 1): rendered once, as OLM v1 installs it (the values are equal: the object is the same either way)",
	}
	if !slices.Equal(b.Warnings, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(b.Warnings, "\n"), strings.Join(want, "\n"))
	}
	if b.Annotations[ChannelsAnnotation] != "alpha" {
		t.Errorf("channels: %q", b.Annotations[ChannelsAnnotation])
	}
	for _, o := range b.Others {
		s := mustString(t, o)
		if strings.Count(s, "apiVersion:") != 1 || strings.Count(s, "mode:") > 1 {
			t.Errorf("%s still repeats a key:\n%s", o.File, s)
		}
	}
}

func TestLoadRefusesKeysRepeatedWithAnotherValue(t *testing.T) {
	good, err := readFiles(os.DirFS("testdata/repeated-keys"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, file, body, want string
		fileError              bool
	}{
		{
			name: "manifests/", file: "manifests/repeat-role-binding.yaml",
			body:      "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: x}\nroleRef: {kind: Role, name: r, apiGroup: rbac.authorization.k8s.io}\napiVersion: rbac.authorization.k8s.io/v1beta1\n",
			want:      `manifests/repeat-role-binding.yaml: line 5: apiVersion is set twice with different values ("rbac.authorization.k8s.io/v1" on line 1, "rbac.authorization.k8s.io/v1beta1" on line 5): OLM v1 would install the last one without a word, and which one the vendor meant cannot be told`,
			fileError: true,
		},
		{
			// kind is read before anything else: the repeat is judged first.
			name: "a List's kind", file: "manifests/repeat-role-binding.yaml",
			body:      "apiVersion: v1\nkind: List\nitems: []\nkind: ConfigMap\nmetadata: {name: x}\n",
			want:      `manifests/repeat-role-binding.yaml: line 4: kind is set twice with different values ("List" on line 2, "ConfigMap" on line 4)`,
			fileError: true,
		},
		{
			name: "JSON", file: "manifests/repeat-config.json",
			body:      "\n\n{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\",\n \"metadata\": {\"name\": \"a\", \"name\": \"b\"}}\n",
			want:      `manifests/repeat-config.json: line 4: metadata.name is set twice with different values ("a" on line 4, "b" on line 4)`,
			fileError: true,
		},
		{
			name: "metadata/", file: "metadata/annotations.yaml",
			body: "annotations:\n  operators.operatorframework.io.bundle.package.v1: repeat-operator\n  operators.operatorframework.io.bundle.package.v1: other-operator\n",
			want: `metadata/annotations.yaml: line 3: annotations.operators.operatorframework.io.bundle.package.v1 is set twice with different values ("repeat-operator" on line 2, "other-operator" on line 3): OLM v1 would install the last one without a word, and which one the vendor meant cannot be told: use another bundle version, or ask its vendor to fix the file`,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, data := range good.all {
				fsys[name] = &fstest.MapFile{Data: data}
			}
			fsys[c.file] = &fstest.MapFile{Data: []byte(c.body)}
			_, err := LoadFS(fsys, Origin{})
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("got  %v\nwant %s", err, c.want)
			}
			var fe *FileError
			if errors.As(err, &fe) != c.fileError {
				t.Errorf("a FileError (skippable with spec.excludeFiles): %v, want %v", !c.fileError, c.fileError)
			}
			var ce *yamlsafe.ConflictError
			if !errors.As(err, &ce) {
				t.Errorf("not a ConflictError: %T", err)
			}
		})
	}
}

// From an image, and again from the loader's caches, the bundle loads as
// from its directory, warnings included: the parse cache keeps the files as
// written, each load drops the repeats of its own copy.
func TestImageLoadDropsRepeatedKeys(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	bundletest.PushDir(t, host, "operators/repeat", "v1", "testdata/repeated-keys")
	l := newLoader(t, host)
	l.Parsed = NewParseCache(1 << 20)
	ctx := context.Background()
	o, err := l.Resolve(ctx, host+"/operators/repeat:v1")
	if err != nil {
		t.Fatal(err)
	}
	want, err := LoadDir("testdata/repeated-keys")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		got, err := l.Load(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		sameBundle(t, got, want)
		if !slices.Equal(got.Warnings, want.Warnings) || len(got.Warnings) != 4 {
			t.Errorf("load %d: warnings %q, want %q", i+1, got.Warnings, want.Warnings)
		}
	}
}

// BenchmarkDropRepeatedKeysSail is the walk every load makes over every
// file: sail-operator's 3 MB of CRDs, which repeat nothing.
func BenchmarkDropRepeatedKeysSail(b *testing.B) {
	dir := filepath.Join(sharedDir(b), "bundles", "sailoperator-1.30.3")
	files, err := readFiles(os.DirFS(dir))
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range files.manifests {
		if f.docs, err = ParseDocuments(f.data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range files.manifests {
			if w, err := dropRepeatedKeys(f.name, f.docs); err != nil || w != "" {
				b.Fatal(w, err)
			}
		}
	}
}

// The two optional files of metadata/: properties.yaml is read as
// annotations.yaml is; dependencies.yaml, which OLM v1 never reads to
// render, is then unreadable (the requirements report says so), not fatal.
func TestRepeatedKeysInPropertiesAndDependencies(t *testing.T) {
	good, err := readFiles(os.DirFS("testdata/repeated-keys"))
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	for name, data := range good.all {
		fsys[name] = &fstest.MapFile{Data: data}
	}
	fsys[PropertiesFile] = &fstest.MapFile{Data: []byte("properties:\n- type: olm.maxOpenShiftVersion\n  value: \"4.16\"\n  value: \"4.16\"\n")}
	fsys[DependenciesFile] = &fstest.MapFile{Data: []byte("dependencies:\n- type: olm.package\n  value: {packageName: a, version: '>=1.0.0'}\n  type: olm.gvk\n")}
	b, err := LoadFS(fsys, Origin{})
	if err != nil {
		t.Fatal(err)
	}
	want := "metadata/properties.yaml: line 4: properties[0].value is set twice to the same value (first on line 3)"
	if !slices.ContainsFunc(b.Warnings, func(w string) bool { return strings.HasPrefix(w, want) }) {
		t.Errorf("warnings %q lack %q", b.Warnings, want)
	}
	if len(b.Properties) != 1 || string(b.Properties[0].Value) != `"4.16"` {
		t.Errorf("properties: %s", jsonOf(t, b.Properties))
	}
	wantDeps := `line 4: dependencies[0].type is set twice with different values ("olm.package" on line 2, "olm.gvk" on line 4)`
	if !strings.HasPrefix(b.DependenciesUnreadable, wantDeps) || b.Dependencies != nil {
		t.Errorf("dependencies unreadable: %q, want %q…", b.DependenciesUnreadable, wantDeps)
	}
}
