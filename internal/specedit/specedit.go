// Package specedit changes scalar fields of an olm-cmp.yaml in place, the
// way a person would: the fields are found through the YAML node tree, and
// only their bytes are replaced, so comments, blank lines, quoting and key
// order elsewhere stay exactly as the user wrote them (re-encoding the tree
// would keep comments but not blank lines or the user's indentation).
package specedit

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Edit sets or deletes one key of the top-level spec mapping.
type Edit struct {
	Key string
	// Value is the new value (a string); ignored with Delete.
	Value  string
	Delete bool
	// After names the key a new line is added below when Key is absent; when
	// After is absent too, the new key becomes spec's first.
	After string
}

// Apply returns data with the edits made. A field it cannot edit without
// touching its neighbours (a block scalar, a key sharing its line with
// others) is an error that names it.
func Apply(data []byte, edits []Edit) ([]byte, error) {
	doc, err := yaml.Parse(string(data))
	if err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	specNode, err := doc.Pipe(yaml.Lookup("spec"))
	if err != nil || specNode == nil || specNode.YNode().Kind != yaml.MappingNode {
		return nil, fmt.Errorf("no spec mapping to edit")
	}
	if specNode.YNode().Style&yaml.FlowStyle != 0 {
		return nil, fmt.Errorf("spec is written in flow style ({...}): write it as a block mapping to let olm-cmp edit it")
	}
	lines := splitLines(data)
	eol := lineBreak(data)
	var splices []splice
	added := map[string]int{} // key inserted by an earlier edit -> its splice
	for _, e := range edits {
		if i, ok := added[e.After]; ok && !e.Delete && specNode.Field(e.Key) == nil && specNode.Field(e.After) == nil {
			// Below a key this Apply adds: one more line in the same place.
			splices[i].text = splices[i].addLine(e.Key + ": " + scalar(e.Value, yaml.DoubleQuotedStyle))
			added[e.Key] = i
			continue
		}
		s, err := plan(lines, specNode, e, eol)
		if err != nil {
			return nil, fmt.Errorf("spec.%s: %w", e.Key, err)
		}
		if s != nil {
			if s.eol != "" { // an insertion
				added[e.Key] = len(splices)
			}
			splices = append(splices, *s)
		}
	}
	// From the end, so earlier offsets stay valid.
	sort.SliceStable(splices, func(i, j int) bool { return splices[i].start > splices[j].start })
	out := bytes.Clone(data)
	for _, s := range splices {
		out = append(out[:s.start:s.start], append([]byte(s.text), out[s.end:]...)...)
	}
	return out, nil
}

// splice replaces data[start:end] with text.
type splice struct {
	start, end int
	text       string
	// indent and eol, for an insertion: how its lines start and end.
	indent, eol string
}

// addLine returns the insertion's text with one more line, kv, below.
func (s splice) addLine(kv string) string {
	if strings.HasSuffix(s.text, s.eol) {
		return s.text + s.indent + kv + s.eol
	}
	return s.text + s.eol + s.indent + kv // the file's last line had no break
}

// lineBreak is the file's line break: CRLF when its first line ends so
// (a line olm-cmp adds must not mix the two), else LF. An insertion takes
// the break of the line it goes below, when that line has one.
func lineBreak(data []byte) string {
	if i := bytes.IndexByte(data, '\n'); i > 0 && data[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// line is one line of the file: its byte offset and its text without the
// line break.
type line struct {
	off  int
	text string
	end  int // offset just past the line break
}

func splitLines(data []byte) []line {
	var out []line
	off := 0
	for off < len(data) {
		i := bytes.IndexByte(data[off:], '\n')
		end := len(data)
		text := string(data[off:])
		if i >= 0 {
			end = off + i + 1
			text = string(data[off : off+i])
		}
		out = append(out, line{off: off, text: strings.TrimSuffix(text, "\r"), end: end})
		off = end
	}
	return out
}

// offset turns a node's 1-based line and column (in characters) into a byte
// offset within its line's text.
func offset(l line, column int) int {
	b := 0
	for c := 1; c < column && b < len(l.text); c++ {
		_, size := utf8.DecodeRuneInString(l.text[b:])
		b += size
	}
	return b
}

func plan(lines []line, specNode *yaml.RNode, e Edit, eol string) (*splice, error) {
	f := specNode.Field(e.Key)
	if f == nil {
		if e.Delete {
			return nil, nil
		}
		return insertion(lines, specNode, e, eol)
	}
	key, val := f.Key.YNode(), f.Value.YNode()
	if val.Kind != yaml.ScalarNode {
		return nil, fmt.Errorf("is not a single value")
	}
	if val.Line < 1 || val.Line > len(lines) {
		return nil, fmt.Errorf("cannot locate it in the file")
	}
	l := lines[val.Line-1]
	start := offset(l, val.Column)
	n, err := scalarLength(l.text[start:], val.Style)
	if err != nil {
		return nil, err
	}
	if e.Delete {
		kl := lines[key.Line-1]
		rest := strings.TrimSpace(l.text[start+n:])
		if key.Line != val.Line || strings.TrimSpace(kl.text[:offset(kl, key.Column)]) != "" || (rest != "" && !strings.HasPrefix(rest, "#")) {
			return nil, fmt.Errorf("is not on a line of its own: remove it by hand")
		}
		return &splice{start: l.off, end: l.end}, nil
	}
	return &splice{start: l.off + start, end: l.off + start + n, text: scalar(e.Value, val.Style)}, nil
}

// insertion adds "key: value" below e.After's line (or above spec's first
// key), indented like spec's keys.
func insertion(lines []line, specNode *yaml.RNode, e Edit, eol string) (*splice, error) {
	content := specNode.YNode().Content
	if len(content) == 0 {
		return nil, fmt.Errorf("spec is empty")
	}
	anchor, below := content[0], false
	if a := specNode.Field(e.After); a != nil && a.Value.YNode().Kind == yaml.ScalarNode {
		anchor, below = a.Key.YNode(), true
		if a.Value.YNode().Line != anchor.Line {
			return nil, fmt.Errorf("spec.%s spans lines: add %s: by hand", e.After, e.Key)
		}
	}
	l := lines[anchor.Line-1]
	switch l.end - l.off - len(l.text) { // the anchor line's own break wins
	case 2:
		eol = "\r\n"
	case 1:
		eol = "\n"
	}
	indent := l.text[:offset(l, anchor.Column)]
	if strings.TrimSpace(indent) != "" {
		return nil, fmt.Errorf("spec's keys do not start their lines: add %s: by hand", e.Key)
	}
	text := indent + e.Key + ": " + scalar(e.Value, yaml.DoubleQuotedStyle) + eol
	if below {
		if l.end-l.off == len(l.text) { // the last line, without a line break
			text = eol + strings.TrimSuffix(text, eol)
		}
		return &splice{start: l.end, end: l.end, text: text, indent: indent, eol: eol}, nil
	}
	return &splice{start: l.off, end: l.off, text: text, indent: indent, eol: eol}, nil
}

// scalarLength is the length in bytes of the one-line scalar at the start
// of s, quotes included.
func scalarLength(s string, style yaml.Style) (int, error) {
	switch {
	case style&yaml.DoubleQuotedStyle != 0:
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '"':
				return i + 1, nil
			}
		}
	case style&yaml.SingleQuotedStyle != 0:
		for i := 1; i < len(s); i++ {
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					i++
					continue
				}
				return i + 1, nil
			}
		}
	case style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return 0, fmt.Errorf("is a block scalar (| or >): write it on one line")
	default:
		end := len(s)
		if i := strings.Index(s, " #"); i >= 0 {
			end = i
		}
		return len(strings.TrimRight(s[:end], " \t")), nil
	}
	return 0, fmt.Errorf("spans lines: write it on one line")
}

