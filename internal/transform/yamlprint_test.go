package transform

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// printerValues are scalars at the edges of yaml.v3's style rules: indicators
// first, inside and last, spaces and breaks at either end, YAML 1.1 words,
// numbers, tabs, control, C1, BOM and astral characters, long keys.
var printerValues = []string{
	"", "a", " a", "a ", "a b", "a  b", "a\n", "a\nb", "a\n\n", "\n", "\na", "a\n b", "a \nb", "a\n\n\nb\n",
	" a\nb", "\n\n", "a\n ", "- a", "-a", "-", "--- a", "...", ": a", ":a", "a:", "a: b", "a:b", "? a", "?a",
	"#a", "a #b", "a#b", "a,b", "[a]", "{a}", "&a", "*a", "!a", "|a", ">a", "'a'", `"a"`, "%a", "@a", "`a",
	"yes", "no", "on", "true", "True", "null", "~", "123", "0x1F", "1e3", "1_000", ".inf", "2024-01-02",
	"a\tb", "\tb", "a\x01b", "\x00", "a\x7fb", "é", "a\u00a0b", "\u0085", "a\u2028b", "\ufeffa", "a\ufeff",
	"\U0001F600", "日本", "a'b", `a"b`, `a\b`, "a\rb", "\x1b[0m", "\ufffe",
	strings.Repeat("k", 128), strings.Repeat("k", 129), strings.Repeat("x ", 100),
}

var printerStyles = []yaml.Style{0, yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle, yaml.LiteralStyle, yaml.FoldedStyle, yaml.TaggedStyle, yaml.FlowStyle}

var printerTags = []string{"", yaml.NodeTagString, yaml.NodeTagInt, yaml.NodeTagBool, yaml.NodeTagNull, "tag:yaml.org,2002:str", "!custom"}

// Every value, style and tag as a key, a mapping value and a sequence item
// (nested in sequences and mappings): the printer writes what kyaml's
// encoder writes, or leaves the object to it.
func TestPrintYAMLMatchesEncoder(t *testing.T) {
	printed := 0
	for _, v := range printerValues {
		for _, style := range printerStyles {
			for _, tag := range printerTags {
				s := func() *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v, Style: style, Tag: tag} }
				str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v, Tag: yaml.NodeTagString} }
				seq := func(c ...*yaml.Node) *yaml.Node {
					return &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq, Content: c}
				}
				mapping := func(c ...*yaml.Node) *yaml.Node {
					return &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap, Content: c}
				}
				root := mapping(
					str("key"), s(),
					s(), str("v"),
					str("list"), seq(s(), seq(s(), s()), mapping(str("k"), s(), str("l"), seq(s())), seq(), mapping()),
					str("nested"), mapping(str("deeper"), mapping(str("k"), s(), s(), seq(mapping(s(), s())))),
					str("last"), s(),
				)
				ok, err := VerifyPrinter(yaml.NewRNode(root))
				if err != nil {
					t.Errorf("value %q style %d tag %q: %v", v, style, tag, err)
				}
				if ok {
					printed++
				}
			}
		}
	}
	// Most combinations are the printer's (not all left to the encoder).
	if total := len(printerValues) * len(printerStyles) * len(printerTags); printed < total/4 {
		t.Errorf("the printer printed %d of %d objects", printed, total)
	}
}

func TestPrintYAMLFallsBack(t *testing.T) {
	for _, doc := range []string{
		"a: 1\n# foot\n",
		"a:\n- # item head\n  1\n",
		"a: 1 # line\n",
		"a: &x 1\nb: *x\n",
		"a: {b: 1}\n",
		"a: [1, 2]\n",
		"? [a]\n: 1\n",
		"a: !custom 1\n",
		"a: !!int x\n",
	} {
		n := yaml.MustParse(doc)
		if printed, err := VerifyPrinter(n); err != nil || printed {
			t.Errorf("%q: printed %v, %v; want it left to the encoder", doc, printed, err)
		}
	}
}

// FuzzPrintYAML: on any YAML, the printer agrees with the encoder.
func FuzzPrintYAML(f *testing.F) {
	for _, doc := range []string{
		"a: 1\nb: [x, {y: z}]\nc: |\n  l1\n   l2\n",
		"k: \"\\t\\u0085 \\ufeff\"\nl: 'it''s'\nm:\n- - a\n  - b\n- {}\n- []\n",
		"x: >-\n  a\n    b\ny: \"\"\nz: ~\n'': yes\n",
		"#\n# licence\n#\n\n# Generated\napiVersion: v1\n# key\nkind: X\nspec:\n  # nested\n  a: 1\n  l:\n  - # in item\n    k: v\n",
		"spec:\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        description: |-\n          A\n\n          B\n        type: object\n",
	} {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		nodes, err := (&kio.ByteReader{Reader: strings.NewReader(doc), OmitReaderAnnotations: true}).Read()
		if err != nil {
			return
		}
		for _, n := range nodes {
			if n.YNode().Kind != yaml.MappingNode {
				continue // objects are mappings (and kyaml's annotation getters expect one)
			}
			if _, err := VerifyPrinter(n); err != nil {
				t.Errorf("%q: %v", doc, err)
			}
		}
	})
}

