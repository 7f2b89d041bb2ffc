package spec

// olm-cmp.yaml is decoded by walking its YAML 1.2 node tree against the Go
// types of File, rather than by converting the YAML to JSON and decoding
// that. Three things need the walk:
//   - every problem of the file is found, not only the first type error
//     (encoding/json stops there);
//   - a string field takes the scalar as written: `namespace: y` is the
//     namespace "y" and `version: 1.10` the version "1.10", where a YAML 1.1
//     reader (sigs.k8s.io/yaml) sees a bool and the float 1.1;
//   - each problem names its line and field path in the file's words, and an
//     unknown key the known key it was probably meant to be.
// The walk builds a JSON tree of only what fits the types, which
// encoding/json then decodes: OLM's and Kubernetes' own json tags and
// unmarshalers (resource.Quantity, IntOrString) stay the contract.

import (
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/editdist"
	"github.com/olm-cmp/olm-cmp/internal/jsonfields"
)

// problem is one thing wrong in the file.
type problem struct {
	line int
	// path is the field path (spec.config.env[0].name).
	path string
	msg  string
}

// specField is the top-level spec field the problem is in ("namespace" for
// spec.namespace[0]), "" outside spec: Validate's messages about that field
// are left out, since the field did not decode as written.
func (p problem) specField() string {
	rest, ok := strings.CutPrefix(p.path, "spec.")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, ".["); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

func (p problem) String() string {
	if p.line > 0 {
		return fmt.Sprintf("line %d: %s", p.line, p.msg)
	}
	return p.msg
}

// walker collects the problems of one document.
type walker struct {
	problems []problem
	// spec is set when the document is olm-cmp.yaml (a File): an unknown
	// key is then also looked up where it belongs in the file's structure.
	spec bool
	// lines maps each field path to the line of its value, for messages
	// about values (Validate's) to name their line.
	lines map[string]int
}

