package yamlsafe

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// RepeatedKey is a mapping key written more than once with the same value
// (DropRepeatedKeys): Path names it ("metadata.labels.app",
// "subjects[0].name"), First is the line of its first occurrence, Line that
// of the repeat that was dropped.
type RepeatedKey struct {
	Path        string
	First, Line int
}

// ConflictError is a mapping key written twice with different values.
type ConflictError struct {
	Path        string
	First, Line int
	// Values are the two values, quoted, when both are scalars; empty
	// otherwise (a mapping or a list is not repeated in a message).
	Values [2]string
	// Unquoted is the line of the one unquoted when the two scalars are
	// the same text, once quoted and once not (0 otherwise): `yes` is a
	// boolean to YAML 1.1 readers, `1` a number to every reader.
	Unquoted int
}

func (e *ConflictError) Error() string {
	if e.Unquoted != 0 {
		quoted := e.First
		if quoted == e.Unquoted {
			quoted = e.Line
		}
		return fmt.Sprintf("line %d: %s is set twice with different values (%s on line %d, and unquoted on line %d, where a YAML reader may take it for a boolean, a number or null)", e.Line, e.Path, e.Values[0], quoted, e.Unquoted)
	}
	if e.Values[0] != "" {
		return fmt.Sprintf("line %d: %s is set twice with different values (%s on line %d, %s on line %d)", e.Line, e.Path, e.Values[0], e.First, e.Values[1], e.Line)
	}
	return fmt.Sprintf("line %d: %s is set twice with different values (lines %d and %d)", e.Line, e.Path, e.First, e.Line)
}

// DropRepeatedKeys removes, in the trees under docs, every mapping key written
// again with the same value as its first occurrence, and returns each one
// it removed in document order; a key written again with another value is
// a *ConflictError, and the documents are then left part-way.
//
// The values are compared as the YAML values they stand for, not as text:
// quoting and block styles do not matter (but a plain `yes` is a boolean
// to YAML 1.1 readers, OLM v1's among them, and differs from "yes"), any
// spelling of null equals any other, true/True/TRUE are one boolean;
// numbers and other scalars must be written alike (0x10 and 16 differ: YAML
// 1.1 and 1.2 readers do not agree on every spelling, and a repeat is
// accepted only when both read one value). Mappings are equal when they hold the same keys with equal
// values, in any order; lists when their items are equal in order. Aliases
// are followed. Repeats nested inside a value are resolved first, bottom
// up, so two copies of a mapping that differ only by a key repeated with
// its value inside one of them are equal.
//
// Keys are told apart by their text, as kyaml and the JSON the API server
// reads tell them apart; keys that are not scalars are left alone. The
// documents must have passed Check (no alias cycles, bounded size); the
// comparisons are bounded too, by the nodes DefaultLimits allows in one
// document, for all of docs (one file's; nil ones are skipped) together.
func DropRepeatedKeys(docs ...*yaml.Node) ([]RepeatedKey, error) {
	d := dropper{budget: DefaultLimits.MaxNodes, index: map[string]int{}}
	for _, n := range docs {
		if n == nil {
			continue
		}
		if err := d.walk(n); err != nil {
			return nil, err
		}
	}
	return d.found, nil
}

// errCompareBudget ends comparisons that would cost more than the walk's
// budget: only a hostile file repeats keys with values that large.
var errCompareBudget = errors.New("keys repeated with values too large to compare (over the YAML node limit): not a manifest a bundle should hold")

type dropper struct {
	// path leads to the node being walked: a mapping's key, or a list's
	// index. Written out only for a repeat (pathTo): most files have none.
	path   []step
	found  []RepeatedKey
	budget int            // nodes the comparisons may still visit
	index  map[string]int // key → position, reused for each large mapping
}

// step is one step of a path: key, or else index.
type step struct {
	key   *yaml.Node
	index int
}

func (d *dropper) walk(n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if err := d.walk(c); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			d.path = append(d.path, step{index: i})
			err := d.walk(c)
			d.path = d.path[:len(d.path)-1]
			if err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		// Values first: a repeat inside a repeated value is resolved before
		// the two values are compared.
		for i := 0; i+1 < len(n.Content); i += 2 {
			d.path = append(d.path, step{key: n.Content[i]})
			err := d.walk(n.Content[i+1])
			d.path = d.path[:len(d.path)-1]
			if err != nil {
				return err
			}
		}
		return d.mapping(n)
	}
	// Aliases are not walked: what they name is walked where it is written.
	return nil
}

// mapping drops the repeated keys of the mapping n, keeping each key's
// first occurrence in its place.
func (d *dropper) mapping(n *yaml.Node) error {
	pairs := len(n.Content) / 2
	if pairs < 2 {
		return nil
	}
	small := pairs <= 8 // most mappings: a linear search, no map
	if !small {
		clear(d.index)
	}
	// out holds the pairs kept so far. It shares n.Content's array and
	// never passes the pair being read, so nothing unread is overwritten.
	out := n.Content[:0]
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		j := -1 // the kept occurrence's position in out
		if text, ok := keyText(k); ok {
			j = d.kept(out, text, small)
			if j < 0 && !small {
				d.index[text] = len(out)
			}
		}
		if j < 0 {
			out = append(out, k, v)
			continue
		}
		fk, fv := out[j], out[j+1]
		same, err := d.same(fv, v)
		if err != nil {
			return err
		}
		if !same {
			e := &ConflictError{Path: d.pathTo(k), First: fk.Line, Line: k.Line}
			if a, b := resolve(fv), resolve(v); a.Kind == yaml.ScalarNode && b.Kind == yaml.ScalarNode {
				e.Values = [2]string{echo.Quote(a.Value), echo.Quote(b.Value)}
				if a.Value == b.Value && plain(a) != plain(b) {
					e.Unquoted = k.Line
					if plain(a) {
						e.Unquoted = fk.Line
					}
				}
			}
			return e
		}
		d.found = append(d.found, RepeatedKey{Path: d.pathTo(k), First: fk.Line, Line: k.Line})
	}
	clear(n.Content[len(out):])
	n.Content = out
	return nil
}

