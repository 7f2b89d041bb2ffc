package safety

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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

// crdTooBig is a finding when c, a CRD of the bundle whose CSV is csv, is
// beyond a limit of the check, else nil.
func crdTooBig(c *apiextensionsv1.CustomResourceDefinition, csv string) *Finding {
	refuse := func(what string, limit int, real string) *Finding {
		return &Finding{Severity: Error, Rule: "limits", CRD: c.Name, Message: fmt.Sprintf(
			"%s ships it %s; the upgrade-safety check accepts at most %d (real CRDs: up to %s), so this CRD's upgrade is not checked: review its change by hand (olm-cmp diff shows it) and, with upgradeFrom, remove upgradeFrom once you have judged it",
			csv, what, limit, real)}
	}
	if n := len(c.Spec.Versions); n > MaxVersions {
		return refuse(fmt.Sprintf("with %d versions", n), MaxVersions, "12")
	}
	served := 0
	for _, v := range c.Spec.Versions {
		if v.Served {
			served++
		}
	}
	var s schemaStats
	work := 0
	for _, v := range c.Spec.Versions {
		if v.Schema == nil {
			continue
		}
		before := s
		s.walk(v.Schema.OpenAPIV3Schema, 1, ".")
		if s.depth > MaxSchemaDepth {
			return refuse(fmt.Sprintf("with the schema of version %s nested %d levels deep", v.Name, s.depth), MaxSchemaDepth, "19")
		}
		if s.enum > MaxEnumValues {
			return refuse(fmt.Sprintf("with an enum of %d values at %s in version %s", s.enum, s.enumPath, v.Name), MaxEnumValues, "72")
		}
		compared := 1
		if v.Served {
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

// schemaStats measures schemas. The walk is linear: decodeCRD bounded the
// document (yamlsafe's node and depth limits).
type schemaStats struct {
	nodes, weight, depth, enum int
	enumPath                   string
}

func (s *schemaStats) walk(p *apiextensionsv1.JSONSchemaProps, depth int, path string) {
	if p == nil {
		return
	}
	s.nodes++
	s.weight += depth
	s.depth = max(s.depth, depth)
	if len(p.Enum) > s.enum {
		s.enum, s.enumPath = len(p.Enum), path
	}
	if path == "." {
		path = ""
	}
	child := func(c *apiextensionsv1.JSONSchemaProps, step string) {
		s.walk(c, depth+1, path+step)
	}
	each := func(m map[string]apiextensionsv1.JSONSchemaProps) {
		for k, c := range m {
			child(&c, "."+k)
		}
	}
	each(p.Properties)
	each(p.PatternProperties)
	each(p.Definitions)
	for k, d := range p.Dependencies {
		child(d.Schema, "."+k)
	}
	if p.Items != nil {
		child(p.Items.Schema, "[*]")
		for i := range p.Items.JSONSchemas {
			child(&p.Items.JSONSchemas[i], fmt.Sprintf("[%d]", i))
		}
	}
	if p.AdditionalItems != nil {
		child(p.AdditionalItems.Schema, "[*]")
	}
	if p.AdditionalProperties != nil {
		child(p.AdditionalProperties.Schema, ".*")
	}
	for _, l := range [][]apiextensionsv1.JSONSchemaProps{p.AllOf, p.AnyOf, p.OneOf} {
		for i := range l {
			child(&l[i], "")
		}
	}
	child(p.Not, "")
}
