package safety

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/crdify/pkg/config"
	"sigs.k8s.io/crdify/pkg/runner"
	"sigs.k8s.io/crdify/pkg/validations"
	"sigs.k8s.io/crdify/pkg/validations/property"
	"sigs.k8s.io/crdify/pkg/validators/version"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/convert"
	"github.com/olm-cmp/olm-cmp/internal/yamlsafe"
)

// crdifyConfig is OLM v1's configuration of crdify (operator-controller's
// CRD upgrade-safety preflight): every validation at its strictest default,
// except that description changes are ignored and new enum values allowed;
// CRDs converted by a webhook skip the comparisons across served versions
// (the webhook converts between them); any change no validation handles is
// an error. crdify itself tolerates problems the old CRD already had across
// its served versions.
func crdifyConfig() *config.Config {
	return &config.Config{
		Conversion:           config.ConversionPolicyIgnore,
		UnhandledEnforcement: config.EnforcementPolicyError,
		Validations: []config.ValidationConfig{
			{Name: "description", Enforcement: config.EnforcementPolicyNone},
			{
				Name:          "enum",
				Enforcement:   config.EnforcementPolicyError,
				Configuration: map[string]any{"additionPolicy": property.AdditionPolicyAllow},
			},
		},
	}
}

// checkCRDs compares every CRD of from with the CRD of the same name in to,
// both as the render applies them (see renderedCRDNodes): OLM v1 checks the
// CRDs it renders, and a conversion webhook it wires in changes crdify's
// verdict. A CRD beyond the check's limits (limits.go), or with a version
// crdify cannot read, gets a finding instead of a verdict. It stops with
// ctx's error once ctx is done.
func checkCRDs(ctx context.Context, from, to *bundle.Bundle, keepCRDs bool) ([]Finding, error) {
	curs, err := renderedCRDNodes(to)
	if err != nil {
		return nil, err
	}
	newCRDs := make(map[string]bundle.Object, len(curs))
	for _, c := range curs {
		newCRDs[c.GetName()] = c
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	olds, err := renderedCRDNodes(from)
	if err != nil {
		return nil, err
	}
	r, err := newCrdifyRunner(crdifyConfig())
	if err != nil {
		return nil, fmt.Errorf("configuring the CRD upgrade-safety checks: %w", err)
	}
	var out []Finding
	for _, oldNode := range olds {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		curNode, ok := newCRDs[oldNode.GetName()]
		if !ok {
			out = append(out, crdRemoved(oldNode.GetName(), to.CSV.Name, keepCRDs))
			continue
		}
		// An unchanged CRD is safe to keep, however big: crdify would find
		// the same issues on both sides and subtract them all. Most CRDs of
		// a bump are unchanged: comparing the nodes first spares decoding
		// them (most of the check's time on big CRDs).
		if sameSpec(oldNode, curNode) {
			continue
		}
		// The limits are judged on the nodes, before decoding: decoding
		// cannot be interrupted, and a CRD beyond them (100,000 properties)
		// took seconds and 150 MB to decode. A big CRD that differs only
		// in key order is therefore reported, not passed as unchanged.
		if f := cmp.Or(crdTooBig(oldNode, from.CSV.Name), crdTooBig(curNode, to.CSV.Name)); f != nil {
			out = append(out, *f)
			continue
		}
		old, err := decodeCRD(oldNode)
		if err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cur, err := decodeCRD(curNode)
		if err != nil {
			return nil, err
		}
		if equality.Semantic.DeepEqual(old.Spec, cur.Spec) {
			continue
		}
		if f := cmp.Or(withoutSchema(old, from.CSV.Name), withoutSchema(cur, to.CSV.Name)); f != nil {
			out = append(out, *f)
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// A bundle's CRD has no status: what the cluster has stored is at
		// most every version FROM serves or stores.
		old.Status.StoredVersions = storedVersions(old)
		res, err := r.run(ctx, old, cur)
		if err != nil {
			return nil, err
		}
		out = append(out, findings(old, cur, res)...)
	}
	return out, nil
}

// sameSpec reports whether two CRD nodes have equal specs, value by value
// (styles aside). An alias anywhere answers false, leaving the verdict to
// the decoded CRDs (decodeCRD bounds aliases first).
func sameSpec(a, b bundle.Object) bool {
	sa, sb := a.Field("spec"), b.Field("spec")
	if sa == nil || sb == nil {
		return false
	}
	return sameValue(sa.Value.YNode(), sb.Value.YNode(), 0)
}

func sameValue(a, b *yaml.Node, depth int) bool {
	if depth > yamlsafe.DefaultLimits.MaxDepth || a.Kind == yaml.AliasNode || b.Kind == yaml.AliasNode {
		return false
	}
	if a.Kind != b.Kind || a.ShortTag() != b.ShortTag() || a.Value != b.Value || len(a.Content) != len(b.Content) {
		return false
	}
	for i := range a.Content {
		if !sameValue(a.Content[i], b.Content[i], depth+1) {
			return false
		}
	}
	return true
}

// withoutSchema is a finding when a version of c (of the bundle whose CSV
// is csv) has no schema: crdify would dereference it. (A CRD beyond the
// check's limits was reported before decoding: crdTooBig.)
func withoutSchema(c *apiextensionsv1.CustomResourceDefinition, csv string) *Finding {
	for i, v := range c.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return &Finding{Severity: Error, Rule: "schema", CRD: c.Name, Version: v.Name, Message: fmt.Sprintf(
				"%s ships this version without a schema (spec.versions[%d].schema.openAPIV3Schema), which an apiextensions.k8s.io/v1 CRD must have (the API server refuses it), so this CRD's upgrade is not checked: give the version a schema",
				csv, i)}
		}
	}
	return nil
}

