package yamlsafe

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func parseOne(t *testing.T, doc string) *yaml.Node {
	t.Helper()
	docs, err := Parse([]byte(doc))
	if err != nil || len(docs) != 1 {
		t.Fatalf("parse: %v (%d documents)", err, len(docs))
	}
	return docs[0]
}

func TestDropRepeatedKeysKeepsOneOfEqualValues(t *testing.T) {
	for _, c := range []struct {
		name, doc string
		want      []RepeatedKey
		after     string // the document once the repeats are gone
	}{
		{
			name:  "a vendor's RoleBinding",
			doc:   "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: x\napiVersion: rbac.authorization.k8s.io/v1\n",
			want:  []RepeatedKey{{"apiVersion", 1, 5}},
			after: "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: x\n",
		},
		{"quoting does not matter", "a: \"x\"\na: x\na: 'x'\n", []RepeatedKey{{"a", 1, 2}, {"a", 1, 3}}, "a: \"x\"\n"},
		{"a block scalar equals its quoted form", "a: |\n  x\na: \"x\\n\"\n", []RepeatedKey{{"a", 1, 3}}, "a: |\n  x\n"},
		{"null in any spelling", "a: ~\na: null\na:\n", []RepeatedKey{{"a", 1, 2}, {"a", 1, 3}}, "a: ~\n"},
		{"one boolean", "a: true\na: True\n", []RepeatedKey{{"a", 1, 2}}, "a: true\n"},
		{"a plain string every reader reads as one", "a: \"on-call\"\na: on-call\n", []RepeatedKey{{"a", 1, 2}}, "a: \"on-call\"\n"},
		{"mappings in any order", "m: {a: 1, b: [x, y]}\nm:\n  b: [x, y]\n  a: 1\n", []RepeatedKey{{"m", 1, 2}}, "m: {a: 1, b: [x, y]}\n"},
		{
			name:  "inner repeats first",
			doc:   "spec:\n  x: 1\n  x: 1\nspec:\n  x: 1\n",
			want:  []RepeatedKey{{"spec.x", 2, 3}, {"spec", 1, 4}},
			after: "spec:\n  x: 1\n",
		},
		{"in a list", "subjects:\n- name: a\n  name: a\n", []RepeatedKey{{"subjects[0].name", 2, 3}}, "subjects:\n- name: a\n"},
		{"an alias equals what it names", "a: &x {k: 1}\nb: *x\nb: {k: 1}\n", []RepeatedKey{{"b", 2, 3}}, "a: &x {k: 1}\nb: *x\n"},
		{"a key that is not plain is quoted", "metadata:\n  annotations:\n    a b: \"1\"\n    a b: \"1\"\n", []RepeatedKey{{`metadata.annotations["a b"]`, 3, 4}}, "metadata:\n  annotations:\n    a b: \"1\"\n"},
		{"a dotted key stays plain", "labels:\n  app.kubernetes.io/name: x\n  app.kubernetes.io/name: x\n", []RepeatedKey{{"labels.app.kubernetes.io/name", 2, 3}}, "labels:\n  app.kubernetes.io/name: x\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := parseOne(t, c.doc)
			got, err := DropRepeatedKeys(n)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("repeats: got %v, want %v", got, c.want)
			}
			out, err := yaml.String(n)
			if err != nil {
				t.Fatal(err)
			}
			if out != c.after {
				t.Errorf("document:\n%s\nwant:\n%s", out, c.after)
			}
		})
	}
}

