package apicheck

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/validate/fieldtext"
)

// MaxRuleNodes bounds the x-kubernetes-validations rules of one CRD (all
// versions, every schema node's rules counted): compiling them is most of a
// CRD's check (sail-operator's bundle, the corpus' largest, has 399 rules
// on 346 nodes in all its CRDs; 5000 take seconds). Rules, not nodes: one
// node may carry any number of them, each compiled. A CRD over it is
// refused unchecked.
const MaxRuleNodes = 5000

// ruleNodes counts crd's x-kubernetes-validations rules, stopping past
// MaxRuleNodes.
func ruleNodes(crd *apiextensionsv1.CustomResourceDefinition) int {
	n := 0
	var walk func(s *apiextensionsv1.JSONSchemaProps)
	walk = func(s *apiextensionsv1.JSONSchemaProps) {
		if s == nil || n > MaxRuleNodes {
			return
		}
		n += len(s.XValidations)
		for _, m := range []map[string]apiextensionsv1.JSONSchemaProps{s.Properties, s.PatternProperties, s.Definitions} {
			for _, c := range m {
				walk(&c)
			}
		}
		for _, l := range [][]apiextensionsv1.JSONSchemaProps{s.AllOf, s.OneOf, s.AnyOf} {
			for i := range l {
				walk(&l[i])
			}
		}
		walk(s.Not)
		if s.AdditionalProperties != nil {
			walk(s.AdditionalProperties.Schema)
		}
		if s.AdditionalItems != nil {
			walk(s.AdditionalItems.Schema)
		}
		if s.Items != nil {
			walk(s.Items.Schema)
			for i := range s.Items.JSONSchemas {
				walk(&s.Items.JSONSchemas[i])
			}
		}
		for _, d := range s.Dependencies {
			walk(d.Schema)
		}
	}
	for _, v := range crd.Spec.Versions {
		if v.Schema != nil {
			walk(v.Schema.OpenAPIV3Schema)
		}
	}
	return n
}

// approvalField is where the server reports a *.k8s.io or *.kubernetes.io
// group's missing API approval, the one metadata problem left to
// ValidateCustomResourceDefinition (crdProblems checks the rest).
var approvalField = field.NewPath("metadata", "annotations").Key(apiextensionsv1beta1.KubeAPIApprovedAnnotation).String()

// checkCRD runs the API server's CRD validation on data.
func checkCRD(data []byte) (problems []string) {
	// The server's code runs on a schema a bundle wrote: should it fail on
	// one, the render says so instead of stopping the process.
	defer func() {
		if r := recover(); r != nil {
			problems = []string{fmt.Sprintf("could not be checked as the API server checks a CustomResourceDefinition (%v); report this to olm-cmp", r)}
		}
	}()
	obj, _, err := decoder().Decode(data, nil, nil)
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		if runtime.IsNotRegisteredError(err) {
			// apiextensions.k8s.io/v1beta1, gone since Kubernetes 1.22.
			return []string{"apiVersion: the API server serves CustomResourceDefinitions as apiextensions.k8s.io/v1 only"}
		}
		if err != nil {
			return fieldtext.Decode(err)
		}
		return []string{"not a CustomResourceDefinition"}
	}
	if err != nil {
		// A field the live form let through (a duplicate key): the
		// server refuses the CRD before validating it.
		return fieldtext.Decode(err)
	}
	if n := ruleNodes(crd); n > MaxRuleNodes {
		return []string{fmt.Sprintf("spec.versions: %d x-kubernetes-validations rules or more, over the %d olm-cmp checks in one CRD (the API server compiles each in a CEL environment of its schema node, about a millisecond apiece)", n, MaxRuleNodes)}
	}
	// What the server does to a CRD it is asked to create, before its
	// validation: v1's defaults (the decoder applies them), conversion to
	// the internal version, then the registry strategy's PrepareForCreate
	// (status cleared, storedVersions the storage version, generation 1).
	scheme().Default(crd)
	internal := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, internal, nil); err != nil {
		return []string{"not a valid CustomResourceDefinition: " + err.Error()}
	}
	internal.Status = apiextensions.CustomResourceDefinitionStatus{}
	internal.Generation = 1
	for _, v := range internal.Spec.Versions {
		if v.Storage {
			internal.Status.StoredVersions = []string{v.Name}
			break
		}
	}
	var errs field.ErrorList
	for _, fe := range crdvalidation.ValidateCustomResourceDefinition(context.Background(), internal) {
		// status is the server's own (PrepareForCreate): a problem there
		// repeats one of spec.versions.
		if meta := strings.HasPrefix(fe.Field, "metadata."); (!meta || fe.Field == approvalField) && !strings.HasPrefix(fe.Field, "status.") {
			errs = append(errs, fe)
		}
	}
	problems = crdFieldProblems(errs, crd)
	// The server reports some problems in the order of a map's keys
	// (schema properties): sorted, the line is the same on every render.
	slices.Sort(problems)
	return slices.Compact(problems)
}

