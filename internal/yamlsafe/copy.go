package yamlsafe

import "sigs.k8s.io/kustomize/kyaml/yaml"

// CopyTree returns a distinct copy of n, as kyaml's CopyYNode does (every
// node and Content slice new, an alias still naming its anchor in n), in
// two allocations: the nodes in one array, the Content slices in another.
// A render copies each CRD of the bundle it changes (the bundle is shared);
// node by node that was a megabyte CRD's hundred thousand allocations, and
// as many objects for the collector to mark. Each Content slice has exactly
// its length as capacity, so appending to one (a new annotation) moves it
// out of the shared array instead of writing over a neighbour's.
func CopyTree(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	nodes, edges := treeSize(n)
	c := copier{nodes: make([]yaml.Node, 0, nodes), edges: make([]*yaml.Node, 0, edges)}
	return c.copy(n)
}

func treeSize(n *yaml.Node) (nodes, edges int) {
	nodes, edges = 1, len(n.Content)
	for _, ch := range n.Content {
		a, b := treeSize(ch)
		nodes, edges = nodes+a, edges+b
	}
	return nodes, edges
}

type copier struct {
	nodes []yaml.Node  // capacity: every node of the tree, so never moved
	edges []*yaml.Node // capacity: every Content entry of the tree
}

func (c *copier) copy(n *yaml.Node) *yaml.Node {
	c.nodes = append(c.nodes, *n)
	out := &c.nodes[len(c.nodes)-1]
	if len(n.Content) > 0 {
		start := len(c.edges)
		c.edges = append(c.edges, n.Content...)
		out.Content = c.edges[start:len(c.edges):len(c.edges)]
		for i, ch := range n.Content {
			out.Content[i] = c.copy(ch)
		}
	}
	return out
}
