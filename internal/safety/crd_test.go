package safety

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// baseProps are spec's properties in the CRD the cluster runs; each case
// edits a copy.
const baseProps = `size:
  type: integer
  minimum: 1
  maximum: 10
name:
  type: string
  description: the name
  minLength: 1
  maxLength: 20
  pattern: '^[a-z]+$'
mode:
  type: string
  enum: [a, b]
  default: a
tags:
  type: array
  items: {type: string}
  minItems: 1
  maxItems: 5
labels:
  type: object
  additionalProperties: {type: string}
  minProperties: 1
  maxProperties: 5
note:
  type: string
  nullable: true
choice:
  type: object
  properties:
    x: {type: string}
    y: {type: string}
  oneOf:
  - required: [x]
  - required: [y]
`

// edit replaces old with new in baseProps, failing when old is absent (so a
// case cannot silently test nothing).
func edit(t *testing.T, pairs ...string) string {
	t.Helper()
	s := baseProps
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("test bug: %q is not in the base schema", pairs[i])
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

// v2 is an extra served version whose spec schema is props.
func v2(props string, storage bool) string {
	return fmt.Sprintf(`  - name: v2
    served: true
    storage: %t
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
%s`, storage, specSchema(props))
}

type want struct {
	sev                 Severity
	rule, version, path string
}

func TestCRDRules(t *testing.T) {
	base := crdYAML("Namespaced", specSchema(baseProps), "")
	withWebhook := func(crd string) string {
		return strings.Replace(crd, "  scope: Namespaced\n", "  scope: Namespaced\n  conversion:\n    strategy: Webhook\n    webhook:\n      conversionReviewVersions: [v1]\n      clientConfig:\n        service: {name: w, namespace: ns, path: /convert}\n", 1)
	}
	for _, tc := range []struct {
		name     string
		old, new string
		keepCRDs bool
		want     []want // nil: no finding
	}{
		{name: "unchanged", old: base, new: base},
		{name: "description only", old: base, new: crdYAML("Namespaced", specSchema(edit(t, "description: the name", "description: the widget's name")), "")},
		{name: "enum value added", old: base, new: crdYAML("Namespaced", specSchema(edit(t, "enum: [a, b]", "enum: [a, b, c]")), "")},
		{name: "scope", old: base, new: crdYAML("Cluster", specSchema(baseProps), ""),
			want: []want{{Error, "scope", "", ""}}},
		{name: "stored version removed: a served version counts as stored",
			old: crdYAML("Namespaced", specSchema(baseProps), v2(baseProps, false)), new: base,
			want: []want{{Error, "storedVersionRemoval", "v2", ""}}},
		{name: "a version neither served nor stored may go",
			old: crdYAML("Namespaced", specSchema(baseProps), strings.Replace(v2(baseProps, false), "served: true", "served: false", 1)), new: base},
		{name: "existing field removed", old: base, new: crdYAML("Namespaced", specSchema(edit(t, "tags:\n  type: array\n  items: {type: string}\n  minItems: 1\n  maxItems: 5\n", "")), ""),
			want: []want{{Error, "existingFieldRemoval", "v1", ".spec.tags"}}},
		{name: "type", old: base, new: crdYAML("Namespaced", specSchema(edit(t, "size:\n  type: integer", "size:\n  type: number")), ""),
			want: []want{{Error, "type", "v1", ".spec.size"}}},
		{name: "required", old: base, new: crdYAML("Namespaced", strings.Replace(specSchema(baseProps), "            type: object\n", "            type: object\n            required: [name]\n", 1), ""),
			want: []want{{Error, "required", "v1", ".spec"}}},
		{name: "enum value removed", old: base, new: crdYAML("Namespaced", specSchema(edit(t, "enum: [a, b]", "enum: [a]")), ""),
			want: []want{{Error, "enum", "v1", ".spec.mode"}}},
		{name: "default", old: base, new: crdYAML("Namespaced", specSchema(edit(t, "default: a", "default: b")), ""),
			want: []want{{Error, "default", "v1", ".spec.mode"}}},
		{name: "maximum", old: base, new: crdYAML("Namespaced", specSchema(edit(t, "maximum: 10", "maximum: 9")), ""),
			want: []want{{Error, "maximum", "v1", ".spec.size"}}},
		{name: "minimum", old: base, new: crdYAML("Namespaced", specSchema(edit(t, "minimum: 1", "minimum: 2")), ""),
			want: []want{{Error, "minimum", "v1", ".spec.size"}}},
		{name: "maxLength", old: base, new: crdYAML("Namespaced", specSchema(edit(t, "maxLength: 20", "maxLength: 19")), ""),
			want: []want{{Error, "maxLength", "v1", ".spec.name"}}},
		{name: "minLength", old: base, new: crdYAML("Namespaced", specSchema(edit(t, "minLength: 1", "minLength: 2")), ""),
			want: []want{{Error, "minLength", "v1", ".spec.name"}}},
		{name: "maxItems", old: base, new: crdYAML("Namespaced", specSchema(edit(t, "maxItems: 5", "maxItems: 4")), ""),
			want: []want{{Error, "maxItems", "v1", ".spec.tags"}}},
		{name: "minItems", old: base, new: crdYAML("Namespaced", specSchema(edit(t, "minItems: 1", "minItems: 2")), ""),
			want: []want{{Error, "minItems", "v1", ".spec.tags"}}},
		{name: "maxProperties", old: base, new: crdYAML("Namespaced", specSchema(edit(t, "maxProperties: 5", "maxProperties: 4")), ""),
			want: []want{{Error, "maxProperties", "v1", ".spec.labels"}}},
		{name: "minProperties", old: base, new: crdYAML("Namespaced", specSchema(edit(t, "minProperties: 1", "minProperties: 2")), ""),
			want: []want{{Error, "minProperties", "v1", ".spec.labels"}}},
		{name: "bounds loosened", old: base, new: crdYAML("Namespaced", specSchema(edit(t, "maximum: 10", "maximum: 11", "minLength: 1", "minLength: 0")), "")},
		{name: "pattern", old: base, new: crdYAML("Namespaced", specSchema(edit(t, "pattern: '^[a-z]+$'", "pattern: '^[a-z]{2,}$'")), ""),
			want: []want{{Error, "pattern", "v1", ".spec.name"}}},
		{name: "nullable", old: base, new: crdYAML("Namespaced", specSchema(edit(t, "  nullable: true\n", "")), ""),
			want: []want{{Error, "nullable", "v1", ".spec.note"}}},
		{name: "oneOf", old: base, new: crdYAML("Namespaced", specSchema(edit(t, "  - required: [y]\n", "")), ""),
			want: []want{{Error, "oneOf", "v1", ".spec.choice"}}},
		{name: "unhandled", old: base, new: crdYAML("Namespaced", specSchema(edit(t, "  description: the name\n", "  description: the name\n  format: email\n")), ""),
			want: []want{{Error, "unhandled", "v1", ".spec.name"}}},
		{name: "served versions compared",
			old: base, new: crdYAML("Namespaced", specSchema(baseProps), v2(edit(t, "maximum: 10", "maximum: 5"), false)),
			want: []want{{Error, "maximum", "v1 -> v2", ".spec.size"}}},
		{name: "webhook conversion skips served versions",
			old: base, new: withWebhook(crdYAML("Namespaced", specSchema(baseProps), v2(edit(t, "maximum: 10", "maximum: 5"), false)))},
		{name: "a problem the old CRD had already is tolerated",
			old: crdYAML("Namespaced", specSchema(baseProps), v2(edit(t, "maximum: 10", "maximum: 5"), false)),
			new: crdYAML("Namespaced", specSchema(baseProps), v2(edit(t, "maximum: 10", "maximum: 5"), false))},
		{name: "CRD dropped, keepCRDs", old: base, new: "", keepCRDs: true,
			want: []want{{Warning, "crdRemoved", "", ""}}},
		{name: "CRD dropped, no keepCRDs", old: base, new: "",
			want: []want{{Error, "crdRemoved", "", ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from := testBundle(t, "widget.v1.0.0", "1.0.0", tc.old)
			var to = testBundle(t, "widget.v1.1.0", "1.1.0")
			if tc.new != "" {
				to = testBundle(t, "widget.v1.1.0", "1.1.0", tc.new)
			}
			got, err := checkCRDs(t.Context(), from, to, tc.keepCRDs)
			if err != nil {
				t.Fatal(err)
			}
			if len(tc.want) == 0 && len(got) > 0 {
				t.Fatalf("want no finding, got:\n%s", lines(got))
			}
			for _, w := range tc.want {
				if !slices.ContainsFunc(got, func(g Finding) bool {
					return g.Severity == w.sev && g.Rule == w.rule && g.Version == w.version && g.Path == w.path && g.CRD == "widgets.example.com" && g.Message != ""
				}) {
					t.Errorf("no %s %s finding of CRD widgets.example.com version %q path %q in:\n%s", w.sev, w.rule, w.version, w.path, lines(got))
				}
			}
			for _, g := range got {
				if g.Rule != "existingFieldRemoval" && !slices.ContainsFunc(tc.want, func(w want) bool { return w.rule == g.Rule }) {
					t.Errorf("unexpected finding %s", g)
				}
			}
		})
	}
}

func lines(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.String() + "\n")
	}
	return b.String()
}
