package tenancy

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/editdist"
)

// decoder walks the policy's YAML nodes against the format, collecting
// every problem with its line and field path.
type decoder struct {
	dir      string
	problems []string
}

// maxProblemsShown caps the problems one error lists; the rest are counted.
const maxProblemsShown = 10

func (d *decoder) fail(n *yaml.Node, at, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if at != "" {
		msg = at + ": " + msg
	}
	if n != nil && n.Line > 0 {
		msg = fmt.Sprintf("line %d: %s", n.Line, msg)
	}
	d.problems = append(d.problems, msg)
}

// err is every problem in one line, nil without any.
func (d *decoder) err(what string) error {
	n := len(d.problems)
	if n == 0 {
		return nil
	}
	shown, more := d.problems, ""
	if n > maxProblemsShown {
		shown, more = shown[:maxProblemsShown], fmt.Sprintf("; and %d more problems", n-maxProblemsShown)
	}
	return fmt.Errorf("%s: %s%s", what, strings.Join(shown, "; "), more)
}

// fields returns a mapping's values by key, refusing unknown and repeated
// keys (naming the known key a typo was probably meant to be).
func (d *decoder) fields(n *yaml.Node, at string, known ...string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n.Kind != yaml.MappingNode {
		d.fail(n, at, "expected a map, got %s", describe(n))
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.fail(k, at, "a key must be a plain word")
			continue
		}
		p := k.Value
		if at != "" {
			p = at + "." + k.Value
		}
		if _, dup := out[k.Value]; dup {
			d.fail(k, echo.Short(p), "set twice: remove one")
			continue
		}
		if !contains(known, k.Value) {
			hint := fmt.Sprintf(" (known: %s)", strings.Join(known, ", "))
			if best := editdist.Nearest(k.Value, known); best != "" {
				hint = fmt.Sprintf(": did you mean %q?", best)
			}
			d.fail(k, "", "unknown field %s%s", echo.Quote(p), hint)
			continue
		}
		for v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		out[k.Value] = v
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// constant checks a required field that has one allowed value.
func (d *decoder) constant(doc *yaml.Node, top map[string]*yaml.Node, field, want string) {
	v, ok := d.str(top[field], field)
	switch {
	case !ok && top[field] == nil:
		d.fail(doc, field, "is required: write %s: %s", field, want)
	case ok && v != want:
		d.fail(top[field], field, "%s is not known: write %s", echo.Quote(v), want)
	}
}

func (d *decoder) str(n *yaml.Node, at string) (string, bool) {
	if n == nil {
		return "", false
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		d.fail(n, at, "expected a string, got %s", describe(n))
		return "", false
	}
	return n.Value, true
}

func (d *decoder) boolean(n *yaml.Node, at string) (bool, bool) {
	if n == nil {
		return false, false
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		d.fail(n, at, "expected true or false, got %s", describe(n))
		return false, false
	}
	return strings.EqualFold(n.Value, "true"), true
}

func (d *decoder) list(n *yaml.Node, at string) []*yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(n, at, "expected a list, got %s", describe(n))
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

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	}
	if n.ShortTag() == "!!null" {
		return "nothing"
	}
	return echo.Quote(n.Value)
}
