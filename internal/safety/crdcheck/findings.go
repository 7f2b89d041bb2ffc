package crdcheck

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/crdify/pkg/runner"
	"sigs.k8s.io/crdify/pkg/validations"
	"sigs.k8s.io/crdify/pkg/validators/version"

	"github.com/olm-cmp/olm-cmp/internal/safety/crdop"
)

// removedField is crdify's existingFieldRemoval message: "removed field : v1.^.spec.x".
var removedField = regexp.MustCompile(`^removed field : ([^.]+)\.(\^.*)$`)

// findings turns crdify's results for one CRD into findings.
func findings(old, cur *apiextensionsv1.CustomResourceDefinition, res *runner.Results) []crdop.Finding {
	var out []crdop.Finding
	name := cur.Name
	paths := newSchemaPaths(old, cur)
	removed := map[string]bool{} // "version path" of each removed field
	for _, r := range res.CRDValidation {
		each(r, func(sev string, msg string) {
			f := crdop.Finding{Severity: sev, Rule: r.Name, CRD: name, Message: plainMessage(msg)}
			switch r.Name {
			case "existingFieldRemoval":
				if m := removedField.FindStringSubmatch(msg); m != nil {
					f.Version, f.Path = m[1], paths.path(m[2])
					f.Message = "field removed: objects that set it lose it"
					removed[f.Version+" "+f.Path] = true
				}
			case "storedVersionRemoval":
				f.Version = strings.Join(removedVersions(old, cur), ",")
				f.Message = fmt.Sprintf("version %s is served or stored by the CRD the cluster runs, and the new CRD drops it: objects stored in it become unreadable", f.Version)
			}
			out = append(out, f)
		})
	}
	same, _ := propertyFindings(res.SameVersionValidation, name, paths, nil)
	served, absent := propertyFindings(res.ServedVersionValidation, name, paths, declared(cur))
	out = append(append(out, same...), served...)
	return dropCovered(out, removed, absent, paths)
}

// propertyFindings turns crdify's per-version results into findings.
// declared, for served-version pairs ("v1 -> v2"), holds the crdify paths
// each version declares: a field the later version lacks gets a plain
// message instead of crdify's comparison with an empty schema, and its
// "version path" is returned in absent.
func propertyFindings(group []version.VersionedPropertyComparisonResult, crd string, paths schemaPaths, declared map[string]map[string]bool) (out []crdop.Finding, absent map[string]bool) {
	absent = map[string]bool{}
	for _, v := range group {
		_, later, pair := strings.Cut(v.Version, " -> ")
		for _, p := range v.PropertyComparisons {
			lacks := pair && declared[later] != nil && !declared[later][p.Property]
			for _, r := range p.ComparisonResults {
				each(r, func(sev string, msg string) {
					f := crdop.Finding{Severity: sev, Rule: r.Name, CRD: crd, Version: v.Version, Path: paths.path(p.Property)}
					switch {
					case lacks:
						f.Message = fmt.Sprintf("field absent in %s: a value set through the other version is lost when the object is read or written through %s", later, later)
						absent[f.Version+" "+f.Path] = true
					case r.Name == "unhandled":
						f.Message = unhandledMessage(msg)
					case r.Name == "oneOf":
						// crdify prints the schemas as Go structs: keep its sentence.
						f.Message, _, _ = strings.Cut(msg, ": [")
					default:
						f.Message = plainMessage(msg)
					}
					out = append(out, f)
				})
			}
		}
	}
	return out, absent
}

// declared maps each version of c to the crdify paths its schema declares.
func declared(c *apiextensionsv1.CustomResourceDefinition) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, v := range c.Spec.Versions {
		if v.Schema == nil {
			continue
		}
		out[v.Name] = map[string]bool{}
		for p := range validations.FlattenCRDVersion(v) {
			out[v.Name][p] = true
		}
	}
	return out
}

// dropCovered reports each lost field once, at the top-most one: it drops
// the findings below a field removed or absent in the same version (pair),
// and the other rules' findings of a removed field itself (crdify also
// reports its type as changed to "").
func dropCovered(fs []crdop.Finding, removed, absent map[string]bool, paths schemaPaths) []crdop.Finding {
	lost := func(version, path string) bool { return removed[version+" "+path] || absent[version+" "+path] }
	return slices.DeleteFunc(fs, func(f crdop.Finding) bool {
		if f.Path == "" {
			return false
		}
		if paths.anyAncestor(f.Path, func(p string) bool { return lost(f.Version, p) }) {
			return true
		}
		return removed[f.Version+" "+f.Path] && f.Rule != "existingFieldRemoval"
	})
}

func each(r validations.ComparisonResult, f func(string, string)) {
	for _, e := range r.Errors {
		f(crdop.Error, e)
	}
	for _, w := range r.Warnings {
		f(crdop.Warning, w)
	}
}

func removedVersions(old, cur *apiextensionsv1.CustomResourceDefinition) []string {
	var out []string
	for _, v := range old.Status.StoredVersions {
		if !slices.ContainsFunc(cur.Spec.Versions, func(n apiextensionsv1.CustomResourceDefinitionVersion) bool { return n.Name == v }) {
			out = append(out, v)
		}
	}
	return out
}