// scalar writes v in the style the old value had. A plain value stays plain
// only when YAML reads it back as the same string (an image reference with
// a digest does; "1.0" would become a number).
func scalar(v string, style yaml.Style) string {
	switch {
	case style&yaml.SingleQuotedStyle != 0:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case style&yaml.DoubleQuotedStyle != 0:
		return strconv.Quote(v)
	}
	if plainSafe(v) {
		return v
	}
	return strconv.Quote(v)
}

func plainSafe(v string) bool {
	if v == "" || strings.ContainsAny(v[:1], "!&*[]{}|>'\"%@`#,?:-= ") ||
		strings.Contains(v, ": ") || strings.Contains(v, " #") || strings.ContainsAny(v, "\n\t") {
		return false
	}
	n, err := yaml.Parse(v)
	return err == nil && n.YNode().Tag == yaml.NodeTagString && n.YNode().Value == v
}

// Replacement sets the one-line scalar Node (parsed from the same bytes,
// e.g. by yamlsafe.Parse: its Line and Column locate it) to Value, written
// in the node's own style. Unlike Edit it reaches any scalar of any
// document, in block or flow context (an ApplicationSet's list element
// `{name: a, version: "1.0"}`, an Application's plugin parameter).
type Replacement struct {
	Node  *yaml.Node
	Value string
}

// Replace returns data with each replacement made and every other byte
// kept. A node it cannot replace alone (a block scalar, a plain scalar
// over several lines) is an error naming its line.
func Replace(data []byte, rs []Replacement) ([]byte, error) {
	lines := splitLines(data)
	var splices []splice
	for _, r := range rs {
		n := r.Node
		if n == nil || n.Kind != yaml.ScalarNode || n.Line < 1 || n.Line > len(lines) {
			return nil, fmt.Errorf("cannot locate the value to replace")
		}
		l := lines[n.Line-1]
		start := offset(l, n.Column)
		var length int
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			var err error
			if length, err = scalarLength(l.text[start:], n.Style); err != nil {
				return nil, fmt.Errorf("line %d: %w", n.Line, err)
			}
		} else {
			// A plain one-line scalar is written exactly as its value reads
			// (no escapes), whatever context ends it: a comment, a comma,
			// a closing brace.
			if !strings.HasPrefix(l.text[start:], n.Value) {
				return nil, fmt.Errorf("line %d: the value spans lines: write it on one line", n.Line)
			}
			length = len(n.Value)
		}
		style := n.Style
		if style == 0 && inFlow(l.text[:start]) && !flowSafe(r.Value) {
			style = yaml.DoubleQuotedStyle
		}
		splices = append(splices, splice{start: l.off + start, end: l.off + start + length, text: scalar(r.Value, style)})
	}
	sort.SliceStable(splices, func(i, j int) bool { return splices[i].start > splices[j].start })
	for i := 1; i < len(splices); i++ {
		if splices[i].end > splices[i-1].start {
			return nil, fmt.Errorf("two replacements of one value")
		}
	}
	out := bytes.Clone(data)
	for _, s := range splices {
		out = append(out[:s.start:s.start], append([]byte(s.text), out[s.end:]...)...)
	}
	return out, nil
}

// inFlow guesses whether a value starting after prefix (its line's text
// before it) sits inside a flow collection, where a plain value must not
// hold , [ ] { }.
func inFlow(prefix string) bool { return strings.ContainsAny(prefix, "{[") }

func flowSafe(v string) bool { return !strings.ContainsAny(v, ",[]{}") }
