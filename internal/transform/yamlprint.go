package transform

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// printYAML prints an object exactly as kyaml's encoder (yaml.v3, indent 2,
// compact sequences) prints it, with Serialize's folded-to-literal switch
// applied, into one allocation that becomes the string.
//
// Why not the encoder for the whole object: yaml.v3's emitter keeps every
// event of a document in a queue that never shrinks, so printing a
// multi-megabyte CRD allocates tens of megabytes of events, half of a large
// render's allocations. The work is split instead:
//
//   - The structure is ours: block mappings, kyaml's compact block sequences
//     ("- " at its key's indentation), empty {} and [], indentation, and the
//     head comments of the document, the object and its keys.
//   - A scalar is either certainly plain (plainScalar: a short allow-list of
//     characters, a value that reads back as its own tag), written as it is,
//     or printed by the encoder itself: scalarPrinter hands an object's other
//     scalars to the encoder up to 128 at a time, values as the items of a
//     sequence, keys as the keys of a mapping, documents whose queue of
//     events stays small, and takes each scalar's part of the output. Those
//     texts are cached per worker; a block scalar's lines are shifted to the
//     indentation of its place.
//
// Anything else (anchors and aliases, tags the encoder writes out, flow
// collections, complex keys, line and foot comments, head comments elsewhere,
// quoted scalars the encoder spreads over lines) returns errPrintFallback,
// and Serialize prints the object with the encoder as before. VerifyPrinter
// holds the two equal: TestPrintYAMLMatchesEncoder on the edges of the
// encoder's rules, TestCorpusPrinterMatchesEncoder on every object of the
// reference bundles, FuzzPrintYAML on arbitrary YAML.
func printYAML(n *yaml.Node, sp *scalarPrinter) (string, error) {
	docComment := ""
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) == 1 &&
		n.Anchor == "" && n.LineComment == "" && n.FootComment == "" {
		docComment, n = n.HeadComment, n.Content[0]
	}
	if n == nil || n.Kind != yaml.MappingNode || len(n.Content) == 0 || n.Anchor != "" ||
		n.LineComment != "" || n.FootComment != "" || !blockCollection(n, yaml.NodeTagMap) {
		return "", errPrintFallback
	}
	sp.collect(n)
	sp.prepare()
	p := printer{sp: sp}
	size := printSize(n, 0) + len(docComment) + len(n.HeadComment)
	p.b.Grow(size + size/32)
	if docComment != "" {
		// The document's comment, then a blank line.
		if !p.comment(docComment, 0) {
			return "", errPrintFallback
		}
		p.b.WriteByte('\n')
	}
	if n.HeadComment != "" && !p.comment(n.HeadComment, 0) {
		return "", errPrintFallback
	}
	if err := p.mapping(n, 0, false); err != nil {
		return "", err
	}
	return p.b.String(), nil
}

// errPrintFallback says printYAML leaves an object to the encoder.
var errPrintFallback = errors.New("printed by yaml.v3")

// printer writes one object. Every entry it writes ends with a line break,
// so each new entry starts a line (except the first of a collection that
// follows "- " on its item's line).
type printer struct {
	b  strings.Builder
	sp *scalarPrinter
}

// mapping writes n's entries with keys at column col; inline means the first
// key continues the current line (a mapping that is a sequence item).
func (p *printer) mapping(n *yaml.Node, col int, inline bool) error {
	if len(n.Content)%2 != 0 {
		return errPrintFallback
	}
	for i := 0; i < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Anchor != "" || k.LineComment != "" || k.FootComment != "" {
			return errPrintFallback
		}
		first := i == 0 && inline
		if k.HeadComment != "" && (first || !p.comment(k.HeadComment, col)) {
			return errPrintFallback
		}
		if !first {
			p.pad(col)
		}
		if plainKey(k) {
			p.b.WriteString(k.Value)
		} else {
			key, err := p.sp.text(k, true)
			if err != nil {
				return err
			}
			p.b.WriteString(key)
		}
		p.b.WriteByte(':')
		if err := p.value(v, col, false); err != nil {
			return err
		}
	}
	return nil
}

