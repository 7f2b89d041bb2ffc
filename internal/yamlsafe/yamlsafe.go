// Package yamlsafe parses YAML that olm-cmp does not trust (bundle files,
// extra manifests beside olm-cmp.yaml, patches, catalogs) with bounds on the
// work it can cause. The YAML parser itself builds alias cycles (`a: &a
// [*a]`) and expands nothing, so the danger comes later: every walker that
// follows aliases would loop forever (a stack overflow is fatal to the whole
// server, recover cannot catch it), and a few hundred bytes of nested
// aliases ("billion laughs") expand to gigabytes. Check refuses both, and
// documents too large or too deep to be honest Kubernetes objects, before
// any other code walks the nodes.
//
// The bound that matters is the expanded tree, counted before anything is
// expanded: sixteen levels of anchors that each name the level below twice
// fit in 1.5 KB and expand to a million nodes. Check counts the expansion
// in time proportional to the nodes written (each anchor's size is counted
// once), Parse refuses a file whose aliases add more than MaxAliasNodes to
// it, and DeAnchor expands in time proportional to the result (kyaml's
// de-anchoring copies every mapping's subtree again at each level and on
// each visit, minutes for such a file).
package yamlsafe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Limits bound one document.
type Limits struct {
	// MaxNodes caps the nodes of a document once its aliases are expanded.
	// The largest real bundle object (eclipse-che's 2 MB CRD) has about
	// 150k nodes.
	MaxNodes int
	// MaxDepth caps nesting. Real CRD schemas nest about 30 levels deep.
	MaxDepth int
	// MaxAliasNodes caps the nodes alias expansion adds to those written,
	// over all the documents of one Parse (one file), and over a whole
	// bundle in the bundle loader. No real bundle uses anchors at all; the
	// cap still lets a large schema be shared by a few CRD versions. Without
	// it, a 1.5 KB file could stand for the million nodes MaxNodes allows,
	// each costing memory and time in every later step.
	MaxAliasNodes int
}

// DefaultLimits are the limits every caller in olm-cmp uses.
var DefaultLimits = Limits{MaxNodes: 1 << 20, MaxDepth: 256, MaxAliasNodes: 1 << 17}

// maxNodesPerFile bounds the YAML items of one file before it is parsed:
// see PreScan.
const maxNodesPerFile = 1 << 19

// Check verifies that n (a document's root) has no alias cycle, expands to
// at most l.MaxNodes nodes, nests at most l.MaxDepth levels and that its
// aliases add at most l.MaxAliasNodes nodes.
func Check(n *yaml.Node, l Limits) error {
	_, err := Measure(n, l)
	return err
}

// Measure checks n as Check does, without the MaxAliasNodes bound, and
// returns how many nodes expanding its aliases would add to the nodes
// written (0 without aliases), so a caller can bound several documents
// together. Nothing is expanded: each anchor's size is computed once, so
// the cost is that of the nodes written, whatever they expand to.
func Measure(n *yaml.Node, l Limits) (added int, err error) {
	added, _, err = measure(n, l)
	return added, err
}

// measure is Measure; marked says whether n holds an anchor or an alias
// (HasAliases), which the first walk finds out on the way.
func measure(n *yaml.Node, l Limits) (added int, marked bool, err error) {
	// Nearly every document has no alias: one walk without the memo's
	// maps decides it (a map entry per node was most of a bundle load's
	// checking). Until the first alias the walks below visit the same
	// nodes in the same order, so an error found first is the same error.
	if marked, err := plainSize(n, 0, l); !marked {
		return 0, false, err
	}
	c := checker{l: l, memo: map[*yaml.Node]int{}, active: map[*yaml.Node]bool{}}
	expanded, err := c.size(n, 0)
	if err != nil || !c.sawAlias {
		return 0, true, err // without aliases nothing expands: no second walk
	}
	added = expanded - written(n)
	if l.MaxAliasNodes > 0 && added > l.MaxAliasNodes {
		return 0, true, aliasBudgetError(l.MaxAliasNodes)
	}
	return added, true, nil
}

func aliasBudgetError(max int) error {
	return fmt.Errorf("YAML aliases would add more than %d nodes once expanded (anchors that name anchors: an alias bomb): write the repeated parts out, or share less", max)
}

