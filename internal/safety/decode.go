package safety

import (
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/yamlsafe"
)

// decodeCRD decodes a CRD node into the typed v1 struct in time linear in
// its size. kyaml's MarshalJSON decodes through yaml.v3, whose duplicate-key
// check compares every key of a mapping with every later one: a schema of
// 100,000 properties took minutes there. jsonValue walks the node once and
// refuses a duplicate key with one set per mapping; yamlsafe bounds the walk
// first (alias cycles and expansions, depth), since tests and callers may
// hand over nodes the bundle loader never checked.
func decodeCRD(o bundle.Object) (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := crdJSON(o)
	if err != nil {
		return nil, err
	}
	return decodeCRDFrom(o, data)
}

// crdJSON is the JSON decodeCRD decodes a CRD from: the verdict of its
// upgrade is cached by it (verdicts.go), so a cached one is found without
// decoding the typed CRD (most of a warm check's time).
func crdJSON(o bundle.Object) ([]byte, error) {
	data, err := nodeJSON(o.YNode())
	if err != nil {
		return nil, notACRD(o, err)
	}
	return data, nil
}

// decodeCRDFrom decodes o's CRD from data, its crdJSON.
func decodeCRDFrom(o bundle.Object, data []byte) (*apiextensionsv1.CustomResourceDefinition, error) {
	c := &apiextensionsv1.CustomResourceDefinition{}
	if err := json.Unmarshal(data, c); err != nil {
		return nil, notACRD(o, err)
	}
	return c, nil
}

func notACRD(o bundle.Object, err error) error {
	return fmt.Errorf("%s: CustomResourceDefinition %q is not a valid apiextensions.k8s.io/v1 CRD: %v", o.File, o.GetName(), err)
}

func nodeJSON(n *yaml.Node) ([]byte, error) {
	if err := yamlsafe.Check(n, yamlsafe.DefaultLimits); err != nil {
		return nil, err
	}
	v, err := jsonValue(n)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// jsonValue is n as encoding/json values, as yaml.v3 would decode it into
// an interface{} (merge keys included: explicit keys win, then earlier
// merged mappings).
func jsonValue(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return jsonValue(n.Content[0])
	case yaml.AliasNode:
		return jsonValue(n.Alias)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := jsonValue(c)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		return jsonMapping(n)
	case yaml.ScalarNode:
		if n.ShortTag() == yaml.NodeTagString {
			return n.Value, nil
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, err
		}
		return v, nil
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

func jsonMapping(n *yaml.Node) (map[string]any, error) {
	out := make(map[string]any, len(n.Content)/2)
	line := make(map[string]int, len(n.Content)/2)
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: a mapping key that is not a string", k.Line)
		}
		if first, dup := line[k.Value]; dup {
			return nil, fmt.Errorf("line %d: mapping key %q already defined at line %d", k.Line, k.Value, first)
		}
		line[k.Value] = k.Line
		val, err := jsonValue(v)
		if err != nil {
			return nil, err
		}
		out[k.Value] = val
	}
	for _, m := range merges {
		if m.Kind == yaml.AliasNode {
			m = m.Alias
		}
		sources := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			sources = m.Content
		}
		for _, s := range sources {
			if s.Kind == yaml.AliasNode {
				s = s.Alias
			}
			if s.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("line %d: a merge key (<<) must name a mapping or a list of mappings", m.Line)
			}
			merged, err := jsonMapping(s)
			if err != nil {
				return nil, err
			}
			for k, v := range merged {
				if _, set := out[k]; !set {
					out[k] = v
				}
			}
		}
	}
	return out, nil
}