// sequence writes n's items with "-" at column col; inline as for mapping.
func (p *printer) sequence(n *yaml.Node, col int, inline bool) error {
	for i, c := range n.Content {
		if i > 0 || !inline {
			p.pad(col)
		}
		p.b.WriteByte('-')
		if err := p.value(c, col, true); err != nil {
			return err
		}
	}
	return nil
}

// value writes what follows the ':' of a key at column col, or the '-' of
// an item at column col: a scalar (a block scalar's lines at col+2), an
// empty collection, or a collection. A key's mapping starts on the next
// line with its keys at col+2, a key's sequence on the next line with "-"
// at col (kyaml's compact style); an item's collection starts on the item's
// line, after "- ", at col+2.
func (p *printer) value(n *yaml.Node, col int, item bool) error {
	if n.Anchor != "" || n.HeadComment != "" || n.LineComment != "" || n.FootComment != "" {
		return errPrintFallback
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if plainScalar(n) {
			p.b.WriteByte(' ')
			p.b.WriteString(n.Value)
			p.b.WriteByte('\n')
			return nil
		}
		s, err := p.sp.text(n, false)
		if err != nil {
			return err
		}
		p.block(s, col)
		return nil
	case yaml.MappingNode:
		if !blockCollection(n, yaml.NodeTagMap) {
			return errPrintFallback
		}
		switch {
		case len(n.Content) == 0:
			p.b.WriteString(" {}\n")
			return nil
		case item:
			p.b.WriteByte(' ')
		default:
			p.b.WriteByte('\n')
		}
		return p.mapping(n, col+2, item)
	case yaml.SequenceNode:
		if !blockCollection(n, yaml.NodeTagSeq) {
			return errPrintFallback
		}
		switch {
		case len(n.Content) == 0:
			p.b.WriteString(" []\n")
			return nil
		case item:
			p.b.WriteByte(' ')
			return p.sequence(n, col+2, true)
		}
		p.b.WriteByte('\n')
		return p.sequence(n, col, false)
	}
	return errPrintFallback
}

// block appends a value's text as the encoder printed it at column 0 (see
// scalarPrinter.text), its continuation lines (a block scalar's) shifted by
// col.
func (p *printer) block(s string, col int) {
	line, rest, _ := strings.Cut(s, "\n")
	p.b.WriteString(line)
	p.b.WriteByte('\n')
	for rest != "" {
		line, rest, _ = strings.Cut(rest, "\n")
		if line != "" {
			p.pad(col)
			p.b.WriteString(line)
		}
		p.b.WriteByte('\n')
	}
}

// comment writes a head comment's lines at column col, each with "# " unless
// it starts with '#' already; its empty lines stay empty. It refuses comments
// whose text the encoder might write otherwise.
func (p *printer) comment(c string, col int) bool {
	if strings.HasSuffix(c, "\n") || !utf8.ValidString(c) || hasOtherBreak(c) {
		return false
	}
	for line := range strings.SplitSeq(c, "\n") {
		if line != "" {
			p.pad(col)
			if line[0] != '#' {
				p.b.WriteString("# ")
			}
			p.b.WriteString(line)
		}
		p.b.WriteByte('\n')
	}
	return true
}

const spaces = "                                                                "

func (p *printer) pad(n int) {
	for n > len(spaces) {
		p.b.WriteString(spaces)
		n -= len(spaces)
	}
	p.b.WriteString(spaces[:n])
}

// blockCollection reports whether the encoder writes collection n in block
// style without a tag: an empty one prints as {} or [] in either style.
func blockCollection(n *yaml.Node, implicit string) bool {
	if n.Style&yaml.TaggedStyle != 0 || (n.Style&yaml.FlowStyle != 0 && len(n.Content) > 0) {
		return false
	}
	return n.Tag == "" || n.ShortTag() == implicit
}

// hasOtherBreak reports a line break other than \n (CR, NEL, LS, PS), which
// the printer leaves to the encoder in comments and block scalars.
func hasOtherBreak(s string) bool {
	return strings.IndexByte(s, '\r') >= 0 || strings.Contains(s, "\u0085") ||
		strings.Contains(s, "\u2028") || strings.Contains(s, "\u2029")
}