// renderedCRDNodes are the bundle's CRDs as the render emits them
// (convert.GenerateCRDs), each with its file: a CRD a conversion webhook
// serves gets spec.conversion.strategy Webhook. The options only set the
// webhook Service's namespace and the CA annotation, which no check reads.
func renderedCRDNodes(b *bundle.Bundle) ([]bundle.Object, error) {
	nodes, err := convert.GenerateCRDs(b, convert.Options{})
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", b.CSV.Name, err)
	}
	out := make([]bundle.Object, len(nodes))
	for i, n := range nodes {
		out[i] = bundle.Object{File: b.CRDs[i].File, RNode: n}
	}
	return out, nil
}

func crdRemoved(name, to string, keepCRDs bool) Finding {
	if keepCRDs {
		return Finding{Severity: Warning, Rule: "crdRemoved", CRD: name, Message: fmt.Sprintf("%s no longer ships this CRD: keepCRDs keeps it on the cluster, unmanaged (delete it by hand once no object of it is left)", to)}
	}
	return Finding{Severity: Error, Rule: "crdRemoved", CRD: name, Message: fmt.Sprintf("%s no longer ships this CRD, and with keepCRDs: false Argo CD prunes it, deleting every object of it: set keepCRDs: true, or migrate the objects first", to)}
}

// storedVersions are the versions FROM serves plus its storage version,
// sorted.
func storedVersions(c *apiextensionsv1.CustomResourceDefinition) []string {
	var vs []string
	for _, v := range c.Spec.Versions {
		if v.Served || v.Storage {
			vs = append(vs, v.Name)
		}
	}
	slices.Sort(vs)
	return vs
}

// removedField is crdify's existingFieldRemoval message: "removed field : v1.^.spec.x".
var removedField = regexp.MustCompile(`^removed field : ([^.]+)\.(\^.*)$`)

// findings turns crdify's results for one CRD into findings.
func findings(old, cur *apiextensionsv1.CustomResourceDefinition, res *runner.Results) []Finding {
	var out []Finding
	name := cur.Name
	paths := newSchemaPaths(old, cur)
	removed := map[string]bool{} // "version path" of each removed field
	for _, r := range res.CRDValidation {
		each(r, func(sev Severity, msg string) {
			f := Finding{Severity: sev, Rule: r.Name, CRD: name, Message: plainMessage(msg)}
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
func propertyFindings(group []version.VersionedPropertyComparisonResult, crd string, paths schemaPaths, declared map[string]map[string]bool) (out []Finding, absent map[string]bool) {
	absent = map[string]bool{}
	for _, v := range group {
		_, later, pair := strings.Cut(v.Version, " -> ")
		for _, p := range v.PropertyComparisons {
			lacks := pair && declared[later] != nil && !declared[later][p.Property]
			for _, r := range p.ComparisonResults {
				each(r, func(sev Severity, msg string) {
					f := Finding{Severity: sev, Rule: r.Name, CRD: crd, Version: v.Version, Path: paths.path(p.Property)}
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
func dropCovered(fs []Finding, removed, absent map[string]bool, paths schemaPaths) []Finding {
	lost := func(version, path string) bool { return removed[version+" "+path] || absent[version+" "+path] }
	return slices.DeleteFunc(fs, func(f Finding) bool {
		if f.Path == "" {
			return false
		}
		if paths.anyAncestor(f.Path, func(p string) bool { return lost(f.Version, p) }) {
			return true
		}
		return removed[f.Version+" "+f.Path] && f.Rule != "existingFieldRemoval"
	})
}

func each(r validations.ComparisonResult, f func(Severity, string)) {
	for _, e := range r.Errors {
		f(Error, e)
	}
	for _, w := range r.Warnings {
		f(Warning, w)
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

// unhandledField matches a changed line of crdify's unhandled diff (a Go
// struct diff): "-	XPreserveUnknownFields: &true," → XPreserveUnknownFields.
// go-cmp spaces its output with ASCII or no-break spaces at random (to
// discourage parsing it), so both count as space.
var unhandledField = regexp.MustCompile(`^[\s\p{Zs}]*[-+][\s\p{Zs}]*([A-Za-z][A-Za-z0-9]*):`)

// unhandledMessage shortens crdify's unhandled-change message (a diff of Go
// structs) to the names of the schema fields that changed.
func unhandledMessage(raw string) string {
	var fields []string
	for _, line := range strings.Split(raw, "\n") {
		if m := unhandledField.FindStringSubmatch(line); m != nil {
			fields = append(fields, m[1])
		}
	}
	slices.Sort(fields)
	fields = slices.Compact(fields)
	if len(fields) == 0 {
		return "a change no safety rule covers"
	}
	return "a change no safety rule covers, in " + strings.Join(fields, ", ")
}
