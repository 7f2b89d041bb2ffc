package crdcheck

import (
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/crdify/pkg/validations"
)

// schemaPaths translates crdify's property paths ("^.spec.solvers.items.dns01",
// where "items" may be an array's items or a property named items) into the
// JSON paths `olm-cmp diff` writes (".spec.solvers[*].dns01"; "." for the
// root), and knows each JSON path's parent. It walks the schemas with
// crdify's own walker, whose unambiguous field path tells the two apart.
type schemaPaths struct {
	json   map[string]string // crdify path -> JSON path ("" for the root)
	parent map[string]string // JSON path -> its parent's
}

func newSchemaPaths(crds ...*apiextensionsv1.CustomResourceDefinition) schemaPaths {
	sp := schemaPaths{json: map[string]string{}, parent: map[string]string{}}
	for _, c := range crds {
		for _, v := range c.Spec.Versions {
			if v.Schema == nil {
				continue
			}
			// fld and js are the field and JSON paths of the current node's
			// ancestors, by depth (crdify walks depth first).
			var fld, js []string
			validations.SchemaHas(v.Schema.OpenAPIV3Schema, field.NewPath("^"), field.NewPath("^"), nil,
				func(_ *apiextensionsv1.JSONSchemaProps, fldPath, simple *field.Path, ancestry []*apiextensionsv1.JSONSchemaProps) bool {
					d, f, p := len(ancestry), fldPath.String(), ""
					if d > 0 {
						p = js[d-1] + jsonStep(strings.TrimPrefix(f, fld[d-1]))
						sp.parent[p] = js[d-1]
					}
					fld, js = append(fld[:d], f), append(js[:d], p)
					sp.json[simple.String()] = p
					return false
				})
		}
	}
	return sp
}

// jsonStep turns one step of crdify's field path into a JSON path step.
func jsonStep(step string) string {
	switch {
	case strings.HasPrefix(step, ".properties[") && strings.HasSuffix(step, "]"):
		return "." + strings.TrimSuffix(strings.TrimPrefix(step, ".properties["), "]")
	case step == ".items":
		return "[*]"
	case strings.HasPrefix(step, ".items.jsonSchemas"): // a tuple's items: "[0]"
		return strings.TrimPrefix(step, ".items.jsonSchemas")
	case step == ".additionalProperties.schema":
		return ".*"
	}
	return step // .allOf[0], .not, .patternProperties[re], ...
}

// path is the JSON path of crdify's property path p ("." for the root).
func (sp schemaPaths) path(p string) string {
	j, ok := sp.json[p]
	if !ok { // not in a schema: keep crdify's form, without its root marker
		j = strings.TrimPrefix(p, "^")
	}
	if j == "" {
		return "."
	}
	return j
}

// anyAncestor reports whether f holds for an ancestor of JSON path p (the
// root excluded), trying the nearest first.
func (sp schemaPaths) anyAncestor(p string, f func(string) bool) bool {
	for {
		parent, ok := sp.parent[p]
		if !ok || parent == "" {
			return false
		}
		if f(parent) {
			return true
		}
		p = parent
	}
}
