package bundle

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

const ownedCRD = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: gadgets.example.com}\nspec: {group: example.com}\n"

// csvOwning is testCSV owning the gadgets CRD.
var csvOwning = testCSV + "  customresourcedefinitions:\n    owned:\n    - {name: gadgets.example.com, kind: Gadget, version: v1}\n"

func TestBrokenFileIsAFileError(t *testing.T) {
	for name, tc := range map[string]struct {
		files map[string]string
		file  string
		want  string
	}{
		// cluster-aas-operator 0.1.5 ships an object without apiVersion.
		"no apiVersion": {map[string]string{"manifests/x.yaml": "kind: ConfigMap\nmetadata: {name: x}\n"},
			"manifests/x.yaml", "manifests/x.yaml: document 1: object has no apiVersion"},
		"does not parse": {map[string]string{"manifests/x.yaml": "a: [unclosed\n"},
			"manifests/x.yaml", "manifests/x.yaml: document 1: yaml: line 1:"},
		// Two broken files: the first by name, whichever parser finishes first.
		"two broken files": {map[string]string{"manifests/b.yaml": "a: [unclosed\n", "manifests/a.yaml": "b: {unclosed\n"},
			"manifests/a.yaml", "manifests/a.yaml: document 1:"},
		"unowned v1beta1 CRD": {map[string]string{"manifests/old.yaml": strings.Replace(ownedCRD, "gadgets", "olds", 1)},
			"manifests/old.yaml", `manifests/old.yaml: document 1: CustomResourceDefinition "olds.example.com" is apiextensions.k8s.io/v1beta1, which no Kubernetes serves since 1.22 (OLM v1 would install it without its schema, which current clusters refuse); the ClusterServiceVersion does not own it`},
	} {
		t.Run(name, func(t *testing.T) {
			files := tc.files
			for f, d := range files {
				if strings.Contains(d, "olds.example.com") {
					files[f] = strings.Replace(d, "/v1\n", "/v1beta1\n", 1)
				}
			}
			_, err := LoadFS(fsWith(files), Origin{})
			var fe *FileError
			if !errors.As(err, &fe) || fe.File != tc.file {
				t.Fatalf("got %v, want a FileError naming %s", err, tc.file)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %q\nwant it to start %q", err, tc.want)
			}
			// The way past it: skip the file, which is then never parsed.
			var skip []string
			for f := range files {
				skip = append(skip, f)
			}
			b, err := LoadFS(fsWith(files), Origin{SkipFiles: skip})
			if err != nil {
				t.Fatalf("skipping %v: %v", skip, err)
			}
			slices.Sort(skip)
			if !slices.Equal(b.SkippedFiles, skip) {
				t.Errorf("skipped %v, want %v", b.SkippedFiles, skip)
			}
			if !slices.Contains(b.Files, tc.file) || !slices.Contains(b.Files, "manifests/tiny.clusterserviceversion.yaml") {
				t.Errorf("files %v", b.Files)
			}
			if len(b.Others)+len(b.CRDs) != 0 {
				t.Errorf("objects of skipped files were kept: %d", len(b.Others)+len(b.CRDs))
			}
		})
	}
}

