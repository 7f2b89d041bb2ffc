package safety

import (
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// convertedBy makes b's CSV declare a conversion webhook for the CRDs named.
func convertedBy(b *bundle.Bundle, crds ...string) *bundle.Bundle {
	b.CSV.Spec.WebhookDefinitions = append(b.CSV.Spec.WebhookDefinitions, v1alpha1.WebhookDescription{
		GenerateName: "cwidget.example.com", Type: v1alpha1.ConversionWebhook, DeploymentName: "widget-controller",
		AdmissionReviewVersions: []string{"v1"}, ConversionCRDs: crds,
	})
	return b
}

// TestRenderedCRDs: the CRDs are judged as the render applies them; a CRD
// the CSV's conversion webhook serves skips the served-version comparisons
// (OLM v1 checks the CRD it rendered, with spec.conversion Webhook).
func TestRenderedCRDs(t *testing.T) {
	old := crdYAML("Namespaced", specSchema(baseProps), v2(baseProps, false))
	// TO adds a field to v1 only: v2, also served, lacks it.
	cur := crdYAML("Namespaced", specSchema(baseProps+"zzz: {type: string}\n"), v2(baseProps, false))
	for _, tc := range []struct {
		name    string
		webhook []string
		want    []string // findings as "rule version path: message"
	}{
		{name: "no conversion webhook: v2 lacks the field", want: []string{
			`type v1 -> v2 .spec.zzz: field absent in v2: a value set through the other version is lost when the object is read or written through v2`,
		}},
		{name: "conversion webhook of the CSV", webhook: []string{"widgets.example.com"}},
		{name: "a webhook for another CRD", webhook: []string{"gadgets.example.com"}, want: []string{
			`type v1 -> v2 .spec.zzz: field absent in v2: a value set through the other version is lost when the object is read or written through v2`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, to := testBundle(t, "widget.v1.0.0", "1.0.0", old), testBundle(t, "widget.v1.1.0", "1.1.0", cur)
			if tc.webhook != nil {
				convertedBy(from, tc.webhook...)
				convertedBy(to, tc.webhook...)
			}
			got, err := checkCRDs(t.Context(), from, to, false)
			if err != nil {
				t.Fatal(err)
			}
			if g := short(got); !slices.Equal(g, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func short(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule+" "+f.Version+" "+f.Path+": "+f.Message)
	}
	slices.Sort(out) // checkCRDs keeps crdify's order, which varies; Check sorts
	return out
}

// TestFindingPaths: paths are written as diff writes them (array items
// "[*]", a property named items ".items", map values ".*"), and a removed
// subtree is one finding, at its top.
func TestFindingPaths(t *testing.T) {
	const props = `solvers:
  type: array
  items:
    type: object
    properties:
      dns01:
        type: object
        properties:
          provider: {type: string}
          zone:
            type: object
            properties:
              name: {type: string}
list:
  type: object
  properties:
    items: {type: integer}
byName:
  type: object
  additionalProperties:
    type: object
    properties:
      size: {type: integer, maximum: 5}
`
	edit := func(old, new string) string {
		if !strings.Contains(props, old) {
			t.Fatalf("test bug: %q is not in the schema", old)
		}
		return crdYAML("Namespaced", specSchema(strings.Replace(props, old, new, 1)), "")
	}
	base := crdYAML("Namespaced", specSchema(props), "")
	for _, tc := range []struct {
		name string
		new  string
		want []string
	}{
		{name: "array item field", new: edit("          provider: {type: string}", "          provider: {type: integer}"),
			want: []string{"type v1 .spec.solvers[*].dns01.provider: type changed: string -> integer"}},
		{name: "property named items", new: edit("items: {type: integer}", "items: {type: string}"),
			want: []string{"type v1 .spec.list.items: type changed: integer -> string"}},
		{name: "map value field", new: edit("maximum: 5", "maximum: 4"),
			// crdify compares a map with its value schema: OLM v1 also
			// reports the change as unhandled on the map.
			want: []string{"maximum v1 .spec.byName.*.size: maximum decreased: 5 -> 4", "unhandled v1 .spec.byName: a change no safety rule covers, in Maximum"}},
		{name: "removed subtree: its top only", new: edit(`      dns01:
        type: object
        properties:
          provider: {type: string}
          zone:
            type: object
            properties:
              name: {type: string}
`, "      other: {type: string}\n"),
			want: []string{"existingFieldRemoval v1 .spec.solvers[*].dns01: field removed: objects that set it lose it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := checkCRDs(t.Context(), testBundle(t, "widget.v1.0.0", "1.0.0", base), testBundle(t, "widget.v1.1.0", "1.1.0", tc.new), false)
			if err != nil {
				t.Fatal(err)
			}
			if g := short(got); !slices.Equal(g, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
