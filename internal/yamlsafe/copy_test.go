package yamlsafe

import (
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const copyDoc = `# head
apiVersion: v1
kind: ConfigMap
metadata:
  name: a # line
  annotations: {x: "1", y: 'two'}
data:
  list: [1, 2, {k: v}]
  block: |
    text
  anchored: &a {p: q}
  alias: *a
`

// CopyTree copies as CopyYNode does: the same tree, no node shared.
func TestCopyTreeIsCopyYNode(t *testing.T) {
	n, err := yaml.Parse(copyDoc)
	if err != nil {
		t.Fatal(err)
	}
	src := n.YNode()
	got, want := CopyTree(src), yaml.CopyYNode(src)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("CopyTree differs from CopyYNode:\n%s\n%s", yaml.NewRNode(got).MustString(), yaml.NewRNode(want).MustString())
	}
	seen := map[*yaml.Node]bool{}
	var walk func(*yaml.Node)
	walk = func(x *yaml.Node) {
		seen[x] = true
		for _, c := range x.Content {
			walk(c)
		}
	}
	walk(src)
	var check func(*yaml.Node)
	check = func(x *yaml.Node) {
		if seen[x] {
			t.Fatalf("node %q is shared with the original", x.Value)
		}
		for _, c := range x.Content {
			check(c)
		}
	}
	check(got)
}

// Appending to one node's Content (a new key) leaves every other node of
// the copy, and the original, as they were.
func TestCopyTreeAppendStaysInPlace(t *testing.T) {
	n, err := yaml.Parse(copyDoc)
	if err != nil {
		t.Fatal(err)
	}
	before := n.MustString()
	c := yaml.NewRNode(CopyTree(n.YNode()))
	want := c.MustString()
	meta := c.Field("metadata").Value.YNode()
	meta.Content = append(meta.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "labels"}, &yaml.Node{Kind: yaml.MappingNode})
	if err := c.PipeE(yaml.SetAnnotation("z", "3")); err != nil {
		t.Fatal(err)
	}
	got := c.MustString()
	for _, s := range []string{"  labels: {}\n", "z: '3'}", "data:\n  list: [1, 2, {k: v}]\n"} {
		if !strings.Contains(got, s) {
			t.Errorf("after appending, the copy lacks %q:\n%s\n(was:\n%s)", s, got, want)
		}
	}
	if n.MustString() != before {
		t.Errorf("the original changed:\n%s", n.MustString())
	}
}
