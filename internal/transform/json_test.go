package transform

import (
	"errors"
	"reflect"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/transform/jsontest"
)

// sameAsPrinted checks that the JSON of n reads, to the repo-server, as the
// very object Serialize's YAML of n does.
func sameAsPrinted(t *testing.T, n *yaml.RNode, js string) {
	t.Helper()
	docs, err := Serialize([]*yaml.RNode{n})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := jsontest.AsJSON(t, js), jsontest.AsRepoServerReads(t, docs[0]); !reflect.DeepEqual(a, b) {
		t.Errorf("JSON reads %#v, the YAML %#v\n%s", a, b, docs[0])
	}
	// The repo-server reads JSON with the same YAML 1.1 reader too.
	if a, b := jsontest.AsRepoServerReads(t, js), jsontest.AsRepoServerReads(t, docs[0]); !reflect.DeepEqual(a, b) {
		t.Errorf("repo-server reads the JSON as %#v, the YAML as %#v", a, b)
	}
}

func TestObjectJSON(t *testing.T) {
	for _, c := range []struct {
		name, yaml, want string
	}{
		{"empty map and list", "a: {}\nb: []\nc: {d: []}\n", `{"a":{},"b":[],"c":{"d":[]}}`},
		{"quoted numbers stay strings", "port: \"8080\"\nv: '1.0'\nb: \"true\"\nnil: \"null\"\nanswer: \"yes\"\n", `{"port":"8080","v":"1.0","b":"true","nil":"null","answer":"yes"}`},
		{"plain scalars", "i: 42\nneg: -3\nf: 1.5\ne: 12e3\nt: true\nT: True\nnothing: null\ntilde: ~\nempty:\n", `{"i":42,"neg":-3,"f":1.5,"e":12e3,"t":true,"T":true,"nothing":null,"tilde":null,"empty":null}`},
		{"key order kept", "z: 1\na: 2\nm: 3\n", `{"z":1,"a":2,"m":3}`},
		{"date stays the text", "d: 2024-01-02\n", `{"d":"2024-01-02"}`},
		{"block scalars", "lit: |\n  line 1\n  line 2\nfold: >\n  a\n  b\n", `{"lit":"line 1\nline 2\n","fold":"a b\n"}`},
		{"escapes", "s: \"quote \\\" back \\\\ tab \\t nel \\N ls \\L del \\x7f bell \\a <&>\"\n", `{"s":"quote \" back \\ tab \t nel \u0085 ls \u2028 del \u007f bell \u0007 <&>"}`},
		{"unicode kept", "s: héllo 世界 🙂\n", `{"s":"héllo 世界 🙂"}`},
		{"words that only start like YAML 1.1 booleans", "type: yesterday\nt: tomato\nnn: nope\n", `{"type":"yesterday","t":"tomato","nn":"nope"}`},
		{"internal annotations left out", "metadata:\n  name: x\n  annotations:\n    " + CRMarker + ": \"true\"\n", `{"metadata":{"name":"x"}}`},
		{"other annotations kept", "metadata:\n  annotations:\n    a: b\n    " + CRMarker + ": \"true\"\n", `{"metadata":{"annotations":{"a":"b"}}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := yaml.MustParse(c.yaml)
			got, err := objectJSON(n)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
			sameAsPrinted(t, n, got)
		})
	}
	// What YAML 1.1 and 1.2 read differently, or JSON cannot say, stays YAML.
	for _, y := range []string{
		"a: yes\n", "a: on\n", "a: off\n", "a: y\n", "a: NO\n", "a: Off\n", "a: 0o17\n", "a: 017\n", "a: 0x1F\n", "a: 1_000\n", "a: +1\n",
		"a: .5\n", "a: .inf\n", "a: 1.\n", "yes: 1\n", "1: a\n", "a: &x 1\nb: *x\n", "a: !!str 1\n", "a: !custom x\n",
		"<<: {a: 1}\n", "- a\n", "a: !!binary aGVsbG8=\n",
	} {
		if js, err := objectJSON(yaml.MustParse(y)); !errors.Is(err, errKeepYAML) {
			t.Errorf("%q: converted to %s (%v), want it kept as YAML", y, js, err)
		}
	}
}

// TestObjectJSONFollowsThePrinter: nodes built in memory carry tags the YAML
// printer writes differently from how they look (a !!str "true" is printed
// quoted); the JSON says what the printed YAML says.
func TestObjectJSONFollowsThePrinter(t *testing.T) {
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: v} }
	tagged := func(tag, v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: v} }
	obj := func(kv ...*yaml.Node) *yaml.RNode {
		return yaml.NewRNode(&yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap, Content: kv})
	}
	for _, c := range []struct {
		name string
		n    *yaml.RNode
		want string // "" means kept as YAML
	}{
		{"string that looks boolean", obj(str("b"), str("true")), `{"b":"true"}`},
		{"string that looks numeric", obj(str("port"), str("8080")), `{"port":"8080"}`},
		{"string that looks null", obj(str("e"), str("")), `{"e":""}`},
		{"key that looks boolean", obj(str("true"), str("x")), `{"true":"x"}`},
		{"multi-line plain string", obj(str("s"), str("a\nb")), `{"s":"a\nb"}`},
		{"untagged number", obj(str("i"), &yaml.Node{Kind: yaml.ScalarNode, Value: "7"}), `{"i":7}`},
		{"string YAML 1.1 reads as boolean", obj(str("a"), str("yes")), ""},
		{"int tag on a word", obj(str("i"), tagged(yaml.NodeTagInt, "seven")), ""},
		{"bool tag on yes", obj(str("b"), tagged(yaml.NodeTagBool, "yes")), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := objectJSON(c.n)
			if c.want == "" {
				if !errors.Is(err, errKeepYAML) {
					t.Errorf("converted to %s (%v), want it kept as YAML", got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %s (%v), want %s", got, err, c.want)
			}
			sameAsPrinted(t, c.n, got)
		})
	}
}

func TestSerializeJSON(t *testing.T) {
	nodes := []*yaml.RNode{yaml.MustParse("a: 1\n"), yaml.MustParse("a: yes\n")}
	docs, err := Serialize(nodes)
	if err != nil {
		t.Fatal(err)
	}
	out, kept := SerializeJSON(nodes, docs)
	if kept != 1 || out[0] != `{"a":1}` || out[1] != docs[1] {
		t.Errorf("SerializeJSON: %q, %d kept", out, kept)
	}
}