func TestSkipKeepsTheRest(t *testing.T) {
	b, err := LoadFS(fsWith(map[string]string{
		"manifests/broken.yaml": "kind: ConfigMap\n",
		"manifests/cm.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kept}\n",
	}), Origin{SkipFiles: []string{"manifests/broken.yaml", "manifests/not-there.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Others) != 1 || b.Others[0].GetName() != "kept" || b.Others[0].File != "manifests/cm.yaml" {
		t.Fatalf("others: %v", b.Others)
	}
	// A name that is not in the bundle is not reported as skipped: render
	// warns about it (see render's excludeFiles check).
	if !slices.Equal(b.SkippedFiles, []string{"manifests/broken.yaml"}) {
		t.Errorf("skipped %v", b.SkippedFiles)
	}
}

func TestSkipRefusesWhatTheOperatorNeeds(t *testing.T) {
	for name, tc := range map[string]struct {
		files map[string]string
		skip  string
		want  string
	}{
		"the CSV": {nil, "manifests/tiny.clusterserviceversion.yaml",
			"no ClusterServiceVersion found in manifests/ once manifests/tiny.clusterserviceversion.yaml skipped, unread: the ClusterServiceVersion cannot be skipped; remove its file from the list"},
		"an owned CRD": {map[string]string{"manifests/tiny.clusterserviceversion.yaml": csvOwning, "manifests/gadgets.yaml": ownedCRD}, "manifests/gadgets.yaml",
			`the ClusterServiceVersion owns CustomResourceDefinition "gadgets.example.com", and no file left once manifests/gadgets.yaml skipped holds it: the operator cannot run without it; skip only files it does not need`},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := LoadFS(fsWith(tc.files), Origin{}); err != nil {
				t.Fatalf("the bundle itself: %v", err)
			}
			_, err := LoadFS(fsWith(tc.files), Origin{SkipFiles: []string{tc.skip}})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestOwnedV1beta1CRDSaysWhatToDo(t *testing.T) {
	files := map[string]string{
		"manifests/tiny.clusterserviceversion.yaml": csvOwning,
		"manifests/gadgets.yaml":                    strings.Replace(ownedCRD, "/v1\n", "/v1beta1\n", 1),
	}
	_, err := LoadFS(fsWith(files), Origin{})
	want := `manifests/gadgets.yaml: document 1: CustomResourceDefinition "gadgets.example.com" is apiextensions.k8s.io/v1beta1, which no Kubernetes serves since 1.22 (OLM v1 would install it without its schema, which current clusters refuse); the ClusterServiceVersion owns it, so the operator cannot run without it: use a bundle version whose CRDs are apiextensions.k8s.io/v1 (or ask the vendor for one)`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	// Not a skippable file: skipping the operator's own API leaves it broken.
	var fe *FileError
	if errors.As(err, &fe) {
		t.Errorf("an owned v1beta1 CRD offered as skippable")
	}
	if _, err := LoadFS(fsWith(files), Origin{SkipFiles: []string{"manifests/gadgets.yaml"}}); err == nil || !strings.Contains(err.Error(), "owns CustomResourceDefinition \"gadgets.example.com\"") {
		t.Errorf("skipping it: %v", err)
	}
}

// eventing-kogito 1.2.0 ships a dependencies.yaml mis-indented at line 22:
// OLM v1 renders the bundle (it never reads the file to render).
func TestUnreadableDependenciesAreUnknown(t *testing.T) {
	b, err := LoadFS(fsWith(map[string]string{
		"metadata/dependencies.yaml": "dependencies:\n- type: olm.package\n  value:\n    packageName: knative\n   version: 1.0.0\n",
	}), Origin{})
	if err != nil {
		t.Fatalf("a broken dependencies.yaml failed the load: %v", err)
	}
	if b.Dependencies != nil {
		t.Errorf("dependencies %v from a file that does not parse", b.Dependencies)
	}
	// The mistake is on line 5; the YAML parsers point at line 4 or 1.
	if want := "not valid YAML near line 4: did not find expected key"; b.DependenciesUnreadable != want {
		t.Errorf("unreadable: %q, want %q", b.DependenciesUnreadable, want)
	}
	// A readable one still loads, and a broken properties.yaml (which OLM
	// v1 merges into the CSV) still fails.
	b, err = LoadFS(fsWith(map[string]string{"metadata/dependencies.yaml": "dependencies:\n- type: olm.package\n  value: {packageName: a, version: 1.0.0}\n"}), Origin{})
	if err != nil || len(b.Dependencies) != 1 || b.DependenciesUnreadable != "" {
		t.Errorf("readable file: %v %v %q", err, b.Dependencies, b.DependenciesUnreadable)
	}
	if _, err := LoadFS(fsWith(map[string]string{"metadata/properties.yaml": "properties:\n- type: a\n   value: 1\n"}), Origin{}); err == nil {
		t.Errorf("a broken properties.yaml loaded")
	}
}

// anchors is a ConfigMap whose aliases add about 82,000 nodes: under the
// per-file budget.
func anchors(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\nx:\n  l0: &l0 [x, y, z]\n", name)
	for i := 1; i <= 13; i++ {
		fmt.Fprintf(&b, "  l%d: &l%d [*l%d, *l%d]\n", i, i, i-1, i-1)
	}
	return b.String()
}

func TestAliasBudgetCoversTheBundle(t *testing.T) {
	if _, err := LoadFS(fsWith(map[string]string{"manifests/a.yaml": anchors("a")}), Origin{}); err != nil {
		t.Fatalf("one file under the budget: %v", err)
	}
	_, err := LoadFS(fsWith(map[string]string{"manifests/a.yaml": anchors("a"), "manifests/b.yaml": anchors("b")}), Origin{})
	if err == nil || !strings.Contains(err.Error(), "manifests/b.yaml: document 1: expanding YAML aliases: YAML aliases of the bundle's files would add more than 131072 nodes") {
		t.Fatalf("two files over the bundle's budget: %v", err)
	}
	// annotations.yaml goes through the same bounds.
	_, err = LoadFS(fsWith(map[string]string{"metadata/annotations.yaml": testAnnotations + "  x: &a [*a]\n"}), Origin{})
	if err == nil || !strings.Contains(err.Error(), "metadata/annotations.yaml") || !strings.Contains(err.Error(), "endless loop") {
		t.Fatalf("alias cycle in annotations.yaml: %v", err)
	}
}

func TestJSONStreamIsPreScanned(t *testing.T) {
	data := `{"a": [` + strings.Repeat("1,", 600000) + "1]}"
	if _, err := ParseDocuments([]byte(data)); err == nil || !strings.Contains(err.Error(), "YAML items") {
		t.Fatalf("a JSON array of 600,000 numbers: %v", err)
	}
}
