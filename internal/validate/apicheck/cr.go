package apicheck

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"

	lru "github.com/hashicorp/golang-lru/v2"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/olm-cmp/olm-cmp/internal/validate/apiop"
	"github.com/olm-cmp/olm-cmp/internal/validate/fieldtext"
)

// compiled is one served version's schema as the API server uses it.
type compiled struct {
	structural *structuralschema.Structural // nil: nothing to prune or default
	validator  apiservervalidation.SchemaValidator
	// rules are the version's x-kubernetes-validations, compiled (nil:
	// none, or a schema that is not structural).
	rules *cel.Validator
}

// compiledSchemas keeps the schemas of one batch by the SHA-256 of the
// schema's JSON: compiling a large schema (its CEL rules above all) costs
// more than checking an object against it.
var compiledSchemas, _ = lru.New[[sha256.Size]byte, *compiled](64)

// customResources checks the custom resources of one version of a CRD, the
// schema compiled once: a verdict per object, in order.
func customResources(ctx context.Context, in *apiop.CustomResourcesInput) (out apiop.Verdicts) {
	c := compile(in.Schema)
	out.Verdicts = make([]apiop.Verdict, len(in.Objects))
	for i, obj := range in.Objects {
		out.Verdicts[i] = verdict(customResource(ctx, c, in, obj))
	}
	return out
}

// customResource checks a custom resource against its CRD's version as the
// API server's CR handler does on create: metadata, pruning (each pruned
// field is a problem), defaulting, the status dropped when the version has
// the status subresource, schema validation, then what the server's
// strategy checks beside the schema validator: embedded resources, list
// types and the x-kubernetes-validations rules.
func customResource(ctx context.Context, c *compiled, in *apiop.CustomResourcesInput, object json.RawMessage) (problems []string) {
	// The server's code runs on schemas a bundle wrote: should it fail on
	// one, the render says so instead of stopping the process.
	defer func() {
		if r := recover(); r != nil {
			problems = []string{fmt.Sprintf("could not be checked against the schema of its CustomResourceDefinition (%v); exclude it, or report this to olm-cmp", r)}
		}
	}()
	gk := schema.GroupKind{Group: in.Group, Kind: in.Kind}
	var obj map[string]any
	if err := utiljson.Unmarshal(object, &obj); err != nil {
		return []string{"not a JSON object: " + err.Error()}
	}
	meta, _, unknownMeta, err := schemaobjectmeta.GetObjectMetaWithOptions(obj, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		return []string{"metadata: " + err.Error()}
	}
	if meta != nil {
		problems = fieldtext.Metadata(meta, gk)
	}
	var pruned []string
	pruned = append(pruned, unknownMeta...)
	if !in.PreserveUnknownFields && c.structural != nil {
		pruned = append(pruned, structuralpruning.PruneWithOptions(obj, c.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
		structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, c.structural)
	}
	for _, p := range pruned {
		problems = append(problems, p+": unknown field: the CRD's schema does not define it, so the API server would prune it")
	}
	if c.structural != nil {
		structuraldefaulting.Default(obj, c.structural)
	}
	// Decoding (pruning, defaulting) happens before the strategy's
	// PrepareForCreate, which drops the status a create cannot set when
	// the status subresource is enabled; validation comes after. The
	// server says nothing of it, nor does the render.
	if in.StatusSubresource {
		delete(obj, "status")
	}
	var errs field.ErrorList
	if c.validator != nil {
		errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj, c.validator)...)
	}
	if c.structural != nil {
		errs = append(errs, schemaobjectmeta.Validate(nil, obj, c.structural, false)...)
		errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, c.structural, obj)...)
	}
	problems = append(problems, fieldtext.Lines(errs)...)
	if c.rules != nil {
		// As the strategy's Validate on create: no old object, the
		// per-request cost budget, and no rule run on an object whose
		// shape is already wrong. The server then adds "some validation
		// rules were not checked…" on no field; the line leaves it out:
		// its other problems already refuse the object, and the render
		// after their fix runs the rules.
		if !blocked(errs) {
			ruleErrs, _ := c.rules.Validate(ctx, nil, c.structural, obj, nil, celconfig.RuntimeCELCostBudget)
			problems = append(problems, fieldtext.Lines(ruleErrs)...)
		}
	}
	return problems
}

// blocked is whether the object already has an error of a kind the CEL
// rules may not survive, so the server does not run them (its
// hasBlockingErr).
func blocked(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

// compile builds a version's schema (its v1 openAPIV3Schema as JSON, or
// null) as the API server does, once per batch.
func compile(data json.RawMessage) *compiled {
	key := sha256.Sum256(data)
	if c, ok := compiledSchemas.Get(key); ok {
		return c
	}
	c := &compiled{}
	var v1 *apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(data, &v1); err == nil && v1 != nil {
		internal := &apiextensions.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1, internal, nil); err == nil {
			if s, err := structuralschema.NewStructural(internal); err == nil {
				s = s.DeepCopy()
				if structuraldefaulting.PruneDefaults(s) == nil {
					c.structural = s
					// The server compiles the rules against this schema
					// (NewStrategy), with its per-call cost limit.
					c.rules = cel.NewValidator(s, true, celconfig.PerCallLimit)
				}
			}
			if val, _, err := apiservervalidation.NewSchemaValidator(internal); err == nil {
				c.validator = val
			}
		}
	}
	compiledSchemas.Add(key, c)
	return c
}
