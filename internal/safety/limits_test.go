package safety

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// bigCRD is widgets.example.com (JSON) with the given number of served
// versions; each version's spec nests levels objects deep ("a" inside
// "a"), each level with leaves string properties, and, with enum > 0,
// spec.mode has an enum of that many values.
func bigCRD(versions, levels, leaves, enum int) string {
	var b strings.Builder
	b.WriteString(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","names":{"kind":"Widget","plural":"widgets","singular":"widget","listKind":"WidgetList"},"scope":"Namespaced","versions":[`)
	for v := range versions {
		if v > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"name":"v%d","served":true,"storage":%t,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":`, v+1, v == 0)
		for l := range levels {
			b.WriteString(`{"type":"object","properties":{`)
			for i := range leaves {
				fmt.Fprintf(&b, `"f%d":{"type":"string"},`, i)
			}
			if l == 0 && enum > 0 {
				b.WriteString(`"mode":{"type":"string","enum":[`)
				for e := range enum {
					if e > 0 {
						b.WriteString(",")
					}
					fmt.Fprintf(&b, `"m%d"`, e)
				}
				b.WriteString(`]},`)
			}
			b.WriteString(`"a":`)
		}
		b.WriteString(`{"type":"string"}`)
		b.WriteString(strings.Repeat("}}", levels))
		b.WriteString(`}}}}`)
	}
	b.WriteString(`]}}`)
	return b.String()
}

// TestCRDLimits: a CRD beyond a limit of the check gets one finding naming
// the CRD, the count, the limit and what to do, on either side; a CRD as
// big as the largest real ones is checked.
func TestCRDLimits(t *testing.T) {
	const tail = "; the upgrade-safety check accepts at most %d (real CRDs: up to %s), so this CRD's upgrade is not checked: review its change by hand (olm-cmp diff shows it) and, with upgradeFrom, remove upgradeFrom once you have judged it"
	for _, tc := range []struct {
		name string
		crd  string
		want string // "" for no finding
	}{
		{"180 served versions", bigCRD(180, 1, 1, 0),
			"ships it with 180 versions" + fmt.Sprintf(tail, MaxVersions, "12")},
		{"one version more than the limit", bigCRD(MaxVersions+1, 1, 1, 0),
			fmt.Sprintf("ships it with %d versions", MaxVersions+1) + fmt.Sprintf(tail, MaxVersions, "12")},
		{"schema nodes", bigCRD(1, 1, MaxSchemaNodes, 0),
			fmt.Sprintf("ships it with %d schema properties (every property, items, additionalProperties… schema of every version)", MaxSchemaNodes+3) + fmt.Sprintf(tail, MaxSchemaNodes, "10,533")},
		{"enum", bigCRD(1, 1, 1, MaxEnumValues+1),
			fmt.Sprintf("ships it with an enum of %d values at .spec.mode in version v1", MaxEnumValues+1) + fmt.Sprintf(tail, MaxEnumValues, "72")},
		{"depth", bigCRD(1, MaxSchemaDepth, 0, 0),
			fmt.Sprintf("ships it with the schema of version v1 nested %d levels deep", MaxSchemaDepth+2) + fmt.Sprintf(tail, MaxSchemaDepth, "19")},
		// 3 served versions of 30 levels of 430 properties: under the node
		// and depth limits, but each node is copied once per level above
		// it, for itself and each of the 2 other versions.
		{"comparison work", bigCRD(3, 30, 430, 0), "ships it needing a comparison work of "},
		{"as big as the largest real CRDs", bigCRD(4, 10, 260, 72), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, side := range []string{"FROM", "TO"} {
				small := crdYAML("Namespaced", specSchema(baseProps), "")
				old, cur := tc.crd, small
				csv := "widget.v1.0.0"
				if side == "TO" {
					old, cur, csv = small, tc.crd, "widget.v1.1.0"
				}
				got, err := checkCRDs(t.Context(), testBundle(t, "widget.v1.0.0", "1.0.0", old), testBundle(t, "widget.v1.1.0", "1.1.0", cur), true)
				if err != nil {
					t.Fatal(err)
				}
				limited := slices.DeleteFunc(slices.Clone(got), func(f Finding) bool { return f.Rule != "limits" })
				if tc.want == "" {
					if len(limited) > 0 {
						t.Errorf("%s: a CRD as big as real ones is refused: %s", side, limited[0])
					}
					continue
				}
				if len(got) != 1 || got[0].Rule != "limits" || got[0].Severity != Error || got[0].CRD != "widgets.example.com" {
					t.Fatalf("%s: want one limits error, got:\n%s", side, lines(got))
				}
				if want := csv + " " + tc.want; !strings.HasPrefix(got[0].Message, want) {
					t.Errorf("%s: message\n  %s\nwant\n  %s", side, got[0].Message, want)
				}
				if !strings.HasSuffix(got[0].Message, "remove upgradeFrom once you have judged it") {
					t.Errorf("%s: message does not say what to do: %s", side, got[0].Message)
				}
			}
		})
	}
}

