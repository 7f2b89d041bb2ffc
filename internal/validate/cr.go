package validate

import (
	"fmt"
	"slices"
	"strings"

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
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// crdEntry is a CRD of the render: its node, its typed form (decoded once,
// by the CRD's own check or the first custom resource that needs it) and
// its compiled versions.
type crdEntry struct {
	node     *yaml.RNode
	typed    *apiextensionsv1.CustomResourceDefinition
	broken   bool // the CRD itself does not decode: its own line says why
	versions map[string]*compiled
	// checked says problems is the CRD's verdict (crdVerdict).
	checked  bool
	problems []string
}

// compiled is one served version's schema as the API server uses it.
type compiled struct {
	structural *structuralschema.Structural // nil: nothing to prune or default
	validator  apiservervalidation.SchemaValidator
	prune      bool // false when the CRD preserves unknown fields
}

// customResource checks a custom resource against the CRD the render ships
// for it, as the API server's CR handler does on create: metadata, pruning
// (each pruned field is a problem), defaulting, schema validation.
func (v *validator) customResource(n *yaml.RNode, gvk schema.GroupVersionKind, data []byte) (problems []string) {
	// The server's code runs on schemas a bundle wrote: should it fail on
	// one, the render says so instead of stopping the process.
	defer func() {
		if r := recover(); r != nil {
			problems = []string{fmt.Sprintf("could not be checked against the schema of its CustomResourceDefinition (%v); exclude it, or report this to olm-cmp", r)}
		}
	}()
	e := v.crds[gvk.GroupKind()]
	c, problem := v.version(e, gvk.Version)
	if problem != "" {
		return []string{problem}
	}
	if c == nil { // the CRD is broken; its own line says why
		return metadataProblems(metaOf(n), gvk.GroupKind())
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(data, &obj); err != nil {
		return []string{"not a JSON object: " + err.Error()}
	}
	meta, _, unknownMeta, err := schemaobjectmeta.GetObjectMetaWithOptions(obj, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		return []string{"metadata: " + err.Error()}
	}
	if meta != nil {
		problems = metadataProblems(meta, gvk.GroupKind())
	}
	var pruned []string
	pruned = append(pruned, unknownMeta...)
	if c.prune && c.structural != nil {
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
		problems = append(problems, fieldProblems(apiservervalidation.ValidateCustomResource(nil, obj, c.validator))...)
	}
	if c.structural != nil {
		// What the server's strategy checks beside the schema validator:
		// embedded resources (x-kubernetes-embedded-resource: apiVersion,
		// kind, metadata) and unique items of set and map lists.
		problems = append(problems, fieldProblems(schemaobjectmeta.Validate(nil, obj, c.structural, false))...)
		problems = append(problems, fieldProblems(structurallisttype.ValidateListSetsAndMaps(nil, c.structural, obj))...)
	}
	return problems
}

// version returns the compiled schema of the CRD's served version name,
// compiling it on first use. A version the CRD does not serve is a problem;
// nil without a problem means the CRD itself cannot be used.
func (v *validator) version(e *crdEntry, name string) (*compiled, string) {
	// The API server would refuse the CRD itself (its own line says why),
	// so its custom resources would have no kind at all: their schema is
	// not judged.
	if problems, err := v.crdVerdict(e); err != nil || len(problems) > 0 {
		e.broken = true
	}
	if e.typed == nil && !e.broken {
		if err := v.decodeCRD(e); err != nil {
			e.broken = true
		}
	}
	if e.broken {
		return nil, ""
	}
	if c, ok := e.versions[name]; ok {
		return c, ""
	}
	var served []string
	var ver *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range e.typed.Spec.Versions {
		cv := &e.typed.Spec.Versions[i]
		if cv.Served {
			served = append(served, cv.Name)
		}
		if cv.Name == name && cv.Served {
			ver = cv
		}
	}
	if ver == nil {
		slices.Sort(served)
		return nil, fmt.Sprintf("apiVersion: CustomResourceDefinition %s serves no version %q (it serves %s): use one of those", e.typed.Name, name, strings.Join(served, ", "))
	}
	c := &compiled{prune: !e.typed.Spec.PreserveUnknownFields}
	if ver.Schema != nil && ver.Schema.OpenAPIV3Schema != nil {
		internal := &apiextensions.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(ver.Schema.OpenAPIV3Schema, internal, nil); err == nil {
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
	if e.versions == nil {
		e.versions = map[string]*compiled{}
	}
	e.versions[name] = c
	return c, ""
}

// decodeCRD decodes a CRD that its own check has not decoded yet.
func (v *validator) decodeCRD(e *crdEntry) error {
	data, err := v.crdJSON.Object(e.node)
	if err != nil {
		return err
	}
	obj, _, err := decoder().Decode(data, nil, nil)
	if err != nil {
		return err
	}
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return fmt.Errorf("not a CustomResourceDefinition")
	}
	e.typed = crd
	return nil
}
