// Package yamlsafe parses YAML that olm-cmp does not trust (bundle files,
// extra manifests beside olm-cmp.yaml, patches, catalogs) with bounds on the
// work it can cause. The YAML parser itself builds alias cycles (`a: &a
// [*a]`) and expands nothing, so the danger comes later: every walker that
// follows aliases would loop forever (a stack overflow is fatal to the whole
// server, recover cannot catch it), and a few hundred bytes of nested
// aliases ("billion laughs") expand to gigabytes. Check refuses both, and
// documents too large or too deep to be honest Kubernetes objects, before
// any other code walks the nodes.
package yamlsafe

import (
	"bytes"
	"errors"
	"fmt"
	"io"

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
}

// DefaultLimits are the limits every caller in olm-cmp uses.
var DefaultLimits = Limits{MaxNodes: 1 << 20, MaxDepth: 256}

// maxNodesPerFile bounds the YAML items of one file before it is parsed:
// see PreScan.
const maxNodesPerFile = 1 << 19

// Check verifies that n (a document's root) has no alias cycle, expands to
// at most l.MaxNodes nodes and nests at most l.MaxDepth levels.
func Check(n *yaml.Node, l Limits) error {
	c := checker{l: l, memo: map[*yaml.Node]int{}, active: map[*yaml.Node]bool{}}
	_, err := c.size(n, 0)
	return err
}

type checker struct {
	l      Limits
	memo   map[*yaml.Node]int
	active map[*yaml.Node]bool
}

func (c *checker) size(n *yaml.Node, depth int) (int, error) {
	if depth > c.l.MaxDepth {
		return 0, fmt.Errorf("nested more than %d levels deep", c.l.MaxDepth)
	}
	if n.Kind == yaml.AliasNode {
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

// DeAnchor checks n and replaces its aliases by copies of what they name.
func DeAnchor(n *yaml.Node, l Limits) (*yaml.Node, error) {
	if err := Check(n, l); err != nil {
		return nil, err
	}
	rn := yaml.NewRNode(n)
	if err := rn.DeAnchor(); err != nil {
		return nil, err
	}
	return rn.YNode(), nil
}

// PreScan refuses data that would make the YAML parser itself build more
// than maxNodesPerFile nodes, before it runs: parsing a 2 MB file of a
// million one-character scalars costs over a gigabyte. Every node starts at
// a scalar, a `-`, a `{`/`[` or a key, so counting separators bounds the
// node count from above cheaply; honest files stay far below the limit.
func PreScan(data []byte) error {
	seps := bytes.Count(data, []byte("\n")) + bytes.Count(data, []byte(",")) +
		bytes.Count(data, []byte("- ")) + bytes.Count(data, []byte(": ")) + bytes.Count(data, []byte("["))
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
	if err := PreScan(data); err != nil {
		return nil, err
	}
	var docs []*yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for i := 1; ; i++ {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return docs, nil
			}
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
			docs = append(docs, nil)
			continue
		}
		n := doc.Content[0]
		if doc.HeadComment != "" && n.HeadComment == "" {
			n.HeadComment = doc.HeadComment
		}
		if err := Check(n, DefaultLimits); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		docs = append(docs, n)
	}
}