// written counts the nodes of n as the parser built them, aliases counted
// as one node and not followed.
func written(n *yaml.Node) int {
	size := 1
	if n.Kind == yaml.AliasNode {
		return size
	}
	for _, c := range n.Content {
		size += written(c)
	}
	return size
}

// plainSize checks n as checker.size does while n has no anchor and no
// alias: marked is true, and nothing else is said, once one is met.
func plainSize(n *yaml.Node, depth int, l Limits) (marked bool, err error) {
	_, marked, err = plainWalk(n, depth, l)
	return marked, err
}

func plainWalk(n *yaml.Node, depth int, l Limits) (size int, marked bool, err error) {
	if depth > l.MaxDepth {
		return 0, false, fmt.Errorf("nested more than %d levels deep", l.MaxDepth)
	}
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return 0, true, nil
	}
	size = 1
	for _, child := range n.Content {
		s, marked, err := plainWalk(child, depth+1, l)
		if marked || err != nil {
			return 0, marked, err
		}
		if size += s; size > l.MaxNodes {
			return 0, false, fmt.Errorf("aliases expand to more than %d YAML nodes", l.MaxNodes)
		}
	}
	return size, false, nil
}

type checker struct {
	l      Limits
	memo   map[*yaml.Node]int
	active map[*yaml.Node]bool
	// sawAlias is set once size meets an alias.
	sawAlias bool
}

func (c *checker) size(n *yaml.Node, depth int) (int, error) {
	if depth > c.l.MaxDepth {
		return 0, fmt.Errorf("nested more than %d levels deep", c.l.MaxDepth)
	}
	if n.Kind == yaml.AliasNode {
		c.sawAlias = true
		if n.Alias == nil {
			return 0, fmt.Errorf("alias *%s has no anchor", n.Value)
		}
		if c.active[n.Alias] {
			return 0, fmt.Errorf("alias *%s refers to a node that contains it (an endless loop)", n.Value)
		}
		return c.size(n.Alias, depth)
	}
	if s, ok := c.memo[n]; ok {
		return s, nil
	}
	c.active[n] = true
	size := 1
	for _, child := range n.Content {
		s, err := c.size(child, depth+1)
		if err != nil {
			return 0, err
		}
		if size += s; size > c.l.MaxNodes {
			return 0, fmt.Errorf("aliases expand to more than %d YAML nodes", c.l.MaxNodes)
		}
	}
	delete(c.active, n)
	c.memo[n] = size
	return size, nil
}

// HasAliases reports whether n holds an anchor or an alias (most documents
// hold none, and need no de-anchoring).
func HasAliases(n *yaml.Node) bool {
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		return true
	}
	for _, c := range n.Content {
		if HasAliases(c) {
			return true
		}
	}
	return false
}

// DeAnchor checks n and replaces its aliases by copies of what they name,
// applies merge keys (`<<: *base`, `<<: [*a, *b]`: the mapping's own keys
// win, then the earlier of the merged mappings) and clears every anchor,
// as kyaml's RNode.DeAnchor does. It modifies n in place and works in time
// proportional to the expanded tree: each anchor is expanded once and each
// alias copies the result.
func DeAnchor(n *yaml.Node, l Limits) (*yaml.Node, error) {
	if err := Check(n, l); err != nil {
		return nil, err
	}
	e := expander{done: map[*yaml.Node]bool{}}
	return e.expand(n)
}

type expander struct {
	done map[*yaml.Node]bool // nodes already expanded in place
}

func (e *expander) expand(n *yaml.Node) (*yaml.Node, error) {
	if n.Kind == yaml.AliasNode {
		// Check refused aliases without an anchor and cycles.
		t, err := e.expand(n.Alias)
		if err != nil {
			return nil, err
		}
		return yaml.CopyYNode(t), nil
	}
	if e.done[n] {
		return n, nil
	}
	e.done[n] = true
	n.Anchor = ""
	for i, c := range n.Content {
		x, err := e.expand(c)
		if err != nil {
			return nil, err
		}
		n.Content[i] = x
	}
	if n.Kind == yaml.MappingNode {
		return n, merge(n)
	}
	return n, nil
}