// TestCRDIssueSizes: the sizes the adversarial corpus used (100,000
// properties, an enum of 400,000 values) are refused with a finding.
func TestCRDIssueSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds CRDs of several megabytes")
	}
	for name, crd := range map[string]string{
		"100000 properties":        bigCRD(1, 1, 100000, 0),
		"an enum of 400000 values": bigCRD(1, 1, 1, 400000),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := checkCRDs(t.Context(), testBundle(t, "widget.v1.0.0", "1.0.0", crd), testBundle(t, "widget.v1.1.0", "1.1.0", strings.Replace(crd, `"type":"string"`, `"type":"integer"`, 1)), true)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Rule != "limits" {
				t.Fatalf("want one limits finding, got:\n%.2000s", lines(got))
			}
		})
	}
}

// TestVersionWithoutSchema: crdify dereferences every version's schema; a
// version without one is a finding naming the CRD, the version and the
// field, on either side, not a crash.
func TestVersionWithoutSchema(t *testing.T) {
	noSchema := crdYAML("Namespaced", specSchema(baseProps), `  - name: v2
    served: true
    storage: false
`)
	base := crdYAML("Namespaced", specSchema(baseProps), "")
	for _, tc := range []struct{ name, old, cur, csv string }{
		{"FROM", noSchema, base, "widget.v1.0.0"},
		{"TO", base, noSchema, "widget.v1.1.0"},
		{"both, changed", noSchema, strings.Replace(noSchema, "minimum: 1", "minimum: 2", 1), "widget.v1.0.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Check(t.Context(), testBundle(t, "widget.v1.0.0", "1.0.0", tc.old), testBundle(t, "widget.v1.1.0", "1.1.0", tc.cur), Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := Finding{Severity: Error, Rule: "schema", CRD: "widgets.example.com", Version: "v2",
				Message: tc.csv + " ships this version without a schema (spec.versions[1].schema.openAPIV3Schema), which an apiextensions.k8s.io/v1 CRD must have (the API server refuses it), so this CRD's upgrade is not checked: give the version a schema"}
			if !slices.Contains(got, want) {
				t.Errorf("no finding\n  %s\nin:\n%s", want, lines(got))
			}
		})
	}
}

// TestUnchangedCRD: a CRD both bundles ship unchanged is not judged, however
// big (crdify would subtract every issue it found).
func TestUnchangedCRD(t *testing.T) {
	for _, crd := range []string{bigCRD(MaxVersions+1, 1, 1, 0), crdYAML("Namespaced", specSchema(baseProps), "  - name: v2\n    served: true\n    storage: false\n")} {
		got, err := checkCRDs(t.Context(), testBundle(t, "widget.v1.0.0", "1.0.0", crd), testBundle(t, "widget.v1.1.0", "1.1.0", crd), false)
		if err != nil || len(got) != 0 {
			t.Errorf("unchanged CRD: %v\n%s", err, lines(got))
		}
	}
}

