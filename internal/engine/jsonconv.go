package engine

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The plugin server answers GenerateManifest with compact JSON, one object
// per string: the repo-server reads every manifest with Kubernetes' YAML-or-
// JSON decoder and then sigs.k8s.io/yaml, and JSON takes it a third less time
// than YAML (sail-operator: ~157 ms instead of ~235 ms per call). The CLI, the
// classic mode and the HTTP render keep printing YAML: people read those.
//
// What the repo-server ends up with must not change, so a manifest is
// converted only when its JSON means exactly what its YAML meant to the
// repo-server. Scalar types come from the yaml.v3 tags kyaml printed with (a
// quoted "8080" stays a string, {} and [] stay empty objects and lists), and
// a plain scalar the repo-server's YAML 1.1 reader would type differently (an
// unquoted yes, on, 0o17, 1_000, .inf) keeps its whole manifest in YAML, as
// does anything JSON cannot say as such (anchors and aliases, explicit tags,
// non-string keys). Such manifests are rare and still correct: JSON is only
// the fast path.

// errKeepYAML says a manifest stays YAML; the wrapped text says why.
var errKeepYAML = errors.New("kept as YAML")

func keepYAML(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errKeepYAML}, args...)...)
}

// ManifestsJSON converts rendered YAML manifests (one object each) to compact
// JSON, in parallel. A manifest that cannot be said exactly in JSON is
// returned unchanged; kept counts those.
func ManifestsJSON(manifests []string) (out []string, kept int) {
	out = make([]string, len(manifests))
	keptBy := make([]bool, len(manifests))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(manifests)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				js, err := safeManifestJSON(manifests[i])
				if err != nil {
					out[i], keptBy[i] = manifests[i], true
					continue
				}
				out[i] = js
			}
		}()
	}
	for i := range manifests {
		work <- i
	}
	close(work)
	wg.Wait()
	for _, k := range keptBy {
		if k {
			kept++
		}
	}
	return out, kept
}

// safeManifestJSON is ManifestJSON on a worker goroutine, where a panic of
// the YAML parser would take the whole server down: it keeps the YAML.
func safeManifestJSON(doc string) (js string, err error) {
	defer func() {
		if r := recover(); r != nil {
			js, err = "", keepYAML("the YAML parser panicked: %v", r)
		}
	}()
	return ManifestJSON(doc)
}

// ManifestJSON converts one YAML document holding one mapping to compact
// JSON (keys in document order). An error means the manifest must stay YAML.
func ManifestJSON(doc string) (string, error) {
	dec := yaml.NewDecoder(strings.NewReader(doc))
	var n yaml.Node
	if err := dec.Decode(&n); err != nil {
		return "", keepYAML("parsing: %v", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return "", keepYAML("more than one document")
	}
	if n.Kind != yaml.DocumentNode || len(n.Content) != 1 || n.Content[0].Kind != yaml.MappingNode {
		return "", keepYAML("not a single mapping")
	}
	w := jsonWriter{b: make([]byte, 0, len(doc)*3/4)}
	if err := w.node(n.Content[0]); err != nil {
		return "", err
	}
	return string(w.b), nil
}

type jsonWriter struct{ b []byte }

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
			if k.Kind != yaml.ScalarNode || k.ShortTag() != yaml.NodeTagString || k.Style&yaml.TaggedStyle != 0 {
				return keepYAML("a key that is no string")
			}
			if k.Style&quotedStyles == 0 && yaml11NonString(k.Value) {
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

// jsonNumber is JSON's number grammar; a plain YAML number written so is
// copied as is, so the repo-server reads the same text either way.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)

func (w *jsonWriter) scalar(n *yaml.Node) error {
	tag := n.ShortTag()
	if n.Style&quotedStyles != 0 {
		// Quoted and block scalars are strings (an explicit tag was refused above).
		if tag != yaml.NodeTagString {
			return keepYAML("quoted scalar tagged %s", tag)
		}
		return w.string(n.Value)
	}
	v := n.Value
	switch tag {
	case yaml.NodeTagString:
		if yaml11NonString(v) {
			return keepYAML("plain %q is no string in YAML 1.1", v)
		}
		return w.string(v)
	case yaml.NodeTagInt, yaml.NodeTagFloat:
		if !jsonNumber.MatchString(v) {
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
// Only values that can start such a token are given to the 1.1 parser.
func yaml11NonString(v string) bool {
	if v == "" {
		return false
	}
	switch c := v[0]; {
	case c >= '0' && c <= '9', c == '+', c == '-', c == '.', c == '~', c == '<':
	case len(v) <= 5 && strings.IndexByte("yYnNtTfFoO", c) >= 0:
	default:
		return false
	}
	return yaml.IsValueNonString(v)
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