// merge applies the merge key of the expanded mapping n, if it has one.
func merge(n *yaml.Node) error {
	at := -1
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Tag == yaml.MergeTag {
			if at >= 0 {
				return errors.New("a mapping has two merge keys (<<)")
			}
			at = i
		}
	}
	if at < 0 {
		return nil
	}
	v := n.Content[at+1]
	sources := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		sources = v.Content
	}
	own := slices.Concat(n.Content[:at], n.Content[at+2:])
	index := map[string]int{} // key → its position in out
	for i := 0; i+1 < len(own); i += 2 {
		if _, dup := index[own[i].Value]; !dup {
			index[own[i].Value] = i
		}
	}
	out := own
	fromOwn := len(own)
	// Lowest precedence first: the last mapping of a list, up to the first;
	// a key the mapping itself has is never replaced.
	for j := len(sources) - 1; j >= 0; j-- {
		src := sources[j]
		if src.Kind != yaml.MappingNode {
			return fmt.Errorf("line %d: the merge key << takes a mapping or a list of mappings, not a YAML %s", src.Line, kindWord(src))
		}
		for i := 0; i+1 < len(src.Content); i += 2 {
			k, val := src.Content[i], src.Content[i+1]
			if pos, ok := index[k.Value]; ok {
				if pos >= fromOwn {
					out[pos], out[pos+1] = k, val
				}
				continue
			}
			index[k.Value] = len(out)
			out = append(out, k, val)
		}
	}
	n.Content = out
	return nil
}

func kindWord(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return "scalar"
	case yaml.SequenceNode:
		return "sequence"
	}
	return "document"
}

// PreScan refuses data that would make the YAML parser itself build more
// than maxNodesPerFile nodes, before it runs: parsing a 2 MB file of a
// million one-character scalars costs over a gigabyte. Every node starts at
// a scalar, a `-`, a `{`/`[` or a key, so counting separators bounds the
// node count from above cheaply; honest files stay far below the limit.
// Flow mappings and colons are counted whatever follows them: JSON is YAML,
// and `{"a":{"b":"c"}}` has no ": " and no line break (a 7.5 MB file of
// them cost 500 MB before the count caught it).
func PreScan(data []byte) error {
	seps := bytes.Count(data, []byte("\n")) + bytes.Count(data, []byte(",")) +
		bytes.Count(data, []byte("- ")) + bytes.Count(data, []byte(":")) +
		bytes.Count(data, []byte("[")) + bytes.Count(data, []byte("{"))
	if seps > maxNodesPerFile {
		return fmt.Errorf("over %d YAML items (lines, list items or keys): not a Kubernetes manifest a bundle or repository should hold", maxNodesPerFile)
	}
	return nil
}

// Parse parses every document of data and checks each with DefaultLimits.
// It returns each document's root node (a comment leading the document is
// kept on it); an empty document is nil, so document numbers stay stable
// for error messages.
func Parse(data []byte) ([]*yaml.Node, error) {
	docs, _, err := ParseMarked(data)
	return docs, err
}

// ParseMarked is Parse, and says whether any of the documents holds an
// anchor or an alias (HasAliases of each), found by Parse's own walk: a
// caller that de-anchors need not walk every document again to learn
// that none does.
func ParseMarked(data []byte) (docs []*yaml.Node, marked bool, err error) {
	if err := PreScan(data); err != nil {
		return nil, false, err
	}
	added := 0
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for i := 1; ; i++ {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return docs, marked, nil
			}
			return nil, false, fmt.Errorf("document %d: %w", i, err)
		}
		if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
			docs = append(docs, nil)
			continue
		}
		n := doc.Content[0]
		if doc.HeadComment != "" && n.HeadComment == "" {
			n.HeadComment = doc.HeadComment
		}
		a, m, err := measure(n, DefaultLimits)
		if err != nil {
			return nil, false, fmt.Errorf("document %d: %w", i, err)
		}
		if added += a; added > DefaultLimits.MaxAliasNodes {
			return nil, false, fmt.Errorf("document %d: %w", i, aliasBudgetError(DefaultLimits.MaxAliasNodes))
		}
		marked = marked || m
		docs = append(docs, n)
	}
}
