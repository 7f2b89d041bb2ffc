package upgrade

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// dupKeyDoc is an Argo CD Application or ApplicationSet in which a key
// appears twice in one mapping. Kubernetes' YAML reader refuses such a
// manifest (kubectl, Argo CD applying an app of apps), other readers keep
// the last one, and yaml.v3's nodes hold both: upgrade would read, and
// edit, the block nothing else reads. A directory one of its source paths
// may name is refused (Of), naming the key.
type dupKeyDoc struct {
	what, file  string
	line        int    // where the document starts
	key         string // "spec.source"
	first, then int    // the lines of the key's two places
	paths       []*regexp.Regexp
	repoURLs    []string // every repoURL it names
}

func (d dupKeyDoc) error(dir string) error {
	return fmt.Errorf("%s (%s:%d) may render %s, but its key %s appears twice (lines %d and %d): Kubernetes refuses such a manifest and other readers keep the last one, so upgrade cannot tell which one Argo CD reads: remove one of them",
		d.what, d.file, d.line, dir, echo.Quote(d.key), d.first, d.then)
}

// duplicateKey finds the first key of n (a document's root) that appears
// twice in one mapping: its dotted path and the lines of both. Aliases are
// not followed (what they stand for is checked where it is written; the
// scan's yamlsafe bounds hold), merge keys (<<) may repeat.
func duplicateKey(n *yaml.Node, at string) (key string, line, first int, ok bool) {
	switch {
	case n == nil || n.Kind == yaml.AliasNode:
		return "", 0, 0, false
	case n.Kind == yaml.MappingNode:
		seen := make(map[string]int, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Tag == "!!merge" || k.Kind != yaml.ScalarNode {
				continue
			}
			p := k.Value
			if at != "" {
				p = at + "." + k.Value
			}
			if l, dup := seen[k.Value]; dup {
				return p, k.Line, l, true
			}
			seen[k.Value] = k.Line
			if key, line, first, ok := duplicateKey(n.Content[i+1], p); ok {
				return key, line, first, ok
			}
		}
	default:
		for i, c := range n.Content {
			p := at
			if n.Kind == yaml.SequenceNode {
				p = fmt.Sprintf("%s[%d]", at, i)
			}
			if key, line, first, ok := duplicateKey(c, p); ok {
				return key, line, first, ok
			}
		}
	}
	return "", 0, 0, false
}

// otherRepo reports whether every repoURL d names is known to be another
// repository's: then it renders none of this one's directories.
func (d dupKeyDoc) otherRepo(ix *Index) bool {
	for _, u := range d.repoURLs {
		if same, known := ix.sameRepo(u); same || !known {
			return false
		}
	}
	return len(d.repoURLs) > 0
}

// sourcePaths are the directories any "path" key of n may name (each
// block's, the shadowed ones too; templates matching anything), and the
// values of its repoURL keys.
func sourcePaths(n *yaml.Node) (out []*regexp.Regexp, repoURLs []string) {
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil || n.Kind == yaml.AliasNode {
			return
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if v := n.Content[i+1]; n.Content[i].Value == "repoURL" && v.Kind == yaml.ScalarNode {
					repoURLs = append(repoURLs, v.Value)
				}
				if v := n.Content[i+1]; n.Content[i].Value == "path" && v.Kind == yaml.ScalarNode && v.Value != "" {
					p := v.Value
					if !templateAny().MatchString(p) {
						p = path.Clean(strings.TrimPrefix(p, "./"))
					}
					if re := pathPattern(p); re != nil {
						out = append(out, re)
					}
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	return out, repoURLs
}
