package validate

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/validate/apiop"
)

// crdEntry is a CRD of the render: its node, its verdict, and its typed
// form (decoded by the first custom resource that needs it) with the JSON
// of the versions its custom resources were checked against.
type crdEntry struct {
	node *yaml.RNode
	// checked says problems is the CRD's verdict (crdVerdict).
	checked  bool
	problems []string
	typed    *apiextensionsv1.CustomResourceDefinition
	broken   bool // the CRD itself cannot be used: its own line says why
	versions map[string]*crVersion
	// key is the key of the CRD's verdict (crdJob), when keyed.
	key   checkproc.Key
	keyed bool
}

// crdVerdict is the render's CRD e checked as kube-apiserver checks one on
// create (the CRD registry's PrepareForCreate, then
// ValidateCustomResourceDefinition, in olm-cmp-check: apicheck's crd.go):
// versions (at least one, unique names, exactly one storage version, a
// schema for each), structural schemas, defaults valid against their schema
// and already pruned, list types, x-kubernetes-validations rules compiled as
// CEL with their cost estimated, conversion (a Webhook strategy needs its
// webhook), names, subresources, printer columns, selectable fields, and
// the API approval annotation of a *.k8s.io group. Its other metadata is
// checked by crdProblems with the rest of the package's rules. The verdict
// is kept in e for the render and cached by crdKey across renders.
func (v *validator) crdVerdict(e *crdEntry) ([]string, error) {
	if !e.checked {
		problems, err := v.verdict(v.crdJob(e))
		if err != nil {
			return nil, err
		}
		e.checked, e.problems = true, problems
	}
	return e.problems, nil
}

// crdJob is the check of e for olm-cmp-check; its input, the CRD as JSON,
// is written when the check is not cached.
func (v *validator) crdJob(e *crdEntry) pending {
	p := pending{op: apiop.CRD, what: describe(e.node)}
	load := func() ([]byte, error) {
		data, err := v.crdJSON.Object(e.node)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", describe(e.node), err)
		}
		return append([]byte(nil), data...), nil
	}
	key, ok := v.crdKey(e.node)
	if !ok {
		data, err := load()
		if err != nil {
			return pending{err: err}
		}
		key, load = checkproc.KeyOf(apiop.CRD, data), func() ([]byte, error) { return data, nil }
	}
	p.key, p.load = key, load
	e.key, e.keyed = key, true
	return p
}

// crdScratch is crdKey's buffer, grown once per render.
type crdScratch struct {
	hashBuf []byte
}

// crdKey is the SHA-256 of what a CRD's verdict depends on: its apiVersion,
// its spec and its API approval annotation (metadata is otherwise checked
// outside the cache, and the annotations olm-cmp adds differ from render
// to render of one CRD). It hashes the nodes themselves, a quarter of the
// cost of writing the CRD as JSON; false when a node is an alias (the
// caller hashes the JSON instead).
func (v *validator) crdKey(n *yaml.RNode) (key checkproc.Key, ok bool) {
	s := &v.crdScratch
	h := sha256.New()
	h.Write([]byte(apiop.CRD + "\x00node\x00")) // never the start of KeyOf's JSON
	if s.hashBuf == nil {
		s.hashBuf = make([]byte, 0, 64<<10) // hashNode flushes at 32 KiB
	}
	b := appendString(s.hashBuf[:0], n.GetApiVersion())
	defer func() { s.hashBuf = b[:0] }() // grown once per render, not per CRD
	approval, approved := n.GetAnnotations()[apiextensionsv1beta1.KubeAPIApprovedAnnotation]
	if approved {
		b = appendString(append(b, 1), approval)
	} else {
		b = append(b, 0)
	}
	var spec *yaml.Node
	if f := n.Field("spec"); f != nil {
		spec = f.Value.YNode()
	}
	if b, ok = hashNode(h, b, spec); !ok {
		return key, false
	}
	h.Write(b)
	h.Sum(key[:0])
	return key, true
}

// hashNode writes y into h through the buffer b (flushed when large): its
// kind, style, tag and value, each length-prefixed, and its children. These
// are everything the CRD's JSON is written from.
func hashNode(h hash.Hash, b []byte, y *yaml.Node) ([]byte, bool) {
	if y == nil {
		return append(b, 0), true
	}
	if y.Kind == yaml.AliasNode {
		return b, false
	}
	b = append(b, byte(y.Kind), byte(y.Style))
	b = appendString(b, y.Tag)
	b = appendString(b, y.Value)
	b = binary.AppendUvarint(b, uint64(len(y.Content)))
	if len(b) > 32<<10 {
		h.Write(b)
		b = b[:0]
	}
	for _, c := range y.Content {
		var ok bool
		if b, ok = hashNode(h, b, c); !ok {
			return b, false
		}
	}
	return b, true
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// crdFix says where the fix for a CRD's problem is: a CRD of the bundle
// cannot be repaired by the user (OLM installs it as the vendor wrote it,
// and upgrades are judged against it; leaving it out leaves the operator
// without its API), so the fix is another bundle version or the vendor;
// one from the user's own file (an extra manifest: a Where without the
// caller's Fix for a vendor's file) is the user's to fix.
func crdFix(o Origin) string {
	if o.Where != "" && o.Fix == "" {
		return "fix " + o.Where
	}
	return "the bundle ships this CustomResourceDefinition as its vendor wrote it: use another version of the bundle or ask the vendor to fix it (if a spec.patches entry changes the CRD, fix that entry)"
}