func TestDropRepeatedKeysRefusesOtherValues(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"another scalar", "apiVersion: v1\nkind: X\napiVersion: apps/v1\n", `line 3: apiVersion is set twice with different values ("v1" on line 1, "apps/v1" on line 3)`},
		{"a string is not a number", "a: 1\na: \"1\"\n", `line 2: a is set twice with different values ("1" on line 2, and unquoted on line 1, where a YAML reader may take it for a boolean, a number or null)`},
		{"numbers as written", "a: 0x10\na: 16\n", `("0x10" on line 1, "16" on line 2)`},
		// YAML 1.1 (OLM v1's sigs.k8s.io/yaml) reads a plain yes as true.
		{"a YAML 1.1 boolean", "a: \"yes\"\na: yes\n", `("yes" on line 1, and unquoted on line 2, where`},
		{"a YAML 1.1 number", "a: 1_000\na: '1_000'\n", `("1_000" on line 2, and unquoted on line 1, where`},
		{"a list in another order", "l: [1, 2]\nl: [2, 1]\n", "line 2: l is set twice with different values (lines 1 and 2)"},
		{"a mapping with one more key", "m: {a: 1}\nm: {a: 1, b: 2}\n", "line 2: m is set twice with different values (lines 1 and 2)"},
		{"nested", "subjects:\n- kind: ServiceAccount\n  name: a\n  name: b\n", `line 4: subjects[0].name is set twice`},
		{"the third time", "a: x\na: x\na: y\n", `line 3: a is set twice with different values ("x" on line 1, "y" on line 3)`},
		{"in a large mapping", strings.Repeat("", 0) + "k0: 0\nk1: 1\nk2: 2\nk3: 3\nk4: 4\nk5: 5\nk6: 6\nk7: 7\nk8: 8\nk3: 33\n", `line 10: k3 is set twice with different values ("3" on line 4, "33" on line 10)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := DropRepeatedKeys(parseOne(t, c.doc))
			var ce *ConflictError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a conflict containing %q", err, c.want)
			}
		})
	}
}

// A large mapping goes through the index rather than a linear search: the
// pairs kept must stay in order, each key once.
func TestDropRepeatedKeysLargeMapping(t *testing.T) {
	var b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&b, "k%d: %d\n", i, i)
		if i%3 == 0 {
			fmt.Fprintf(&b, "k%d: %d\n", i/2, i/2)
		}
	}
	n := parseOne(t, b.String())
	got, err := DropRepeatedKeys(n)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 7 {
		t.Errorf("repeats: %v", got)
	}
	if len(n.Content) != 40 {
		t.Fatalf("kept %d nodes, want 40", len(n.Content))
	}
	for i := range 20 {
		if k := n.Content[2*i].Value; k != fmt.Sprintf("k%d", i) {
			t.Fatalf("key %d is %s", i, k)
		}
	}
}

func TestDropRepeatedKeysBoundsComparisons(t *testing.T) {
	doc := "a: [" + strings.Repeat("x, ", 100) + "x]\na: [" + strings.Repeat("x, ", 100) + "x]\n"
	d := dropper{budget: 50, index: map[string]int{}}
	if err := d.walk(parseOne(t, doc)); !errors.Is(err, errCompareBudget) {
		t.Fatalf("got %v, want the budget error", err)
	}
	d = dropper{budget: 500, index: map[string]int{}}
	if err := d.walk(parseOne(t, doc)); err != nil || len(d.found) != 1 {
		t.Fatalf("within the budget: %v, %v", err, d.found)
	}
}

// Whatever parses, DropRepeatedKeys neither panics nor leaves a mapping
// with a key twice when it succeeds; a conflict names two lines.
func FuzzDropRepeatedKeys(f *testing.F) {
	for _, s := range []string{
		"a: 1\na: 1\n",
		"a: &x {k: 1, k: 1}\nb: *x\nb: {k: 1}\n",
		"<<: {a: 1}\n<<: {a: 1}\na: 2\n",
		"? [a]\n: 1\n? [a]\n: 1\n",
		"*x: 1\n",
		"[{a: 1, a: 2}]",
		"a: yes\na: \"yes\"\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		docs, err := Parse([]byte(s))
		if err != nil {
			return
		}
		_, err = DropRepeatedKeys(docs...)
		var ce *ConflictError
		if errors.As(err, &ce) {
			if ce.First == 0 || ce.Line == 0 {
				t.Fatalf("a conflict without its lines: %v", err)
			}
			return
		}
		if err != nil {
			return
		}
		for _, d := range docs {
			if d != nil {
				noRepeats(t, d, map[*yaml.Node]bool{})
			}
		}
	})
}

func noRepeats(t *testing.T, n *yaml.Node, seen map[*yaml.Node]bool) {
	if seen[n] {
		return
	}
	seen[n] = true
	if n.Kind == yaml.MappingNode {
		keys := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k, ok := keyText(n.Content[i]); ok {
				if keys[k] {
					t.Fatalf("line %d: %q is still repeated", n.Content[i].Line, k)
				}
				keys[k] = true
			}
		}
	}
	for _, c := range n.Content {
		noRepeats(t, c, seen)
	}
}
