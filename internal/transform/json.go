package transform

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"
	k8syaml "sigs.k8s.io/yaml"
)

// The plugin server answers GenerateManifest with compact JSON, one object
// per string: the repo-server reads every manifest with Kubernetes' YAML-or-
// JSON decoder and then sigs.k8s.io/yaml, and JSON takes it a third less time
// than YAML (sail-operator: ~157 ms instead of ~235 ms per call). The CLI, the
// classic mode and the HTTP render keep printing YAML: people read those.
//
// What the repo-server ends up with must not change, so an object is written
// as JSON only when its JSON means exactly what its YAML (Serialize) means to
// the repo-server. SerializeJSON works on the objects themselves, not on the
// printed YAML, and follows the YAML printer's choices: scalar types come from
// the yaml.v3 tags the printer writes with (a "8080" tagged !!str is printed
// quoted and stays a string, {} and [] stay empty objects and lists), and a
// plain scalar the repo-server's YAML 1.1 reader would type differently (an
// unquoted yes, on, 0o17, 1_000, .inf) keeps its whole object in YAML, as
// does anything JSON cannot say as such (aliases, tags the printer writes
// out, non-string keys). Such objects are rare and still correct: JSON is
// only the fast path.

// errKeepYAML says a manifest stays YAML; the wrapped text says why.
var errKeepYAML = errors.New("kept as YAML")

func keepYAML(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errKeepYAML}, args...)...)
}

// SerializeJSON writes each object as compact JSON (keys in document order),
// without the internal annotations Serialize leaves out. An object that
// cannot be said exactly in JSON is yamlDocs[i], its YAML from Serialize;
// kept counts those. nodes and yamlDocs are Serialize's input and output.
func SerializeJSON(nodes []*yaml.RNode, yamlDocs []string) (out []string, kept int) {
	out = make([]string, len(nodes))
	w := &jsonWriter{}
	for i, n := range nodes {
		js, err := w.object(n)
		if err != nil {
			out[i] = yamlDocs[i]
			kept++
			continue
		}
		out[i] = js
	}
	return out, kept
}

// objectJSON writes one object (a mapping) as compact JSON, without internal
// annotations. An error, wrapping errKeepYAML, means it must stay YAML.
func objectJSON(n *yaml.RNode) (string, error) {
	return (&jsonWriter{}).object(n)
}

func (w *jsonWriter) object(n *yaml.RNode) (string, error) {
	b, err := w.objectBytes(n)
	return string(b), err
}

// objectBytes is object in w's buffer, valid until w's next write.
func (w *jsonWriter) objectBytes(n *yaml.RNode) ([]byte, error) {
	if n.YNode().Kind != yaml.MappingNode {
		return nil, keepYAML("not a single mapping")
	}
	n, _, err := withoutInternalAnnotations(n)
	if err != nil {
		return nil, keepYAML("%v", err)
	}
	w.b = w.b[:0]
	if err := w.node(n.YNode()); err != nil {
		return nil, err
	}
	return w.b, nil
}

type jsonWriter struct {
	b    []byte
	memo map[string]bool // yaml11NonString's parser answers
}

var quotedStyles = yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle | yaml.LiteralStyle | yaml.FoldedStyle

func (w *jsonWriter) node(n *yaml.Node) error {
	if n.Style&yaml.TaggedStyle != 0 {
		return keepYAML("explicit tag %s", n.Tag)
	}
	switch n.Kind {
	case yaml.MappingNode:
		if n.ShortTag() != yaml.NodeTagMap {
			return keepYAML("mapping tagged %s", n.Tag)
		}
		w.b = append(w.b, '{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return keepYAML("a key that is no string")
			}
			if tag, quoted, explicit := printedAs(k); tag != yaml.NodeTagString || explicit {
				return keepYAML("a key that is no string")
			} else if !quoted && w.yaml11NonString(k.Value) {
				return keepYAML("key %q is no string in YAML 1.1", k.Value)
			}
			if i > 0 {
				w.b = append(w.b, ',')
			}
			if err := w.string(k.Value); err != nil {
				return err
			}
			w.b = append(w.b, ':')
			if err := w.node(n.Content[i+1]); err != nil {
				return err
			}
		}
		w.b = append(w.b, '}')
	case yaml.SequenceNode:
		if n.ShortTag() != yaml.NodeTagSeq {
			return keepYAML("sequence tagged %s", n.Tag)
		}
		w.b = append(w.b, '[')
		for i, c := range n.Content {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			if err := w.node(c); err != nil {
				return err
			}
		}
		w.b = append(w.b, ']')
	case yaml.ScalarNode:
		return w.scalar(n)
	case yaml.AliasNode:
		return keepYAML("alias *%s", n.Value)
	default:
		return keepYAML("node kind %d", n.Kind)
	}
	return nil
}

// printedAs says how the YAML printer (yaml.v3's encoder) writes the scalar
// n, and so how the repo-server reads it: the tag it resolves to, whether it
// is quoted (or a block scalar: a string either way), and whether the tag is
// written out. A node's tag is dropped when the value resolves to it anyway;
// a string that would resolve to something else is double-quoted; any other
// mismatch keeps the tag in the output. A multi-line plain string is printed
// as a literal block.
func printedAs(n *yaml.Node) (tag string, quoted, explicit bool) {
	quoted = n.Style&quotedStyles != 0 || (n.Style&yaml.TaggedStyle == 0 && strings.Contains(n.Value, "\n"))
	tag = n.ShortTag()
	switch {
	case n.Style&yaml.TaggedStyle != 0:
		return tag, quoted, true
	case n.Tag == "" || (tag == yaml.NodeTagString && quoted):
		return tag, quoted, false
	}
	implicit := plainTag(n.Value)
	switch {
	case implicit == tag:
		return tag, quoted, false
	case tag == yaml.NodeTagString:
		return tag, true, false
	}
	return tag, quoted, true
}