// printSize is a generous estimate of the printed size of n, whose entries
// sit at column col: each entry's indentation, key, indicators and line
// break, each line of a block scalar indented, room for quotes.
func printSize(n *yaml.Node, col int) int {
	switch n.Kind {
	case yaml.ScalarNode:
		if lines := strings.Count(n.Value, "\n"); lines > 0 {
			return len(n.Value) + 8 + lines*(col+2)
		}
		return len(n.Value) + 3
	case yaml.MappingNode:
		size := 2
		for i := 0; i+1 < len(n.Content); i += 2 {
			size += col + len(n.Content[i].Value) + 3 + printSize(n.Content[i+1], col+2)
		}
		return size
	case yaml.SequenceNode:
		size := 2
		for _, c := range n.Content {
			size += col + 2 + printSize(c, col+2)
		}
		return size
	}
	return 64
}

// scalarPrinter gives a scalar's text as the encoder prints it, as a key
// or as a value. It is not safe for concurrent use: Serialize gives each
// worker its own, so the cache serves every object that worker prints (the
// versions of a CRD repeat their descriptions).
type scalarPrinter struct {
	cache        map[scalarKey]encodedScalar
	keys, values []scalarKey // wanted by collect, not yet encoded
	buf          bytes.Buffer
}

// scalarKey is what the encoder's text of a scalar depends on.
type scalarKey struct {
	value, tag string
	style      yaml.Style
	key        bool
}

// encodedScalar is a scalar's text; ok is false when the printer leaves the
// object to the encoder (a tag written out, a key across lines, a quoted
// value across lines).
type encodedScalar struct {
	text string
	ok   bool
}

func newScalarPrinter() *scalarPrinter {
	return &scalarPrinter{cache: map[scalarKey]encodedScalar{}}
}

// scalarKeyOf is n's cache key, with Serialize's switch (see unfold): a
// folded scalar across lines prints as a literal block.
func scalarKeyOf(n *yaml.Node, key bool) scalarKey {
	style := n.Style
	if style&yaml.FoldedStyle != 0 && strings.Contains(n.Value, "\n") {
		style = style&^yaml.FoldedStyle | yaml.LiteralStyle
	}
	return scalarKey{n.Value, n.Tag, style, key}
}

// encodable reports whether the printer asks the encoder about n at all.
func encodable(n *yaml.Node) bool {
	return n.Anchor == "" && n.Style&yaml.TaggedStyle == 0 && utf8.ValidString(n.Value) && !hasOtherBreak(n.Value)
}

// collect notes every scalar of n the fast path does not print and the
// cache does not hold, so prepare encodes them together.
func (sp *scalarPrinter) collect(n *yaml.Node) {
	switch n.Kind {
	case yaml.ScalarNode:
		if !plainScalar(n) {
			sp.want(n, false)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml.ScalarNode && !plainKey(k) {
				sp.want(k, true)
			}
			sp.collect(n.Content[i+1])
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			sp.collect(c)
		}
	}
}

func (sp *scalarPrinter) want(n *yaml.Node, key bool) {
	if !encodable(n) {
		return // the printer falls back
	}
	ck := scalarKeyOf(n, key)
	if _, ok := sp.cache[ck]; ok {
		return
	}
	sp.cache[ck] = encodedScalar{}
	if key {
		sp.keys = append(sp.keys, ck)
	} else {
		sp.values = append(sp.values, ck)
	}
}

// encodeBatch is how many scalars go to the encoder in one document: its
// queue of events stays a few kilobytes, and one encoder serves them all.
const encodeBatch = 128

// prepare encodes the scalars collect noted, a batch at a time: values as
// the items of a sequence, keys as the keys of a mapping whose values are
// all "k". When a batch's output does not split into one part per scalar,
// each of its scalars is encoded alone.
func (sp *scalarPrinter) prepare() {
	for len(sp.values) > 0 {
		batch := sp.values[:min(encodeBatch, len(sp.values))]
		sp.values = sp.values[len(batch):]
		if !sp.encodeValues(batch) {
			for i := range batch {
				sp.encodeValues(batch[i : i+1])
			}
		}
	}
	for len(sp.keys) > 0 {
		batch := sp.keys[:min(encodeBatch, len(sp.keys))]
		sp.keys = sp.keys[len(batch):]
		if !sp.encodeKeys(batch) {
			for i := range batch {
				sp.encodeKeys(batch[i : i+1])
			}
		}
	}
	sp.values, sp.keys = sp.values[:0], sp.keys[:0]
}