// kept is the position in out of the key text, or -1.
func (d *dropper) kept(out []*yaml.Node, text string, small bool) int {
	if !small {
		if j, ok := d.index[text]; ok {
			return j
		}
		return -1
	}
	for j := 0; j+1 < len(out); j += 2 {
		if kj, ok := keyText(out[j]); ok && kj == text {
			return j
		}
	}
	return -1
}

// same reports whether a and b stand for the same YAML value (see
// DropRepeatedKeys).
func (d *dropper) same(a, b *yaml.Node) (bool, error) {
	a, b = resolve(a), resolve(b)
	if d.budget--; d.budget < 0 {
		return false, errCompareBudget
	}
	if a == b {
		return true, nil
	}
	if a.Kind != b.Kind {
		return false, nil
	}
	switch a.Kind {
	case yaml.ScalarNode:
		return sameScalar(a, b), nil
	case yaml.SequenceNode:
		if len(a.Content) != len(b.Content) {
			return false, nil
		}
		for i := range a.Content {
			if ok, err := d.same(a.Content[i], b.Content[i]); !ok || err != nil {
				return false, err
			}
		}
		return true, nil
	case yaml.MappingNode:
		if len(a.Content) != len(b.Content) {
			return false, nil
		}
		// Both mappings' own repeats are gone (walked first), so equal
		// sizes and every key of a found in b with an equal value is
		// equality. Mappings compared here are values, small in practice;
		// a linear search each keeps the index map free for mapping().
		for i := 0; i+1 < len(a.Content); i += 2 {
			k, ok := keyText(a.Content[i])
			if !ok {
				return false, nil
			}
			found := false
			for j := 0; j+1 < len(b.Content); j += 2 {
				if d.budget--; d.budget < 0 {
					return false, errCompareBudget
				}
				if kb, ok := keyText(b.Content[j]); ok && kb == k {
					if ok, err := d.same(a.Content[i+1], b.Content[j+1]); !ok || err != nil {
						return false, err
					}
					found = true
					break
				}
			}
			if !found {
				return false, nil
			}
		}
		return true, nil
	}
	return false, nil
}

// sameScalar compares two scalars by what they resolve to, in YAML 1.2
// (kyaml's reader, olm-cmp's) and in YAML 1.1 (sigs.k8s.io/yaml's, OLM
// v1's): `yes` and "yes" are one string to the first, a boolean and a
// string to the second.
func sameScalar(a, b *yaml.Node) bool {
	ta, tb := a.ShortTag(), b.ShortTag()
	if ta != tb {
		return false
	}
	switch ta {
	case "!!null":
		return true
	case "!!bool":
		return strings.EqualFold(a.Value, b.Value)
	case "!!str":
		if a.Value != b.Value {
			return false
		}
		if plain(a) != plain(b) {
			return stringIn11(a.Value)
		}
		return true
	}
	return a.Value == b.Value
}

// plain reports whether n is written as a plain scalar, without a tag:
// the only form whose type a reader infers.
func plain(n *yaml.Node) bool { return n.Style&^yaml.FlowStyle == 0 }

// stringIn11 reports whether a plain scalar written v is a string to
// sigs.k8s.io/yaml's YAML 1.1 reader.
func stringIn11(v string) bool {
	j, err := sigsyaml.YAMLToJSON([]byte(v))
	return err == nil && len(j) > 0 && j[0] == '"'
}

// resolve follows aliases (Check has refused cycles and dangling ones).
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// keyText is a key's text, for a scalar key (or an alias of one).
func keyText(k *yaml.Node) (string, bool) {
	k = resolve(k)
	if k.Kind != yaml.ScalarNode {
		return "", false
	}
	return k.Value, true
}

// segment writes a key as one segment of a path: as written when it is
// plain, quoted in brackets otherwise (a key may hold anything).
func segment(k *yaml.Node) string {
	s, ok := keyText(k)
	if !ok {
		return "[?]"
	}
	if s == "" || strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:", r))
	}) {
		return "[" + echo.Quote(s) + "]"
	}
	return s
}

// pathTo is the path of key k of the mapping being walked.
func (d *dropper) pathTo(k *yaml.Node) string {
	var b strings.Builder
	for _, st := range append(d.path[:len(d.path):len(d.path)], step{key: k}) {
		if st.key == nil {
			b.WriteString("[" + strconv.Itoa(st.index) + "]")
			continue
		}
		seg := segment(st.key)
		if b.Len() > 0 && !strings.HasPrefix(seg, "[") {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}
