// Package yamlstrict walks a parsed YAML document (yamlsafe.Parse) against a
// file format the admin writes by hand (the trust and tenancy policies):
// unknown keys (with the known one a typo was probably meant to be),
// repeated keys and wrong types are problems naming their line and field
// path, collected so that one error lists them all. It decides nothing
// about what the values mean: each format's decoder does.
package yamlstrict

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/editdist"
	"github.com/olm-cmp/olm-cmp/internal/yamlsafe"
)

// MaxProblemsShown caps the problems one error lists: the rest are counted.
const MaxProblemsShown = 10

// Decoder collects the problems of one document.
type Decoder struct {
	Problems []string
}

// Fail records a problem of node n (its line, when known) at field path at.
func (d *Decoder) Fail(n *yaml.Node, at, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if at != "" {
		msg = at + ": " + msg
	}
	if n != nil && n.Line > 0 {
		msg = fmt.Sprintf("line %d: %s", n.Line, msg)
	}
	d.Problems = append(d.Problems, msg)
}

// Err is every problem in one line after what ("trust policy x.yaml"), at
// most MaxProblemsShown of them and the count of the rest; nil without any.
func (d *Decoder) Err(what string) error {
	n := len(d.Problems)
	if n == 0 {
		return nil
	}
	shown, more := d.Problems, ""
	if n > MaxProblemsShown {
		shown, more = shown[:MaxProblemsShown], fmt.Sprintf("; and %d more problems", n-MaxProblemsShown)
	}
	return fmt.Errorf("%s: %s%s", what, strings.Join(shown, "; "), more)
}

// Fields returns a mapping's values by key (aliases followed), refusing
// unknown and repeated keys.
func (d *Decoder) Fields(n *yaml.Node, at string, known ...string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n.Kind != yaml.MappingNode {
		d.Fail(n, at, "expected a map, got %s", Describe(n))
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.Fail(k, at, "a key must be a plain word")
			continue
		}
		p := k.Value
		if at != "" {
			p = at + "." + k.Value
		}
		if _, dup := out[k.Value]; dup {
			d.Fail(k, p, "set twice: remove one")
			continue
		}
		if !slices.Contains(known, k.Value) {
			hint := fmt.Sprintf(" (known: %s)", strings.Join(known, ", "))
			if best := editdist.Nearest(k.Value, known); best != "" {
				hint = fmt.Sprintf(": did you mean %q?", best)
			}
			d.Fail(k, "", "unknown field %s%s", echo.Quote(p), hint)
			continue
		}
		for v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		out[k.Value] = v
	}
	return out
}

// Str reads a string; false when n is nil (absent) or not a string.
func (d *Decoder) Str(n *yaml.Node, at string) (string, bool) {
	if n == nil {
		return "", false
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		d.Fail(n, at, "expected a string, got %s", Describe(n))
		return "", false
	}
	return n.Value, true
}

// Bool reads true or false; false, false when n is nil or no boolean.
func (d *Decoder) Bool(n *yaml.Node, at string) (bool, bool) {
	if n == nil {
		return false, false
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		d.Fail(n, at, "expected true or false, got %s", Describe(n))
		return false, false
	}
	return strings.EqualFold(n.Value, "true"), true
}

// List reads a sequence's items, an item that is an alias of an anchored
// one read as what it names (- *base), so it is judged (and found a
// duplicate) like the original; nil when n is nil or no list.
func (d *Decoder) List(n *yaml.Node, at string) []*yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.Fail(n, at, "expected a list, got %s", Describe(n))
		return nil
	}
	out := make([]*yaml.Node, len(n.Content))
	for i, item := range n.Content {
		for item.Kind == yaml.AliasNode && item.Alias != nil {
			item = item.Alias
		}
		out[i] = item
	}
	return out
}

// Unique decodes each of items (a list at field path at) with decode, which
// returns nil for an item it failed, and keeps the first item of each key:
// a later one fails at at[i].field as "<key> is also the <field> of the
// <noun> at line <n>: merge them". key gives an item's key and line.
func Unique[T any](d *Decoder, items []*yaml.Node, at, field, noun string, decode func(n *yaml.Node, at string) *T, key func(*T) (string, int)) []*T {
	var out []*T
	seen := map[string]int{}
	for i, item := range items {
		v := decode(item, fmt.Sprintf("%s[%d]", at, i))
		if v == nil {
			continue
		}
		k, line := key(v)
		if first, dup := seen[k]; dup {
			d.Fail(item, fmt.Sprintf("%s[%d].%s", at, i, field), "%s is also the %s of the %s at line %d: merge them", echo.Quote(k), field, noun, first)
			continue
		}
		seen[k] = line
		out = append(out, v)
	}
	return out
}

// Describe names what a node is, for "expected …, got …".
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "nothing"
		}
		return echo.Quote(n.Value)
	}
	return "something else"
}

// Document parses data, a file of one YAML document within yamlsafe's
// bounds, for the messages of what ("trust policy trust.yaml"): a file over
// max bytes, YAML that does not parse, a second document, and an empty file
// (empty says what to write) are each one line.
func Document(data []byte, what string, max int, empty string) (*yaml.Node, error) {
	if len(data) > max {
		return nil, fmt.Errorf("%s: larger than %d bytes", what, max)
	}
	docs, err := yamlsafe.Parse(data)
	if err != nil {
		msg := strings.Join(strings.Fields(err.Error()), " ")
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		return nil, fmt.Errorf("%s: %s", what, msg)
	}
	var doc *yaml.Node
	for _, n := range docs {
		if n == nil {
			continue
		}
		if doc != nil {
			return nil, fmt.Errorf("%s: line %d: a second YAML document: the policy is one document", what, n.Line)
		}
		doc = n
	}
	if doc == nil {
		return nil, fmt.Errorf("%s: the file is empty: %s", what, empty)
	}
	return doc, nil
}
