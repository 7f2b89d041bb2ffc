package yamlsafe

import (
	"strings"
	"testing"
)

func TestParseRefusesWhatWouldNotEnd(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"cycle in a sequence", "a: &a [*a]\n", "refers to a node that contains it"},
		{"cycle in a mapping", "labels: &l {x: *l}\n", "refers to a node that contains it"},
		{"alias bomb", "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n", "aliases expand to more than"},
		{"too deep", strings.Repeat("[", 300) + strings.Repeat("]", 300), "nested more than 256 levels"},
		{"too many items", strings.Repeat("- 1\n", 600000), "YAML items"},
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