func (w *walker) fail(n *yaml.Node, path, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if path != "" {
		msg = path + ": " + msg
	}
	w.problems = append(w.problems, problem{line: n.Line, path: path, msg: msg})
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// value returns the JSON form of n as a value of type t, and false when n
// does not fit t (the problem is recorded; the field is left out).
func (w *walker) value(n *yaml.Node, t reflect.Type, path string) (any, bool) {
	n = resolveAlias(n)
	if w.lines != nil && path != "" {
		w.lines[path] = n.Line
	}
	if isNull(n) {
		return nil, true // the zero value, as encoding/json decodes null
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if hasOwnDecoding(t) {
		return w.custom(n, t, path)
	}
	switch t.Kind() {
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			w.fail(n, path, "expected a string, got %s", describeNode(n))
			return nil, false
		}
		return n.Value, true
	case reflect.Bool:
		if b, ok := parseBool(n); ok {
			return b, true
		}
		w.fail(n, path, "expected true or false, got %s", describeNode(n))
		return nil, false
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return w.number(n, t, path)
	case reflect.Slice:
		return w.list(n, t, path)
	case reflect.Map:
		return w.mapping(n, t, path)
	case reflect.Struct:
		return w.object(n, t, path)
	case reflect.Interface:
		return w.generic(n, path)
	}
	// No field of the spec has another kind; decode as encoding/json would.
	return w.custom(n, t, path)
}

// number decodes a scalar into t's kind with the YAML library's own
// conversion, which refuses overflow and non-numbers.
func (w *walker) number(n *yaml.Node, t reflect.Type, path string) (any, bool) {
	// The YAML library would truncate 1.5 into an int: a whole number must
	// be written as one.
	tag := n.ShortTag()
	isFloat := t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64
	v := reflect.New(t)
	if n.Kind != yaml.ScalarNode || !(tag == "!!int" || isFloat && tag == "!!float") || n.Decode(v.Interface()) != nil {
		w.fail(n, path, "expected %s, got %s", describeType(t), describeNode(n))
		return nil, false
	}
	return v.Elem().Interface(), true
}

func (w *walker) list(n *yaml.Node, t reflect.Type, path string) (any, bool) {
	if n.Kind != yaml.SequenceNode {
		if n.Kind == yaml.ScalarNode && t.Elem().Kind() == reflect.String {
			w.fail(n, path, "expected %s, got %s: write it as a list, [%s]", describeType(t), describeNode(n), n.Value)
		} else {
			w.fail(n, path, "expected %s, got %s", describeType(t), describeNode(n))
		}
		return nil, false
	}
	out := []any{}
	for i, item := range n.Content {
		if v, ok := w.value(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); ok {
			out = append(out, v)
		}
	}
	return out, true
}

func (w *walker) mapping(n *yaml.Node, t reflect.Type, path string) (any, bool) {
	if n.Kind != yaml.MappingNode || t.Key().Kind() != reflect.String {
		w.fail(n, path, "expected %s, got %s", describeType(t), describeNode(n))
		return nil, false
	}
	out := map[string]any{}
	for _, kv := range w.pairs(n, path) {
		if v, ok := w.value(kv.value, t.Elem(), keyPath(path, kv.key)); ok {
			out[kv.key] = v
		}
	}
	return out, true
}

func (w *walker) object(n *yaml.Node, t reflect.Type, path string) (any, bool) {
	if n.Kind != yaml.MappingNode {
		w.fail(n, path, "expected %s, got %s", describeType(t), describeNode(n))
		return nil, false
	}
	fields := jsonfields.Of(t)
	out := map[string]any{}
	for _, kv := range w.pairs(n, path) {
		p := fieldPath(path, kv.key)
		f, ok := fields[kv.key]
		ft := f.Type
		if !ok {
			w.unknown(kv.keyNode, path, kv.key, fields)
			continue
		}
		if v, ok := w.value(kv.value, ft, p); ok {
			out[kv.key] = v
		}
	}
	return out, true
}

// unknown records key, which is not a field of the map at path: with the
// known field it was probably meant to be (a typo), olm-cmp's equivalent of
// an OLM field, or where in the file it belongs (a key indented under the
// wrong parent), in that order.
func (w *walker) unknown(n *yaml.Node, path, key string, fields map[string]jsonfields.Field) {
	p := fieldPath(path, key)
	if w.spec {
		if hint := olmHint(path, key); hint != "" {
			w.unknownAt(n, p, fmt.Sprintf("unknown field %s: %s", echo.Quote(p), hint))
			return
		}
	}
	s := suggest(key, fields)
	if w.spec && !strings.HasPrefix(s, ": did you mean") {
		if msg, home := misplaced(path, key); msg != "" {
			// The problem is the home's: Validate's "spec.namespace is
			// required" is then not repeated.
			w.problems = append(w.problems, problem{line: n.Line, path: home,
				msg: fmt.Sprintf("unknown field %s: %s", echo.Quote(p), msg)})
			return
		}
	}
	w.unknownAt(n, p, fmt.Sprintf("unknown field %s%s", echo.Quote(p), s))
}

// unknownAt records msg, about the unknown key at path, without the path
// prefix fail gives (the message names it).
func (w *walker) unknownAt(n *yaml.Node, path, msg string) {
	w.problems = append(w.problems, problem{line: n.Line, path: path, msg: msg})
}

// custom decodes n with the type's own JSON decoding (Quantity,
// IntOrString, RawExtension, Time), from the YAML 1.2 reading of n.
func (w *walker) custom(n *yaml.Node, t reflect.Type, path string) (any, bool) {
	v, ok := w.generic(n, path)
	if !ok {
		return nil, false
	}
	raw, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(raw, reflect.New(t).Interface())
	}
	if err != nil {
		w.fail(n, path, "expected %s, got %s", describeType(t), describeNode(n))
		return nil, false
	}
	return json.RawMessage(raw), true
}

// generic decodes n without a type to check against (free-form fields).
func (w *walker) generic(n *yaml.Node, path string) (any, bool) {
	switch n.Kind {
	case yaml.SequenceNode:
		out := []any{}
		for i, item := range n.Content {
			if v, ok := w.generic(resolveAlias(item), fmt.Sprintf("%s[%d]", path, i)); ok {
				out = append(out, v)
			}
		}
		return out, true
	case yaml.MappingNode:
		out := map[string]any{}
		for _, kv := range w.pairs(n, path) {
			if v, ok := w.generic(resolveAlias(kv.value), keyPath(path, kv.key)); ok {
				out[kv.key] = v
			}
		}
		return out, true
	}
	var v any
	if err := n.Decode(&v); err != nil {
		w.fail(n, path, "cannot read %s", describeNode(n))
		return nil, false
	}
	if f, ok := v.(float64); ok && (f != f || f > 1e308 || f < -1e308) {
		w.fail(n, path, "%s is not a finite number", describeNode(n))
		return nil, false
	}
	return v, true
}

