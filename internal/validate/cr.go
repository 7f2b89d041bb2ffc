package validate

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
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
	// A verdict kept under the key of the CRD's own verdict needs no
	// typed CRD: a warm render does not decode it.
	cheap, cheapOK := v.crKey(e, gvk.Version, data)
	if cheapOK && !e.broken {
		if _, ok := v.cached(pending{key: cheap}); ok {
			return pending{op: apiop.CustomResources, key: cheap, what: describe(n)}, ""
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
	ver, problem, err := e.version(gvk)
	if err != nil {
		return pending{err: fmt.Errorf("%s: %w", describe(n), err)}, ""
	}
	if problem != "" {
		return pending{}, problem
	}
	// data is the JSON writer's buffer, valid until its next object: the
	// batch reads the object after the render's other objects.
	obj := slices.Clone(data)
	key := cheap
	if !cheapOK {
		key = ver.key(obj)
	}
	return pending{op: apiop.CustomResources, key: key, what: describe(n), version: ver, load: func() ([]byte, error) { return obj, nil }}, ""
}

// crKey is the key of the verdict on custom resource data of version
// against e: the key of e's own verdict (its apiVersion, spec and API
// approval annotation), the rest of e's nodes (which its strict decode
// also reads: its metadata), the version and the object. false when e
// cannot be keyed so (an alias): the caller keys on the decoded version.
func (v *validator) crKey(e *crdEntry, version string, data []byte) (checkproc.Key, bool) {
	if !e.keyed {
		if p := v.crdJob(e); p.err != nil {
			return checkproc.Key{}, false
		}
	}
	h := sha256.New()
	b := append([]byte(apiop.CustomResources+"\x00crd\x00"), e.key[:]...) // never the start of crVersion's JSON
	y, spec := e.node.YNode(), false
	for i := 0; i+1 < len(y.Content); i += 2 {
		if k := y.Content[i]; k.Value == "spec" && !spec {
			spec = true // in e.key
			continue
		}
		var ok bool
		if b, ok = hashNode(h, b, y.Content[i]); !ok {
			return checkproc.Key{}, false
		}
		if b, ok = hashNode(h, b, y.Content[i+1]); !ok {
			return checkproc.Key{}, false
		}
	}
	b = appendString(binary.AppendUvarint(b, uint64(len(y.Content))), version)
	h.Write(b)
	h.Write(data)
	var key checkproc.Key
	h.Sum(key[:0])
	return key, true
}

// crVersion is what the custom resources of one served version of a CRD
// are checked against: the version's schema and settings, written once
// per render and sent once per batch however many objects it judges.
type crVersion struct {
	input apiop.CustomResourcesInput // without objects
	// keyed is the part of each object's key that is not the object: the
	// input's settings and the SHA-256 of its schema.
	keyed []byte
}

// key is the key of the verdict on the custom resource data against cv:
// it depends on the schema, the settings and the object only, so an
// object met again in a render with other custom resources is not checked
// again.
func (cv *crVersion) key(data []byte) checkproc.Key {
	return checkproc.KeyOf(apiop.CustomResources, append(cv.keyed[:len(cv.keyed):len(cv.keyed)], data...))
}

// version is e's served version gvk.Version, written once per render. A
// version the CRD does not serve is a problem.
func (e *crdEntry) version(gvk schema.GroupVersionKind) (*crVersion, string, error) {
	if cv, ok := e.versions[gvk.Version]; ok {
		return cv, "", nil
	}
	var served []string
	var ver *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range e.typed.Spec.Versions {
		cv := &e.typed.Spec.Versions[i]
		if cv.Served {
			served = append(served, cv.Name)
		}
		if cv.Name == gvk.Version && cv.Served {
			ver = cv
		}
	}
	if ver == nil {
		slices.Sort(served)
		return nil, fmt.Sprintf("apiVersion: CustomResourceDefinition %s serves no version %q (it serves %s): use one of those", e.typed.Name, gvk.Version, strings.Join(served, ", ")), nil
	}
	var props *apiextensionsv1.JSONSchemaProps
	if ver.Schema != nil {
		props = ver.Schema.OpenAPIV3Schema
	}
	s, err := json.Marshal(props)
	if err != nil {
		return nil, "", err
	}
	cv := &crVersion{input: apiop.CustomResourcesInput{
		Group: gvk.Group, Kind: gvk.Kind, Schema: s,
		PreserveUnknownFields: e.typed.Spec.PreserveUnknownFields,
		StatusSubresource:     ver.Subresources != nil && ver.Subresources.Status != nil,
	}}
	digest := sha256.Sum256(s)
	settings := cv.input
	settings.Schema = nil
	head, err := json.Marshal(struct {
		apiop.CustomResourcesInput
		SchemaSHA256 string `json:"schemaSHA256"`
	}{settings, hex.EncodeToString(digest[:])})
	if err != nil {
		return nil, "", err
	}
	cv.keyed = append(head, '\n') // never inside JSON: the object follows
	if e.versions == nil {
		e.versions = map[string]*crVersion{}
	}
	e.versions[gvk.Version] = cv
	return cv, "", nil
}

// decodeCRD decodes a CRD for its custom resources.
func (v *validator) decodeCRD(e *crdEntry) error {
	data, err := v.crdJSON.Object(e.node)
	if err != nil {
		return err
	}
	obj, err := decode(data)
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
