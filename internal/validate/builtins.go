package validate

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
)

// The checks of built-in objects (builtin: the strict decode into the
// k8s.io/api type, metadata, nested labels, kindProblems, webhooks' rules
// and client configs) are a pure function of each object's content and of
// the build, so their verdicts are kept in the same store as olm-cmp-check's
// (computed in process, never sent to it): a warm render neither decodes
// them nor builds the decoder's reflection tables of the k8s.io/api types
// (a fifth of a warm `olm-cmp generate` of examples/demo).
//
// One verdict covers all of a render's objects judged by kind, keyed over
// all of them, and says which kinds are built in (so a warm render does not
// build the scheme either): one file per distinct render instead of one per
// object (12 built-in objects in examples/demo), so a sidecar serving many
// applications does not fill the store's bound on files; a changed object
// costs one new file either way.

// opBuiltins names the verdicts of a render's built-in objects in the store.
const opBuiltins = "builtin-objects"

// decodes counts strict decodes (decode), for tests.
var decodes atomic.Int64

// decode decodes data strictly into its kind's Go type, as the API server
// decodes a request with fieldValidation=Strict.
func decode(data []byte) (runtime.Object, error) {
	decodes.Add(1)
	obj, _, err := decoder().Decode(data, nil, nil)
	return obj, err
}

// builtinSet is the render's objects that object() may judge with
// builtin() (candidate), whether each is of a built-in kind, and the
// verdicts of those that are: read from the store (hit) or filled as
// object() judges them. Whether a kind is built in is kept in the verdict
// too, so a warm render does not build the scheme to ask.
type builtinSet struct {
	key      checkproc.Key
	index    map[*yaml.RNode]int
	builtin  []bool
	problems [][]string
	done     []bool
	hit      bool
}

// builtinVerdict is the form a set's verdict is stored in: for each
// candidate, whether its kind is built in and, if so, its problems.
type builtinVerdict struct {
	Builtin []bool     `json:"builtin"`
	Objects [][]string `json:"objects"`
}

// candidate says whether object() judges n by its kind: its apiVersion
// parses, its names hold no control character, and it is no CRD (which
// has its own check).
func candidate(n *yaml.RNode) (schema.GroupVersionKind, bool) {
	gv, err := schema.ParseGroupVersion(n.GetApiVersion())
	if err != nil || len(controlCharacters(n)) > 0 {
		return schema.GroupVersionKind{}, false
	}
	gvk := gv.WithKind(n.GetKind())
	return gvk, gvk.GroupKind() != crdGK
}

// planBuiltins keys the render's candidates and reads their verdict. The
// key hashes each object's nodes (as crdKey does: everything its JSON is
// written from), or its JSON when a node is an alias.
func (v *validator) planBuiltins(nodes []*yaml.RNode) error {
	s := &builtinSet{index: map[*yaml.RNode]int{}}
	h := sha256.New()
	h.Write([]byte(opBuiltins + "\x00node\x00"))
	b := v.crdScratch.hashBuf[:0]
	if b == nil {
		b = make([]byte, 0, 64<<10) // hashNode flushes at 32 KiB
	}
	var kinds []schema.GroupVersionKind
	for _, n := range nodes {
		gvk, ok := candidate(n)
		if _, seen := s.index[n]; !ok || seen {
			continue
		}
		s.index[n] = len(kinds)
		kinds = append(kinds, gvk)
		b = appendString(appendString(b, gvk.GroupVersion().String()), gvk.Kind)
		mark := len(b)
		if b, ok = hashNode(h, append(b, 'n'), n.YNode()); !ok {
			data, err := v.json.Object(n)
			if err != nil {
				return err
			}
			b = appendString(append(b[:mark], 'j'), string(data))
		}
	}
	h.Write(binary.AppendUvarint(b, uint64(len(kinds))))
	v.crdScratch.hashBuf = b[:0]
	h.Sum(s.key[:0])
	v.builtins = s
	if out, ok := verdicts.Get(s.key); ok {
		var got builtinVerdict
		if err := json.Unmarshal(out, &got); err == nil && len(got.Builtin) == len(kinds) && len(got.Objects) == len(kinds) {
			if again, err := json.Marshal(got); err == nil && string(again) == string(out) {
				s.builtin, s.problems, s.hit = got.Builtin, got.Objects, true
				return nil
			}
		}
		verdicts.Forget(s.key) // not a verdict this build wrote
	}
	s.builtin, s.problems, s.done = make([]bool, len(kinds)), make([][]string, len(kinds)), make([]bool, len(kinds))
	for i, gvk := range kinds {
		s.builtin[i] = scheme().Recognizes(gvk)
		s.done[i] = !s.builtin[i]
	}
	return nil
}

// recognizes says whether n's kind, gvk, is one scheme knows: from the
// render's verdict when the store had it.
func (v *validator) recognizes(n *yaml.RNode, gvk schema.GroupVersionKind) bool {
	if s := v.builtins; s != nil {
		if i, ok := s.index[n]; ok {
			return s.builtin[i]
		}
	}
	return scheme().Recognizes(gvk)
}

// builtinCached is n's verdict when the store had the render's.
func (v *validator) builtinCached(n *yaml.RNode) ([]string, bool) {
	if v.builtins == nil || !v.builtins.hit {
		return nil, false
	}
	i, ok := v.builtins.index[n]
	if !ok || !v.builtins.builtin[i] {
		return nil, false
	}
	return v.builtins.problems[i], true
}

// builtinJudged records n's verdict, computed now.
func (v *validator) builtinJudged(n *yaml.RNode, problems []string) {
	if s := v.builtins; s != nil && !s.hit {
		if i, ok := s.index[n]; ok && s.builtin[i] {
			s.problems[i], s.done[i] = problems, true
		}
	}
}

// keepBuiltins stores the render's verdict once every built-in object has
// been judged: a render stopped by an error keeps none.
func (v *validator) keepBuiltins() {
	s := v.builtins
	if s == nil || s.hit || len(s.index) == 0 {
		return
	}
	for _, d := range s.done {
		if !d {
			return
		}
	}
	if out, err := json.Marshal(builtinVerdict{s.builtin, s.problems}); err == nil {
		verdicts.Put(s.key, out)
	}
}