func (ck scalarKey) node() yaml.Node {
	return yaml.Node{Kind: yaml.ScalarNode, Value: ck.value, Tag: ck.tag, Style: ck.style}
}

// batchNodes are the nodes of batch, in one allocation.
func batchNodes(batch []scalarKey) []yaml.Node {
	nodes := make([]yaml.Node, len(batch))
	for i, ck := range batch {
		nodes[i] = ck.node()
	}
	return nodes
}

// encodeValues prints the batch as a sequence at column 0: each item's text
// after its '-' is what the value prints after its key's ':' (" text\n",
// "\n" when empty, or a block scalar's header and its lines at column 2).
// An item starts at each line that starts with '-'; the lines of a block
// scalar start with spaces or are empty.
func (sp *scalarPrinter) encodeValues(batch []scalarKey) bool {
	doc := &yaml.Node{Kind: yaml.SequenceNode, Content: make([]*yaml.Node, len(batch))}
	nodes := batchNodes(batch)
	for i := range nodes {
		doc.Content[i] = &nodes[i]
	}
	out, ok := sp.encode(doc)
	if !ok || !strings.HasPrefix(out, "-") {
		return false
	}
	texts := make([]string, 0, len(batch))
	for start := 0; start < len(out); {
		end := start + 1
		for end < len(out) && !(out[end-1] == '\n' && out[end] == '-') {
			end++
		}
		texts = append(texts, out[start+1:end])
		start = end
	}
	if len(texts) != len(batch) {
		return false
	}
	for i, t := range texts {
		// Not a tag written out, nor a quoted value across lines.
		sp.cache[batch[i]] = encodedScalar{t, !strings.HasPrefix(t, " !") && blockLines(t)}
	}
	return true
}

// encodeKeys prints the batch as the keys of a mapping, each followed by
// ": k" on its line.
func (sp *scalarPrinter) encodeKeys(batch []scalarKey) bool {
	other := &yaml.Node{Kind: yaml.ScalarNode, Value: "k"}
	doc := &yaml.Node{Kind: yaml.MappingNode, Content: make([]*yaml.Node, 0, 2*len(batch))}
	nodes := batchNodes(batch)
	for i := range nodes {
		doc.Content = append(doc.Content, &nodes[i], other)
	}
	out, ok := sp.encode(doc)
	if !ok {
		return false
	}
	lines := strings.SplitAfter(out, "\n")
	if len(lines) != len(batch)+1 || lines[len(batch)] != "" {
		// A key across lines ("? "): alone, its text holds a line break.
		if len(batch) > 1 {
			return false
		}
		lines = []string{out}
	}
	for i, line := range lines[:len(batch)] {
		t, found := strings.CutSuffix(line, ": k\n")
		if !found && len(batch) > 1 {
			return false
		}
		// Not a key across lines, nor a tag written out.
		sp.cache[batch[i]] = encodedScalar{t, found && !strings.Contains(t, "\n") && !strings.HasPrefix(t, "!")}
	}
	return true
}

// encode prints doc with kyaml's encoder.
func (sp *scalarPrinter) encode(doc *yaml.Node) (string, bool) {
	sp.buf.Reset()
	e := yaml.NewEncoder(&sp.buf)
	err := e.Encode(doc)
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	return sp.buf.String(), err == nil
}

// text is n's text as prepare left it: a key's text before ':', or a value's
// text after ':' printed at column 0.
func (sp *scalarPrinter) text(n *yaml.Node, key bool) (string, error) {
	if !encodable(n) {
		return "", errPrintFallback
	}
	e, found := sp.cache[scalarKeyOf(n, key)]
	if !found || !e.ok {
		return "", errPrintFallback
	}
	return e.text, nil
}

