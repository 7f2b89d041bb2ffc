package transform

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// jsonSize returns len(json.Marshal(v)) for the value v that n decodes to,
// without building v: the size check runs on every object of every render,
// and marshalling multi-megabyte CRDs to JSON just to measure them was the
// largest cost of a render. Strings and keys are measured directly; the rare
// non-string scalars (numbers, booleans, null, timestamps) are decoded and
// marshalled one by one, so their JSON form is exactly encoding/json's.
func jsonSize(n *yaml.Node) (int, error) { return jsonSizeAt(n, 0) }

// maxJSONDepth stops jsonSizeAt on an alias cycle that escaped yamlsafe's
// checks: an unbounded recursion is a fatal stack overflow for the whole
// server, not an error.
const maxJSONDepth = 10000

func jsonSizeAt(n *yaml.Node, depth int) (int, error) {
	if depth > maxJSONDepth {
		return 0, fmt.Errorf("an object nested more than %d levels deep (an alias loop?)", maxJSONDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return 4, nil // null
		}
		return jsonSizeAt(n.Content[0], depth+1)
	case yaml.AliasNode:
		if n.Alias == nil {
			return 0, fmt.Errorf("alias %q without anchor", n.Value)
		}
		return jsonSizeAt(n.Alias, depth+1)
	case yaml.MappingNode:
		size := 2 // {}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				size++ // ,
			}
			v, err := jsonSizeAt(n.Content[i+1], depth+1)
			if err != nil {
				return 0, err
			}
			size += jsonStringSize(n.Content[i].Value) + 1 + v // "key":value
		}
		return size, nil
	case yaml.SequenceNode:
		size := 2 // []
		for i, c := range n.Content {
			if i > 0 {
				size++
			}
			v, err := jsonSizeAt(c, depth+1)
			if err != nil {
				return 0, err
			}
			size += v
		}
		return size, nil
	case yaml.ScalarNode:
		if n.ShortTag() == yaml.NodeTagString {
			return jsonStringSize(n.Value), nil
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return 0, err
		}
		j, err := json.Marshal(v)
		if err != nil {
			return 0, err
		}
		return len(j), nil
	}
	return 0, fmt.Errorf("unexpected YAML node kind %d", n.Kind)
}

// jsonStringSize is the length of s as encoding/json writes it (with its
// default HTML escaping, as kubectl's last-applied annotation is written).
func jsonStringSize(s string) int {
	size := 2 // quotes
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				size += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				size += 6 // \u00XX
			default:
				size++
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			size += 6 // \ufffd
		case r == '\u2028' || r == '\u2029':
			size += 6
		default:
			size += w
		}
		i += w
	}
	return size
}
