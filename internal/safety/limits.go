package safety

import (
	"cmp"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/yamlsafe"
)

// Limits of the CRD upgrade-safety check (docs/operations.md). crdify
// deep-copies every schema node's subtree and compares each served version
// with every other one, so its cost grows with the versions, the schema
// nodes and how deep they nest; beyond these limits a CRD is not checked
// (a finding says so) instead of running past every deadline. The largest
// CRDs of the 16 real bundles in ../shared/bundles: 12 versions
// (perconaservermongodbs.psmdb.percona.com), 10,533 schema nodes (the same
// CRD), an enum of 72 values (istiocnis.sailoperator.io), nesting 19
// levels deep (clusterissuers.cert-manager.io), a comparison work of
// 393,476 (perconaservermongodbs, 4 served versions).
const (
	// MaxVersions bounds spec.versions.
	MaxVersions = 32
	// MaxSchemaNodes bounds the schemas of all versions together: every
	// property, items, additionalProperties, allOf… schema counts.
	MaxSchemaNodes = 40000
	// MaxEnumValues bounds one property's enum.
	MaxEnumValues = 1000
	// MaxSchemaDepth bounds how deep a schema nests (openAPIV3Schema is 1).
	MaxSchemaDepth = 32
	// MaxComparisonWork bounds the schema nodes crdify copies and compares:
	// each version's nodes, each counted once per level it is nested at,
	// times the versions it is compared with (itself in the other CRD,
	// and every other served version).
	MaxComparisonWork = 1200000
)

// crdTooBig is a finding when o, a CRD of the bundle whose CSV is csv, is
// beyond a limit of the check, else nil. It reads the YAML node, before
// anything is decoded: decoding a CRD of 100,000 properties into Go structs
// took seconds and 150 MB, which no deadline check can interrupt, only to
// find it too big for crdify. A node yamlsafe refuses (aliases) is left to
// decodeCRD, which says why; the bundle loader bounded its depth.
func crdTooBig(o bundle.Object, csv string) *Finding {
	n := o.YNode()
	// yamlsafe.Check memoizes every node (a third of a second on 400,000
	// nodes): only aliases need it, for the walk follows them.
	if yamlsafe.HasAliases(n) && yamlsafe.Check(n, yamlsafe.DefaultLimits) != nil {
		return nil
	}
	name := o.GetName()
	refuse := func(what string, limit int, real string) *Finding {
		return &Finding{Severity: Error, Rule: "limits", CRD: name, Message: fmt.Sprintf(
			"%s ships it %s; the upgrade-safety check accepts at most %d (real CRDs: up to %s), so this CRD's upgrade is not checked: review its change by hand (olm-cmp diff shows it) and, with upgradeFrom, remove upgradeFrom once you have judged it",
			csv, what, limit, real)}
	}
	versions := crdVersions(n)
	if len(versions) > MaxVersions {
		return refuse(fmt.Sprintf("with %d versions", len(versions)), MaxVersions, "12")
	}
	served := 0
	for _, v := range versions {
		if v.served {
			served++
		}
	}
	var s schemaStats
	work := 0
	for _, v := range versions {
		if v.schema == nil {
			continue
		}
		before := s
		s.walk(v.schema, 1, ".")
		if s.depth > MaxSchemaDepth {
			return refuse(fmt.Sprintf("with the schema of version %s nested %d levels deep", v.name, s.depth), MaxSchemaDepth, "19")
		}
		if s.enum > MaxEnumValues {
			return refuse(fmt.Sprintf("with an enum of %d values at %s in version %s", s.enum, s.enumPath, v.name), MaxEnumValues, "72")
		}
		compared := 1
		if v.served {
			compared += served - 1
		}
		work += (s.weight - before.weight) * compared
	}
	if s.nodes > MaxSchemaNodes {
		return refuse(fmt.Sprintf("with %d schema properties (every property, items, additionalProperties… schema of every version)", s.nodes), MaxSchemaNodes, "10,533")
	}
	if work > MaxComparisonWork {
		return refuse(fmt.Sprintf("needing a comparison work of %d (its %d schema properties, each weighted by its depth and by the versions it is compared with: itself, and each other of its %d served versions)", work, s.nodes, served), MaxComparisonWork, "393,476")
	}
	return nil
}