// crdFieldProblems writes the CRD validation's field errors as the rest of
// the package writes field errors, pointing where a reader of the CRD's
// file looks and saying what a Go value would have said.
func crdFieldProblems(errs field.ErrorList, crd *apiextensionsv1.CustomResourceDefinition) []string {
	var out []string
	for _, e := range errs {
		e.Field = fileField(e.Field, crd)
		switch bad := e.BadValue.(type) {
		case apiextensions.ValidationRule:
			e.BadValue = bad.Rule
		case []apiextensions.CustomResourceDefinitionVersion:
			// "must contain unique version names", "must have exactly one
			// version marked as storage version": the names say which.
			out = append(out, e.Field+": "+e.Detail+" ("+versionsSummary(bad)+")")
			continue
		}
		e.Detail = celDetail(e.Detail)
		out = append(out, fieldtext.Lines(field.ErrorList{e})...)
	}
	return out
}

// fileField turns a path of the server's internal form of a CRD into one
// of the v1 form the file holds. The internal form keeps a schema, the
// subresources, printer columns or selectable fields that every version
// shares once, under spec (spec.validation for the schema); the file has
// them in each version.
func fileField(f string, crd *apiextensionsv1.CustomResourceDefinition) string {
	versions := "spec.versions[*]" // identical in every version
	if len(crd.Spec.Versions) == 1 {
		versions = "spec.versions[0]"
	}
	for _, moved := range [][2]string{
		{"spec.validation", ".schema"},
		{"spec.subresources", ".subresources"},
		{"spec.additionalPrinterColumns", ".additionalPrinterColumns"},
		{"spec.selectableFields", ".selectableFields"},
	} {
		if rest, ok := cutField(f, moved[0]); ok {
			return versions + moved[1] + rest
		}
	}
	// The internal form flattens spec.conversion.webhook.
	for _, moved := range [][2]string{
		{"spec.conversion.webhookClientConfig", "spec.conversion.webhook.clientConfig"},
		{"spec.conversion.conversionReviewVersions", "spec.conversion.webhook.conversionReviewVersions"},
	} {
		if rest, ok := cutField(f, moved[0]); ok {
			return moved[1] + rest
		}
	}
	return f
}

// cutField cuts the path prefix from f, at a field's boundary.
func cutField(f, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(f, prefix)
	return rest, ok && (rest == "" || rest[0] == '.' || rest[0] == '[')
}

// versionsSummary says which versions a CRD has, and which are storage
// versions, in the words of the file.
func versionsSummary(versions []apiextensions.CustomResourceDefinitionVersion) string {
	var names, storage []string
	for _, v := range versions {
		names = append(names, echo.Quote(v.Name))
		if v.Storage {
			storage = append(storage, echo.Quote(v.Name))
		}
	}
	s := "it has " + strings.Join(names, ", ")
	if len(storage) == 0 {
		return s + ", none of them with storage: true"
	}
	return s + ", storage: true on " + strings.Join(storage, " and ")
}

// celIssue is one problem of CEL's compiler: `ERROR: <input>:1:14: Syntax
// error: …`, followed by lines that draw the rule and a caret.
var celIssue = regexp.MustCompile(`^ERROR: <input>:(\d+):(\d+): (.*)$`)

// celDetail turns a CEL compilation failure, several lines of which only
// the first says what is wrong, into one line with the rule's line and
// column in words; other details pass unchanged but on one line.
func celDetail(d string) string {
	for _, prefix := range []string{"compilation failed: ", "messageExpression compilation failed: "} {
		rest, ok := strings.CutPrefix(d, prefix)
		if !ok {
			continue
		}
		lines := strings.Split(rest, "\n")
		var issues []string
		for _, l := range lines {
			if m := celIssue.FindStringSubmatch(l); m != nil {
				issues = append(issues, fmt.Sprintf("%s (line %s, column %s)", m[3], m[1], m[2]))
			}
		}
		if len(issues) == 0 {
			break
		}
		what := "not a valid CEL expression: "
		if strings.HasPrefix(prefix, "messageExpression") {
			what = "messageExpression is not a valid CEL expression: "
		}
		if len(issues) > 1 {
			issues = append(issues[:1], fmt.Sprintf("and %d more", len(issues)-1))
		}
		return what + strings.Join(issues, "; ")
	}
	if strings.ContainsAny(d, "\r\n") {
		return strings.Join(strings.Fields(d), " ")
	}
	return d
}
