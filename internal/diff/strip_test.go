package diff

import (
	"context"
	"testing"
)

func TestStripProvenance(t *testing.T) {
	cases := []struct {
		name, doc string
		want      int
		out       string // "" with ok false
	}{
		{"renderer's form", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    a.example.com/keep: '1'\n    olm-cmp.dev/bundle: 'op@1.0.0'\n    'olm-cmp.dev/source': \"q\"\n  labels:\n    olm-cmp.dev/label: kept\ndata:\n  olm-cmp.dev/bundle: kept, not metadata\n", 2,
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    a.example.com/keep: '1'\n  labels:\n    olm-cmp.dev/label: kept\ndata:\n  olm-cmp.dev/bundle: kept, not metadata\n"},
		{"continuation lines and an emptied mapping", "kind: A\nmetadata:\n  annotations:\n    olm-cmp.dev/source: >-\n      a long\n      value\n    olm-cmp.dev/bundle: b\n  name: x\nspec:\n  template:\n    metadata:\n      annotations:\n        olm-cmp.dev/bundle: nested, kept\n", 2,
			"kind: A\nmetadata:\n  name: x\nspec:\n  template:\n    metadata:\n      annotations:\n        olm-cmp.dev/bundle: nested, kept\n"},
		{"none to strip", "kind: A\nmetadata:\n  name: x\n", 0, "kind: A\nmetadata:\n  name: x\n"},
		// Not the renderer's form: the caller writes the node again.
		{"flow style", "kind: A\nmetadata: {name: x, annotations: {olm-cmp.dev/bundle: b}}\n", 1, ""},
		{"other indentation", "kind: A\nmetadata:\n    annotations:\n        olm-cmp.dev/bundle: b\n", 1, ""},
	}
	for _, c := range cases {
		got, ok := stripProvenance(c.doc, c.want)
		if ok != (c.out != "") || got != c.out {
			t.Errorf("%s: got %v %q, want %q", c.name, ok, got, c.out)
		}
	}

	// Compare gives the same report either way: the hand-made form (four
	// spaces) falls back to writing the node again, and so its counterpart.
	block := []string{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    olm-cmp.dev/bundle: 'op@1'\ndata:\n  a: '1'\n"}
	wide := []string{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n    name: x\n    annotations:\n        olm-cmp.dev/bundle: 'op@2'\ndata:\n    a: '1'\n"}
	r, err := Compare(block, wide, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if r.HasChanges() {
		t.Errorf("only the provenance differs, yet: %+v", r)
	}
}

func TestMetadataOnly(t *testing.T) {
	parse := func(doc string) item {
		items, err := parseAll(context.Background(), []string{doc})
		if err != nil {
			t.Fatal(err)
		}
		return items[0]
	}
	a := parse("kind: A\nmetadata:\n  name: x\n  labels: {a: '1'}\nspec:\n  n: 1\n")
	for doc, want := range map[string]bool{
		"kind: A\nmetadata:\n  name: y\n  labels: {a: '2'}\n  annotations: {b: c}\nspec:\n  n: 1\n": true,
		"kind: A\nmetadata:\n  name: x\n  labels: {a: '1'}\nspec:\n  n: '1'\n":                      false, // a string now
		"kind: A\nmetadata:\n  name: x\n  namespace: ns\nspec:\n  n: 1\n":                           false,
		"kind: A\nmetadata:\n  name: x\nspec:\n  n: 1\n  m: 2\n":                                    false,
		"kind: A\nmetadata: {name: x}\nspec: {n: 1}\n":                                              true, // styles do not count
	} {
		if got := metadataOnly(a, parse(doc)); got != want {
			t.Errorf("metadataOnly(%q) = %v, want %v", doc, got, want)
		}
	}
}
