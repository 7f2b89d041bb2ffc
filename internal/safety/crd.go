package safety

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/crdify/pkg/config"
	"sigs.k8s.io/crdify/pkg/runner"
	"sigs.k8s.io/crdify/pkg/validations"
	"sigs.k8s.io/crdify/pkg/validations/property"
	"sigs.k8s.io/crdify/pkg/validators/version"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
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

// checkCRDs compares every CRD of from with the CRD of the same name in to.
func checkCRDs(from, to *bundle.Bundle, keepCRDs bool) ([]Finding, error) {
	newCRDs := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, o := range to.CRDs {
		c, err := decodeCRD(o)
		if err != nil {
			return nil, err
		}
		newCRDs[c.Name] = c
	}
	r, err := runner.New(crdifyConfig(), runner.DefaultRegistry())
	if err != nil {
		return nil, fmt.Errorf("configuring the CRD upgrade-safety checks: %w", err)
	}
	var out []Finding
	for _, o := range from.CRDs {
		old, err := decodeCRD(o)
		if err != nil {
			return nil, err
		}
		cur, ok := newCRDs[old.Name]
		if !ok {
			out = append(out, crdRemoved(old.Name, to.CSV.Name, keepCRDs))
			continue
		}
		// A bundle's CRD has no status: what the cluster has stored is at
		// most every version FROM serves or stores.
		old.Status.StoredVersions = storedVersions(old)
		out = append(out, findings(old, cur, r.Run(old, cur))...)
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

func decodeCRD(o bundle.Object) (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := o.MarshalJSON()
	if err == nil {
		c := &apiextensionsv1.CustomResourceDefinition{}
		if err = json.Unmarshal(data, c); err == nil {
			return c, nil
		}
	}
	return nil, fmt.Errorf("%s: CustomResourceDefinition %q is not a valid apiextensions.k8s.io/v1 CRD: %v", o.File, o.GetName(), err)
}

// removedField is crdify's existingFieldRemoval message: "removed field : v1.^.spec.x".
var removedField = regexp.MustCompile(`^removed field : ([^.]+)\.(\^.*)$`)

// findings turns crdify's results for one CRD into findings.
func findings(old, cur *apiextensionsv1.CustomResourceDefinition, res *runner.Results) []Finding {
	var out []Finding
	name := cur.Name
	for _, r := range res.CRDValidation {
		each(r, func(sev Severity, msg string) {
			f := Finding{Severity: sev, Rule: r.Name, CRD: name, Message: msg}
			switch r.Name {
			case "existingFieldRemoval":
				if m := removedField.FindStringSubmatch(msg); m != nil {
					f.Version, f.Path = m[1], jsonPath(m[2])
					f.Message = "field removed: objects that set it lose it"
				}
			case "storedVersionRemoval":
				f.Version = strings.Join(removedVersions(old, cur), ",")
				f.Message = fmt.Sprintf("version %s is served or stored by the CRD the cluster runs, and the new CRD drops it: objects stored in it become unreadable", f.Version)
			}
			out = append(out, f)
		})
	}
	for _, group := range [][]version.VersionedPropertyComparisonResult{res.SameVersionValidation, res.ServedVersionValidation} {
		for _, v := range group {
			for _, p := range v.PropertyComparisons {
				for _, r := range p.ComparisonResults {
					each(r, func(sev Severity, msg string) {
						switch r.Name {
						case "unhandled":
							msg = unhandledMessage(msg)
						case "oneOf":
							// crdify prints the schemas as Go structs: keep its sentence.
							msg, _, _ = strings.Cut(msg, ": [")
						}
						out = append(out, Finding{Severity: sev, Rule: r.Name, CRD: name, Version: v.Version, Path: jsonPath(p.Property), Message: msg})
					})
				}
			}
		}
	}
	return dropUnderRemoved(out)
}

// dropUnderRemoved drops the findings of a version's fields below a field
// that version removed (crdify also reports their type as changed to ""):
// the removal says it all.
func dropUnderRemoved(fs []Finding) []Finding {
	removed := map[string]bool{}
	for _, f := range fs {
		if f.Rule == "existingFieldRemoval" {
			removed[f.Version+" "+f.Path] = true
		}
	}
	return slices.DeleteFunc(fs, func(f Finding) bool {
		if f.Rule == "existingFieldRemoval" {
			return false
		}
		for p := f.Path; p != "." && p != ""; p = parentPath(p) {
			if removed[f.Version+" "+p] {
				return true
			}
		}
		return false
	})
}

// parentPath is ".spec" for ".spec.size" and "" for ".spec".
func parentPath(p string) string {
	i := strings.LastIndexByte(p, '.')
	if i <= 0 {
		return ""
	}
	return p[:i]
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

// jsonPath turns crdify's property path ("^.spec.size", "^" for the root)
// into ".spec.size" (".").
func jsonPath(p string) string {
	p = strings.TrimPrefix(p, "^")
	if p == "" {
		return "."
	}
	return p
}

// unhandledField matches a changed line of crdify's unhandled diff (a Go
// struct diff): "-	XPreserveUnknownFields: &true," → XPreserveUnknownFields.
var unhandledField = regexp.MustCompile(`^\s*[-+]\s*([A-Za-z][A-Za-z0-9]*):`)

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