// TestCheckCancelled: the check stops with the context's error.
func TestCheckCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	b := crdYAML("Namespaced", specSchema(baseProps), v2(baseProps, false))
	_, err := Check(ctx, testBundle(t, "widget.v1.0.0", "1.0.0", b), testBundle(t, "widget.v1.1.0", "1.1.0", b), Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// TestDecodeCRD: the linear decoder gives what kyaml's MarshalJSON gave on
// every CRD of the real bundles, refuses a duplicate key (naming both
// lines) and applies merge keys as yaml.v3 does. MarshalJSON decodes the
// node's text (RNode.String), and yaml.v3's encoder adds a blank line to
// one of flux's folded descriptions; the decoder reads the node as parsed,
// so it is compared on that text too.
func TestDecodeCRD(t *testing.T) {
	dirs, _ := filepath.Glob("../../../shared/bundles/*")
	switch {
	case testing.Short():
		dirs = nil // MarshalJSON is quadratic on eclipse-che's 2 MB CRD
		t.Log("-short: only the small cases run")
	case len(dirs) == 0:
		t.Log("../shared/bundles is absent (reference data outside the repository): only the small cases run")
	}
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		b, err := bundle.LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range b.CRDs {
			text, err := o.String()
			if err != nil {
				t.Fatal(err)
			}
			n, err := yaml.Parse(text)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeCRD(bundle.Object{File: o.File, RNode: n})
			if err != nil {
				t.Fatal(err)
			}
			data, err := o.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			want := &apiextensionsv1.CustomResourceDefinition{}
			if err := json.Unmarshal(data, want); err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(got, want) {
				t.Errorf("%s %s: decoded differently from kyaml's MarshalJSON", filepath.Base(dir), o.File)
			}
		}
	}
	dup := strings.Replace(crdYAML("Namespaced", specSchema(baseProps), ""), "  scope: Namespaced\n", "  scope: Namespaced\n  scope: Cluster\n", 1)
	n, err := yaml.Parse(dup)
	if err != nil {
		t.Fatal(err)
	}
	_, err = decodeCRD(bundle.Object{File: "manifests/crd.yaml", RNode: n})
	if want := `manifests/crd.yaml: CustomResourceDefinition "widgets.example.com" is not a valid apiextensions.k8s.io/v1 CRD: line 9: mapping key "scope" already defined at line 8`; err == nil || err.Error() != want {
		t.Errorf("duplicate key: %v\nwant %s", err, want)
	}
	merged := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\nx: &names {kind: Widget, plural: widgets}\nspec:\n  group: example.com\n  names:\n    <<: *names\n    plural: gadgets\n"
	if n, err = yaml.Parse(merged); err != nil {
		t.Fatal(err)
	}
	c, err := decodeCRD(bundle.Object{File: "crd.yaml", RNode: n})
	if err != nil || c.Spec.Names.Kind != "Widget" || c.Spec.Names.Plural != "gadgets" {
		t.Errorf("merge key: %+v, %v", c, err)
	}
}

// TestFindingStringOneLine: a finding prints on one line whatever the
// bundle named its CRD or properties (they reach Argo CD's UI and
// terminals).
func TestFindingStringOneLine(t *testing.T) {
	f := Finding{Severity: Error, Rule: "type", CRD: "w\nerror: none", Version: "v1", Path: ".spec.a\x1b[2J", Message: "type changed: \u202e"}
	if got, want := f.String(), `error: type: CRD w\nerror: none version v1 path .spec.a\x1b[2J: type changed: \u202e`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// TestLimitsBeforeDecoding: the limits are judged on the YAML nodes, before
// the CRD is decoded (decoding 100,000 properties took seconds and 150 MB,
// uninterruptible): a CRD beyond them that would not even decode (a
// version's served is not a boolean) gets the limits finding, not the
// decoding error; within the limits, the decoding error is still reported.
func TestLimitsBeforeDecoding(t *testing.T) {
	small := crdYAML("Namespaced", specSchema(baseProps), "")
	undecodable := func(crd string) string {
		return strings.Replace(crd, `"served":true`, `"served":"maybe"`, 1)
	}
	got, err := checkCRDs(t.Context(), testBundle(t, "widget.v1.0.0", "1.0.0", small), testBundle(t, "widget.v1.1.0", "1.1.0", undecodable(bigCRD(1, 1, MaxSchemaNodes, 0))), true)
	if err != nil || len(got) != 1 || got[0].Rule != "limits" || !strings.Contains(got[0].Message, "schema properties") {
		t.Fatalf("beyond the limits: %v\n%s", err, lines(got))
	}
	if _, err := checkCRDs(t.Context(), testBundle(t, "widget.v1.0.0", "1.0.0", small), testBundle(t, "widget.v1.1.0", "1.1.0", undecodable(bigCRD(1, 1, 10, 0))), true); err == nil || !strings.Contains(err.Error(), "is not a valid apiextensions.k8s.io/v1 CRD") {
		t.Fatalf("within the limits: %v", err)
	}
}
