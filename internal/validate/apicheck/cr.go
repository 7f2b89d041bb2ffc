package apicheck

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"

	lru "github.com/hashicorp/golang-lru/v2"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/olm-cmp/olm-cmp/internal/validate/apiop"
	"github.com/olm-cmp/olm-cmp/internal/validate/fieldtext"
)

// compiled is one served version's schema as the API server uses it.
type compiled struct {
	structural *structuralschema.Structural // nil: nothing to prune or default
	validator  apiservervalidation.SchemaValidator
}

// compiledSchemas keeps the schemas of one batch (a render's custom
// resources of one version share it) by the SHA-256 of the schema's JSON:
// compiling a large schema costs more than checking an object against it.
var compiledSchemas, _ = lru.New[[sha256.Size]byte, *compiled](64)

// customResource checks a custom resource against its CRD's version as the
// API server's CR handler does on create: metadata, pruning (each pruned
// field is a problem), defaulting, schema validation, then what the
// server's strategy checks beside the schema validator.
func customResource(in *apiop.CustomResourceInput) (problems []string) {
	// The server's code runs on schemas a bundle wrote: should it fail on
	// one, the render says so instead of stopping the process.
	defer func() {
		if r := recover(); r != nil {
			problems = []string{fmt.Sprintf("could not be checked against the schema of its CustomResourceDefinition (%v); exclude it, or report this to olm-cmp", r)}
		}
	}()
	c := compile(in.Schema)
	gk := schema.GroupKind{Group: in.Group, Kind: in.Kind}
	var obj map[string]any
	if err := utiljson.Unmarshal(in.Object, &obj); err != nil {
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
	if c.validator != nil {
		problems = append(problems, fieldtext.Lines(apiservervalidation.ValidateCustomResource(nil, obj, c.validator))...)
	}
	if c.structural != nil {
		// What the server's strategy checks beside the schema validator:
		// embedded resources (x-kubernetes-embedded-resource: apiVersion,
		// kind, metadata) and unique items of set and map lists.
		problems = append(problems, fieldtext.Lines(schemaobjectmeta.Validate(nil, obj, c.structural, false))...)
		problems = append(problems, fieldtext.Lines(structurallisttype.ValidateListSetsAndMaps(nil, c.structural, obj))...)
	}
	return problems
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