// crdVersion is what the limits read of one of spec.versions.
type crdVersion struct {
	name   string
	served bool
	// schema is schema.openAPIV3Schema, nil when it is not a mapping.
	schema *yaml.Node
}

// crdVersions reads spec.versions of a CRD node as the typed CRD would
// have them.
func crdVersions(n *yaml.Node) []crdVersion {
	var out []crdVersion
	vs := lookup(n, "spec", "versions")
	if vs == nil || vs.Kind != yaml.SequenceNode {
		return nil
	}
	for _, v := range vs.Content {
		cv := crdVersion{schema: lookup(v, "schema", "openAPIV3Schema")}
		if name := lookup(v, "name"); name != nil {
			cv.name = name.Value
		}
		if served := lookup(v, "served"); served != nil {
			var b any
			cv.served = served.Decode(&b) == nil && b == true
		}
		if cv.schema != nil && cv.schema.Kind != yaml.MappingNode {
			cv.schema = nil
		}
		out = append(out, cv)
	}
	return out
}

// lookup is the value at path in mappings from n (aliases followed), nil
// when there is none.
func lookup(n *yaml.Node, path ...string) *yaml.Node {
	n = resolved(n)
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = resolved(n.Content[0])
	}
	for _, key := range path {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = resolved(n.Content[i+1])
			}
		}
		n = next
	}
	return n
}

func resolved(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// schemaStats measures schemas, walking the YAML nodes the typed
// JSONSchemaProps would be decoded from: the schemas under properties,
// patternProperties, definitions, dependencies, items (one or a list),
// additionalItems, additionalProperties, allOf, anyOf, oneOf and not (a
// boolean additionalProperties is no schema). The walk is linear: the bundle
// loader bounded the document (yamlsafe's node and depth limits), and
// crdTooBig checks it again.
type schemaStats struct {
	nodes, weight, depth, enum int
	enumPath                   string
}

func (s *schemaStats) walk(p *yaml.Node, depth int, path string) {
	p = resolved(p)
	if p == nil || p.Kind != yaml.MappingNode {
		return
	}
	s.nodes++
	s.weight += depth
	s.depth = max(s.depth, depth)
	if path == "." {
		path = ""
	}
	child := func(c *yaml.Node, step string) {
		s.walk(c, depth+1, path+step)
	}
	each := func(m *yaml.Node) {
		if m = resolved(m); m.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			child(m.Content[i+1], "."+m.Content[i].Value)
		}
	}
	list := func(l *yaml.Node, step func(int) string) {
		if l = resolved(l); l.Kind != yaml.SequenceNode {
			return
		}
		for i, c := range l.Content {
			child(c, step(i))
		}
	}
	for i := 0; i+1 < len(p.Content); i += 2 {
		v := resolved(p.Content[i+1])
		switch p.Content[i].Value {
		case "enum":
			if v.Kind == yaml.SequenceNode && len(v.Content) > s.enum {
				s.enum, s.enumPath = len(v.Content), cmp.Or(path, ".")
			}
		case "properties", "patternProperties", "definitions", "dependencies":
			each(v)
		case "items":
			if v.Kind == yaml.SequenceNode {
				list(v, func(i int) string { return fmt.Sprintf("[%d]", i) })
			} else {
				child(v, "[*]")
			}
		case "additionalItems":
			child(v, "[*]")
		case "additionalProperties":
			child(v, ".*")
		case "allOf", "anyOf", "oneOf":
			list(v, func(int) string { return "" })
		case "not":
			child(v, "")
		}
	}
}
