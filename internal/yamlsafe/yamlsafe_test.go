package yamlsafe

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestParseRefusesWhatWouldNotEnd(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"cycle in a sequence", "a: &a [*a]\n", "refers to a node that contains it"},
		{"cycle in a mapping", "labels: &l {x: *l}\n", "refers to a node that contains it"},
		{"alias bomb", "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n", "aliases expand to more than"},
		{"too deep", strings.Repeat("[", 300) + strings.Repeat("]", 300), "nested more than 256 levels"},
		{"too many items", strings.Repeat("- 1\n", 600000), "YAML items"},
		// JSON written as YAML: flow mappings with no space after the colon
		// and no line breaks, 15 nodes for each comma.
		{"too many items in JSON style", "[" + strings.Repeat(`{"t":{"a":{"b":{"c":{"d":{"e":{"f":"1"}}}}}}},`, 40000) + "1]", "YAML items"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.doc))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestParseKeepsHonestAliases(t *testing.T) {
	docs, err := Parse([]byte("a: &a {x: 1}\nb: *a\n---\n---\nc: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 3 {
		t.Fatalf("documents: %v", docs)
	}
	n, err := DeAnchor(docs[0], DefaultLimits)
	if err != nil || HasAliases(n) {
		t.Fatalf("de-anchored: %v, aliases left %v", err, n != nil && HasAliases(n))
	}
}

// bomb is the adversarial corpus's shape: levels of anchors, each naming the
// level below twice, under every byte and depth limit.
func bomb(levels int, leaf string) string {
	var b strings.Builder
	b.WriteString("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: bombs.example.com}\nspec:\n  l0: &l0 " + leaf + "\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "  l%d: &l%d [*l%d, *l%d]\n", i, i, i-1, i-1)
	}
	return b.String()
}

func TestParseCountsTheExpandedTreeBeforeExpanding(t *testing.T) {
	// 16 levels: 2^16 copies of the leaf, about 650,000 nodes, under
	// MaxNodes (a million) but far over what aliases may add.
	doc := bomb(16, "[x, y, z]")
	if len(doc) > 1600 {
		t.Fatalf("the bomb is %d bytes; the corpus's is 1,558", len(doc))
	}
	_, err := Parse([]byte(doc))
	if err == nil || !strings.Contains(err.Error(), "YAML aliases would add more than 131072 nodes") {
		t.Fatalf("got %v", err)
	}
	// Several documents share the file's budget: each under it, together over.
	one := bomb(13, "[x, y, z]") // about 82,000 nodes added
	if _, err := Parse([]byte(one)); err != nil {
		t.Fatalf("one document under the budget: %v", err)
	}
	if _, err := Parse([]byte(one + "---\n" + one)); err == nil || !strings.Contains(err.Error(), "document 2: YAML aliases would add more than") {
		t.Fatalf("two documents over the file's budget: %v", err)
	}
}

func TestMeasure(t *testing.T) {
	docs, err := Parse([]byte("a: &a [x, y]\nb: *a\nc: *a\n"))
	if err != nil {
		t.Fatal(err)
	}
	// Each alias (one node written) becomes a 3-node sequence.
	if added, err := Measure(docs[0], DefaultLimits); err != nil || added != 4 {
		t.Fatalf("added %d, %v; want 4", added, err)
	}
	l := DefaultLimits
	l.MaxAliasNodes = 3
	if _, err := Measure(docs[0], l); err == nil {
		t.Fatal("over a budget of 3 accepted")
	}
}

// TestDeAnchorAsKyaml compares DeAnchor with kyaml's RNode.DeAnchor, whose
// behaviour it keeps (in linear time), on honest documents.
func TestDeAnchorAsKyaml(t *testing.T) {
	for _, doc := range []string{
		"a: &a {x: 1, y: [1, 2]}\nb: *a\nc: [*a, *a]\n",
		"base: &base {x: 1, y: 2}\nobj:\n  <<: *base\n  y: 3\n  z: 4\n",
		"a: &a {x: 1, w: 0}\nb: &b {x: 2, y: 2}\nobj:\n  <<: [*a, *b]\n  z: 3\n",
		"a: &a {x: 1}\nobj: {<<: {x: 5, q: 1}, r: *a}\n",
		"s: &s hello\nt: *s\nlist: [&i 1, *i, *i]\n",
		"outer: &o\n  inner: &i {k: v}\n  again: *i\nuse: *o\n",
	} {
		t.Run(doc, func(t *testing.T) {
			mine, err := Parse([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			theirs, _ := Parse([]byte(doc))
			got, err := DeAnchor(mine[0], DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			rn := yaml.NewRNode(theirs[0])
			if err := rn.DeAnchor(); err != nil {
				t.Fatal(err)
			}
			if HasAliases(got) {
				t.Errorf("aliases or anchors left")
			}
			if g, w := yaml.NewRNode(got).MustString(), rn.MustString(); g != w {
				t.Errorf("got\n%s\nkyaml gives\n%s", g, w)
			}
		})
	}
}

// TestDeAnchorCopies: each alias becomes its own copy, so an edit of one
// object cannot leak into another through a shared node.
func TestDeAnchorCopies(t *testing.T) {
	docs, err := Parse([]byte("a: &a {x: 1}\nb: *a\n"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := DeAnchor(docs[0], DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	n.Content[3].Content[1].Value = "2"
	if v := n.Content[1].Content[1].Value; v != "1" {
		t.Fatalf("editing the copy changed the anchor: x=%s", v)
	}
}

func TestDeAnchorRefusesBadMerges(t *testing.T) {
	for doc, want := range map[string]string{
		"a: &a [1]\nb: {<<: *a}\n":      "the merge key << takes a mapping",
		"b: {<<: {x: 1}, <<: {y: 1}}\n": "two merge keys",
	} {
		docs, err := Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DeAnchor(docs[0], DefaultLimits); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", doc, err, want)
		}
	}
}

// BenchmarkDeAnchor expands a document at the alias budget (13 levels of
// mappings that name the level below twice), with DeAnchor and with
// kyaml's RNode.DeAnchor, which it replaces.
func BenchmarkDeAnchor(b *testing.B) {
	var doc strings.Builder
	doc.WriteString("l0: &l0 {a: 1}\n")
	for i := 1; i <= 13; i++ {
		fmt.Fprintf(&doc, "l%d: &l%d {a: *l%d, b: *l%d}\n", i, i, i-1, i-1)
	}
	for _, c := range []struct {
		name string
		f    func(n *yaml.Node) error
	}{
		{"yamlsafe", func(n *yaml.Node) error { _, err := DeAnchor(n, DefaultLimits); return err }},
		{"kyaml", func(n *yaml.Node) error { return yaml.NewRNode(n).DeAnchor() }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				docs, err := Parse([]byte(doc.String()))
				if err != nil {
					b.Fatal(err)
				}
				if err := c.f(docs[0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// ParseMarked says what HasAliases would of the documents it returns: an
// anchor alone counts, as de-anchoring removes it.
func TestParseMarked(t *testing.T) {
	for _, tc := range []struct {
		doc    string
		marked bool
	}{
		{"a: 1\nb: [x, y]\n", false},
		{"a: 1\n---\nb: 2\n", false},
		{"a: &x 1\n", true},
		{"a: &x 1\nb: *x\n", true},
		{"a: 1\n---\nb: &y {c: d}\nc: *y\n", true},
		{"---\n", false},
	} {
		docs, marked, err := ParseMarked([]byte(tc.doc))
		if err != nil {
			t.Fatalf("%q: %v", tc.doc, err)
		}
		has := false
		for _, d := range docs {
			has = has || (d != nil && HasAliases(d))
		}
		if marked != tc.marked || has != tc.marked {
			t.Errorf("%q: marked %v (HasAliases %v), want %v", tc.doc, marked, has, tc.marked)
		}
	}
}