// blockLines reports whether t, a value's text after its ':', is one line,
// or a block scalar ('|' or '>') whose other lines are empty or at column 2
// or more: those the printer shifts to its column. Quoted scalars the
// encoder writes across lines are left to it.
func blockLines(t string) bool {
	head, rest, _ := strings.Cut(t, "\n")
	if rest == "" {
		return true
	}
	if !strings.HasPrefix(head, " |") && !strings.HasPrefix(head, " >") {
		return false
	}
	for line := range strings.SplitSeq(strings.TrimSuffix(rest, "\n"), "\n") {
		if line != "" && !strings.HasPrefix(line, "  ") {
			return false
		}
	}
	return true
}

// plainScalar reports whether the encoder certainly prints n as it is,
// unquoted: no style asked for, a value made only of letters, digits and a
// few punctuation marks that start no YAML syntax where they stand (no ':'
// or '#' at all, space only inside), and no tag or the tag the value reads
// back as. Everything else is the encoder's to print; TestPlainScalarAgrees
// checks this rule against it.
func plainScalar(n *yaml.Node) bool {
	v := n.Value
	if n.Style != 0 || v == "" || !plainStart[v[0]] || v[len(v)-1] == ' ' {
		return false
	}
	for i := 1; i < len(v); i++ {
		if !plainInside[v[i]] {
			return false
		}
	}
	// Untagged, the encoder writes the value and lets it resolve.
	return n.Tag == "" || n.ShortTag() == plainTag(v)
}

// plainKey is plainScalar for keys, which the encoder writes otherwise
// ("? ") when long.
func plainKey(k *yaml.Node) bool { return len(k.Value) <= 64 && plainScalar(k) }

// plainTag is the tag a plain v reads back as (the ShortTag of an untagged
// scalar). YAML's values other than strings are numbers and dates (a digit,
// a sign or '.' first), ~, and a few words: a value starting with a letter
// that is none of them is a string without asking the resolver, which
// allocates. TestPlainTagAgrees checks the words against the resolver.
func plainTag(v string) string {
	if v != "" && isLetter(v[0]) && !isYAMLWord(v) {
		return yaml.NodeTagString
	}
	return (&yaml.Node{Kind: yaml.ScalarNode, Value: v}).ShortTag()
}

// yamlWords are YAML 1.2's and YAML 1.1's null and boolean words, in any
// case.
var yamlWords = []string{"null", "true", "false", "yes", "no", "on", "off", "y", "n"}

func isYAMLWord(v string) bool {
	if len(v) > 5 {
		return false
	}
	for _, w := range yamlWords {
		if strings.EqualFold(v, w) {
			return true
		}
	}
	return false
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// plainStart and plainInside are plainScalar's allow-lists for the first
// byte and for the others.
var plainStart, plainInside = func() (start, inside [256]bool) {
	for c := range 256 {
		b := byte(c)
		start[c] = isLetter(b) || b >= '0' && b <= '9' || b == '_' || b == '/'
		inside[c] = start[c] || strings.IndexByte(" .-,()=+;'\"", b) >= 0
	}
	return start, inside
}()

// VerifyPrinter checks that Serialize's own printer (printYAML) prints n
// exactly as kyaml's encoder does; printed is false when printYAML leaves n
// to the encoder. The tests run it over every object of the reference
// bundles' renders.
func VerifyPrinter(n *yaml.RNode) (printed bool, err error) {
	n, _, err = withoutInternalAnnotations(n)
	if err != nil {
		return false, err
	}
	got, perr := printYAML(n.Document(), newScalarPrinter())
	if perr != nil {
		return false, nil
	}
	want, err := encoderString(n)
	if err != nil {
		return true, err
	}
	if got != want {
		at := 0
		for at < len(got) && at < len(want) && got[at] == want[at] {
			at++
		}
		return true, fmt.Errorf("printYAML differs from the encoder at byte %d: %q, want %q", at, excerpt(got, at), excerpt(want, at))
	}
	return true, nil
}

func excerpt(s string, at int) string {
	return s[max(at-40, 0):min(at+40, len(s))]
}