// pair is one key of a mapping and its value.
type pair struct {
	key            string
	keyNode, value *yaml.Node
}

// pairs lists a mapping's keys in order, refusing duplicates and keys that
// are not scalars, with YAML merge keys (<<: *base) expanded: a key written
// in the mapping wins over a merged one, and an earlier merged mapping over
// a later one.
func (w *walker) pairs(n *yaml.Node, path string) []pair {
	var out []pair
	seen := map[string]int{} // key -> line
	var merged []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merged = append(merged, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			w.fail(k, path, "a key must be a plain word, got %s", describeNode(k))
			continue
		}
		if line, dup := seen[k.Value]; dup {
			p := fieldPath(path, k.Value)
			w.problems = append(w.problems, problem{line: k.Line, path: p,
				msg: fmt.Sprintf("%s is set twice (lines %d and %d): remove one", echo.Quote(p), line, k.Line)})
			continue
		}
		seen[k.Value] = k.Line
		out = append(out, pair{key: k.Value, keyNode: k, value: v})
	}
	for _, m := range merged {
		m = resolveAlias(m)
		sources := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			sources = m.Content
		}
		for _, src := range sources {
			src = resolveAlias(src)
			if src.Kind != yaml.MappingNode {
				w.fail(src, path, "<< merges a map (<<: *anchor), got %s", describeNode(src))
				continue
			}
			for _, kv := range w.pairs(src, path) {
				if _, dup := seen[kv.key]; !dup {
					seen[kv.key] = kv.keyNode.Line
					out = append(out, kv)
				}
			}
		}
	}
	return out
}

// resolveAlias follows an alias to its anchor. yamlsafe.Check has refused
// cycles and aliases without an anchor before any walk.
func resolveAlias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// parseBool reads true and false, and, unquoted, the YAML 1.1 words
// (yes/no, on/off, y/n) that olm-cmp.yaml files written for the previous
// YAML 1.1 decoder may hold in a true-or-false field.
func parseBool(n *yaml.Node) (bool, bool) {
	if n.Kind != yaml.ScalarNode {
		return false, false
	}
	switch n.ShortTag() {
	case "!!bool":
		b, err := strconv.ParseBool(n.Value)
		return b, err == nil
	case "!!str":
		if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0 {
			return false, false
		}
		switch n.Value {
		case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON":
			return true, true
		case "n", "N", "no", "No", "NO", "off", "Off", "OFF":
			return false, true
		}
	}
	return false, false
}

// hasOwnDecoding reports whether encoding/json decodes t with t's own
// method rather than by its kind.
func hasOwnDecoding(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(jsonUnmarshaler) || p.Implements(textUnmarshaler)
}

// fieldPath joins a struct field to its parent's path.
func fieldPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// keyPath joins a map key to its parent's path, quoting keys that are not
// plain words (spec.images["quay.io/"]).
func keyPath(parent, key string) string {
	for _, r := range key {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Sprintf("%s[%s]", parent, echo.Quote(key))
		}
	}
	return fieldPath(parent, key)
}

// describeNode says what the file holds, in its words.
func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:40] + "..."
	}
	return strconv.Quote(v)
}

// describeType says what a field takes, in the words of the file.
func describeType(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case reflect.TypeFor[resource.Quantity]():
		return "a quantity such as 500m, 2 or 1Gi"
	case reflect.TypeFor[intstr.IntOrString]():
		return "a number or a string"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		switch e := t.Elem(); {
		case e.Kind() == reflect.String:
			return "a list of strings"
		case e.Kind() == reflect.Struct || e.Kind() == reflect.Map:
			return "a list of maps"
		}
		return "a list"
	case reflect.Map:
		if t.Elem().Kind() == reflect.String {
			return "a map of strings"
		}
		return "a map"
	case reflect.Struct:
		return "a map"
	}
	return "a " + t.Name()
}

// suggest returns ": did you mean X?" for the known field closest to key,
// when it is close enough to be a typo (a wrong case, a missing or extra
// letter), or the list of known fields when there are few.
func suggest(key string, fields map[string]jsonfields.Field) string {
	names := slices.Sorted(maps.Keys(fields))
	if best := editdist.Nearest(key, names); best != "" {
		return fmt.Sprintf(": did you mean %s?", best)
	}
	if len(names) <= 8 {
		return ": known fields are " + strings.Join(names, ", ")
	}
	return ""
}
