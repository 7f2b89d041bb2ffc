package validate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/validate/apiop"
	"github.com/olm-cmp/olm-cmp/internal/validate/fieldtext"
)

// customResource checks a custom resource against the CRD the render ships
// for it, as the API server's CR handler does on create (in olm-cmp-check:
// apicheck's cr.go): metadata, pruning (each pruned field is a problem),
// defaulting, schema validation, embedded resources and list types.
func (v *validator) customResource(n *yaml.RNode, gvk schema.GroupVersionKind, data []byte) ([]string, error) {
	p, problem := v.crJob(n, gvk, data, true)
	switch {
	case problem != "":
		return []string{problem}, nil
	case p.op == "": // the CRD is broken; its own line says why
		return fieldtext.Metadata(metaOf(n), gvk.GroupKind()), nil
	}
	return v.verdict(p)
}

// crJob is the check of custom resource n (data is its JSON) for
// olm-cmp-check, or a problem found before it: a version its CRD does not
// serve. No job and no problem: the CRD itself cannot be used, its custom
// resources are checked for metadata only. Before the render's batch
// (judged false) a CRD whose verdict is not known yet counts as usable.
func (v *validator) crJob(n *yaml.RNode, gvk schema.GroupVersionKind, data []byte, judged bool) (pending, string) {
	e := v.crds[gvk.GroupKind()]
	// The API server would refuse the CRD itself (its own line says why),
	// so its custom resources would have no kind at all: their schema is
	// not judged.
	if judged || e.checked {
		if problems, err := v.crdVerdict(e); err != nil {
			return pending{err: err}, ""
		} else if len(problems) > 0 {
			e.broken = true
		}
	}
	if e.typed == nil && !e.broken {
		if err := v.decodeCRD(e); err != nil {
			e.broken = true
		}
	}
	if e.broken {
		return pending{}, ""
	}
	schemaJSON, problem, err := e.schema(gvk.Version)
	if err != nil {
		return pending{err: fmt.Errorf("%s: %w", describe(n), err)}, ""
	}
	if problem != "" {
		return pending{}, problem
	}
	in, err := json.Marshal(apiop.CustomResourceInput{
		Group: gvk.Group, Kind: gvk.Kind,
		Schema:                schemaJSON,
		PreserveUnknownFields: e.typed.Spec.PreserveUnknownFields,
		Object:                data,
	})
	if err != nil {
		return pending{err: fmt.Errorf("%s: %w", describe(n), err)}, ""
	}
	return pending{op: apiop.CustomResource, key: checkproc.KeyOf(apiop.CustomResource, in), what: describe(n), load: func() ([]byte, error) { return in, nil }}, ""
}

// schema is the JSON of the openAPIV3Schema of e's served version name
// ("null" when it has none), written once per render. A version the CRD
// does not serve is a problem.
func (e *crdEntry) schema(name string) ([]byte, string, error) {
	if s, ok := e.schemas[name]; ok {
		return s, "", nil
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
		return nil, fmt.Sprintf("apiVersion: CustomResourceDefinition %s serves no version %q (it serves %s): use one of those", e.typed.Name, name, strings.Join(served, ", ")), nil
	}
	var props *apiextensionsv1.JSONSchemaProps
	if ver.Schema != nil {
		props = ver.Schema.OpenAPIV3Schema
	}
	s, err := json.Marshal(props)
	if err != nil {
		return nil, "", err
	}
	if e.schemas == nil {
		e.schemas = map[string][]byte{}
	}
	e.schemas[name] = s
	return s, "", nil
}

// decodeCRD decodes a CRD for its custom resources.
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