// plainScalar's fast path agrees with the encoder on every value it takes:
// all strings of one and two characters from its allow-lists and others,
// three from a smaller set, YAML's words and numbers, under each tag, as a
// value and as a key.
func TestPlainScalarAgrees(t *testing.T) {
	alphabet := "aZ09_/ .-,()=+;'\"#:!&*?|>%@`[]{}\t~"
	values := []string{"true", "True", "TRUE", "false", "null", "Null", "NULL", "yes", "no", "on", "off", "y", "n",
		"Yes", "NO", "On", "OFF", "inf", "nan", "1e3", "1_000", "0x1F", "0o17", "017", "1.30.3", "2024-01-02", "12:30",
		"1.5", "-1", "+1", "v1", "abcdef", "false1", "nulls", "trueish", "a b c", "a  b", "a'b", `a"b`, "a (b)"}
	small := "a0 .-'"
	for _, a := range alphabet {
		values = append(values, string(a))
		for _, b := range alphabet {
			values = append(values, string(a)+string(b))
		}
	}
	for _, a := range small {
		for _, b := range small {
			for _, c := range small {
				values = append(values, string(a)+string(b)+string(c))
			}
		}
	}
	took := 0
	for _, v := range values {
		for _, tag := range []string{"", yaml.NodeTagString, yaml.NodeTagInt, yaml.NodeTagFloat, yaml.NodeTagBool, yaml.NodeTagNull, "tag:yaml.org,2002:str"} {
			n := &yaml.Node{Kind: yaml.ScalarNode, Value: v, Tag: tag}
			if !plainScalar(n) {
				continue
			}
			took++
			other := &yaml.Node{Kind: yaml.ScalarNode, Value: "k"}
			for _, c := range []struct {
				doc  *yaml.Node
				want string
			}{
				{&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{other, n}}, "k: " + v + "\n"},
				{&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{n, other}}, v + ": k\n"},
			} {
				got, err := yaml.String(c.doc)
				if err != nil || got != c.want {
					t.Errorf("%q tagged %q: the encoder prints %q (%v), the fast path %q", v, tag, got, err, c.want)
				}
			}
		}
	}
	if took < 400 {
		t.Errorf("the fast path took %d values", took)
	}
}

// Head comments of the object and of keys (licence headers, generator
// notes) are the printer's too.
func TestPrintYAMLHeadComments(t *testing.T) {
	for _, doc := range []string{
		"# Generated by a tool\napiVersion: v1\nkind: ConfigMap\n",
		"#\n# Copyright\n#\n\n#   indented\napiVersion: v1\nkind: X\n",
		"a: 1\n# about b\n#\n# more\nb:\n  # nested\n  c: |\n    x\n  # after a block\n  d: 2\nl:\n- k: v\n  # second key\n  m: w\n",
	} {
		n := yaml.MustParse(doc)
		printed, err := VerifyPrinter(n)
		if err != nil {
			t.Errorf("%q: %v", doc, err)
		} else if !printed {
			t.Errorf("%q: left to the encoder", doc)
		}
	}
}

// plainTag's shortcut agrees with the resolver: every value of one to three
// letters, YAML's words in mixed case, and longer values starting with them.
func TestPlainTagAgrees(t *testing.T) {
	letters := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	var values []string
	for _, a := range letters {
		values = append(values, string(a))
		for _, b := range letters {
			values = append(values, string(a)+string(b))
			for _, c := range letters {
				values = append(values, string(a)+string(b)+string(c))
			}
		}
	}
	for _, w := range []string{"null", "true", "false", "yes", "off", "nan", "inf", "Infinity", "NaN"} {
		values = append(values, w, strings.ToUpper(w), strings.ToUpper(w[:1])+w[1:], w+"s", w+"1", w+".5", w+"_0")
	}
	for _, v := range values {
		if got, want := plainTag(v), (&yaml.Node{Kind: yaml.ScalarNode, Value: v}).ShortTag(); got != want {
			t.Errorf("%q: %s, want %s", v, got, want)
		}
	}
}

// An object with more scalars for the encoder than one batch holds, of
// every kind that splits a batch's output (empty values, block scalars with
// kept final breaks and leading spaces, quoted values, long keys): each
// scalar gets its own part, and the object prints as the encoder prints it.
// (Keys across lines are complex keys, left to the encoder.)
func TestPrintYAMLBatches(t *testing.T) {
	kinds := []string{"", "a: %d", "- %d", "%d\n", "  %d\nb\n\n", "x\n-%d\n", "'%d'", "%d #", strings.Repeat("k", 70) + "%d"}
	root := &yaml.Node{Kind: yaml.MappingNode}
	list := &yaml.Node{Kind: yaml.SequenceNode}
	for i := range 3 * encodeBatch {
		v := kinds[i%len(kinds)]
		if strings.Contains(v, "%d") {
			v = fmt.Sprintf(v, i)
		}
		s := &yaml.Node{Kind: yaml.ScalarNode, Value: v, Tag: yaml.NodeTagString}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: fmt.Sprintf("%s key %d", strings.ReplaceAll(v, "\n", "|"), i), Tag: yaml.NodeTagString}, s)
		list.Content = append(list.Content, s)
	}
	root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "list"}, list)
	printed, err := VerifyPrinter(yaml.NewRNode(root))
	if err != nil {
		t.Fatal(err)
	}
	if !printed {
		t.Fatal("left to the encoder")
	}
}