// jsonNumber is JSON's number grammar; a plain YAML number written so is
// copied as is, so the repo-server reads the same text either way.
var jsonNumber = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$`) })

func (w *jsonWriter) scalar(n *yaml.Node) error {
	tag, quoted, explicit := printedAs(n)
	if explicit {
		return keepYAML("scalar %q printed with its tag %s", n.Value, tag)
	}
	if quoted {
		// Quoted and block scalars are strings.
		if tag != yaml.NodeTagString {
			return keepYAML("quoted scalar tagged %s", tag)
		}
		return w.string(n.Value)
	}
	v := n.Value
	switch tag {
	case yaml.NodeTagString:
		if w.yaml11NonString(v) {
			return keepYAML("plain %q is no string in YAML 1.1", v)
		}
		return w.string(v)
	case yaml.NodeTagInt, yaml.NodeTagFloat:
		if !jsonNumber().MatchString(v) {
			return keepYAML("number %q is not written as JSON writes numbers", v)
		}
		w.b = append(w.b, v...)
	case yaml.NodeTagBool:
		switch v {
		case "true", "True", "TRUE":
			w.b = append(w.b, "true"...)
		case "false", "False", "FALSE":
			w.b = append(w.b, "false"...)
		default:
			return keepYAML("boolean %q", v)
		}
	case yaml.NodeTagNull:
		switch v {
		case "", "~", "null", "Null", "NULL":
			w.b = append(w.b, "null"...)
		default:
			return keepYAML("null %q", v)
		}
	case "!!timestamp":
		// An unquoted date: Kubernetes' YAML reader keeps it a string, as written.
		return w.string(v)
	default:
		return keepYAML("scalar tagged %s", tag)
	}
	return nil
}

// yaml11NonString reports whether a plain scalar that YAML 1.2 (kyaml) reads
// as a string is something else to a YAML 1.1 reader (Kubernetes'
// sigs.k8s.io/yaml, which the repo-server uses): yes, off, 0o17, +1, .5…
// Words are YAML 1.1's booleans and nulls (yaml11Words); values that can
// start a number, .inf or << are given to the 1.1 parser, once per value
// and call of SerializeJSON (CRDs repeat the same few values thousands of
// times).
func (w *jsonWriter) yaml11NonString(v string) bool {
	if v == "" {
		return false
	}
	switch c := v[0]; {
	case c >= '0' && c <= '9', c == '+', c == '-', c == '.', c == '<':
	default:
		return yaml11Words[v]
	}
	if r, ok := w.memo[v]; ok {
		return r
	}
	r := yaml.IsValueNonString(v)
	if w.memo == nil {
		w.memo = map[string]bool{}
	}
	w.memo[v] = r
	return r
}

// yaml11Words are the YAML 1.1 booleans and nulls that YAML 1.2 reads as
// strings (go-yaml v2's resolve table, which sigs.k8s.io/yaml uses).
var yaml11Words = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true,
	"n": true, "N": true, "no": true, "No": true, "NO": true,
	"on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true,
	"~": true, "null": true, "Null": true, "NULL": true,
	"true": true, "True": true, "TRUE": true, "false": true, "False": true, "FALSE": true,
}

// string appends s as a JSON string that a YAML 1.1 reader also reads back
// as s: besides JSON's own escapes, characters YAML forbids raw or folds as
// line breaks (DEL, C1 controls, NEL, LS, PS, BOM, non-characters) are
// escaped as \uXXXX.
func (w *jsonWriter) string(s string) error {
	b := append(w.b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != 0x7f {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"':
				b = append(b, '\\', '"')
			case '\\':
				b = append(b, '\\', '\\')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = appendUnicodeEscape(b, rune(c))
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return keepYAML("invalid UTF-8")
		}
		if (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 || r == 0xfeff || r == 0xfffe || r == 0xffff {
			b = append(b, s[start:i]...)
			b = appendUnicodeEscape(b, r)
			start = i + size
		}
		i += size
	}
	b = append(b, s[start:]...)
	w.b = append(b, '"')
	return nil
}

func appendUnicodeEscape(b []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	return append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}

// JSONWriter writes objects as the plugin sends them: compact JSON without
// internal annotations or, when JSON cannot say one exactly, its YAML
// document read the way the repo-server reads YAML (sigs.k8s.io/yaml). The
// validate step checks these bytes, so it judges what Argo CD applies. One
// writer reuses its buffer across objects.
type JSONWriter struct{ w jsonWriter }

// Object returns n's bytes, valid until the writer's next call.
func (j *JSONWriter) Object(n *yaml.RNode) ([]byte, error) {
	b, err := j.w.objectBytes(n)
	if err == nil {
		return b, nil
	}
	docs, err := Serialize([]*yaml.RNode{n})
	if err != nil {
		return nil, err
	}
	return k8syaml.YAMLToJSON([]byte(docs[0]))
}
