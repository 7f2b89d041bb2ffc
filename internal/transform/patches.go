package transform

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"sigs.k8s.io/kustomize/api/filters/patchjson6902"
	"sigs.k8s.io/kustomize/api/filters/patchstrategicmerge"
	"sigs.k8s.io/kustomize/api/hasher"
	"sigs.k8s.io/kustomize/api/resource"
	kustomizetypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	k8syaml "sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/yamlsafe"
)

// patchesFilter applies the user's kustomize patches.
type patchesFilter struct {
	patches  []kustomizetypes.Patch
	readFile func(string) ([]byte, error)
	drops    *Drops
	// unmatched, when not nil, hears of each deletion that deletes nothing.
	unmatched func(string)
}

// Patches applies patches in order, each as a kustomize `patches:` entry does,
// with kustomize's own code:
//
//   - The text is Patch, or the file Path read with readFile.
//   - It is a strategic-merge patch if kustomize's resource factory reads it
//     as objects, a JSON 6902 patch if it decodes as a list of operations
//     (JSON or YAML), and an error if both or neither.
//   - target selects objects as kustomize does: group, version, kind, name and
//     namespace are anchored regular expressions, labelSelector and
//     annotationSelector label-selector expressions.
//   - A strategic-merge patch without target applies to the object with its
//     apiVersion, kind and name, and its namespace if it has one (unlike
//     kustomize, a patch without namespace matches any namespace: users
//     rarely know where the bundle put an object). It must match exactly one.
//     With a target, the patch must hold one object; kind, name and namespace
//     of the patched objects are kept unless options allowKindChange or
//     allowNameChange say otherwise, and `$patch: delete` removes them.
//   - A JSON 6902 patch needs a target. It round-trips the object through
//     JSON (as in kustomize), so the object's comments are lost.
//
// A patch that matches no object is an error naming its index: a silently
// ignored patch is worse than a failed render. So is a strategic-merge patch
// that would append an element to a merge-keyed list when that element is
// incomplete or its key one edit from an existing one (a misspelt container
// name: mergecheck.go).
func Patches(patches []kustomizetypes.Patch, readFile func(path string) ([]byte, error)) kio.Filter {
	return patchesFilter{patches, readFile, nil, nil}
}

// patchesRecording is Patches noting the objects a patch deletes in drops,
// and telling unmatched about each strategic-merge deletion that deletes
// nothing (`$patch: delete` or null on what the objects lack).
func patchesRecording(patches []kustomizetypes.Patch, readFile func(path string) ([]byte, error), drops *Drops, unmatched func(string)) kio.Filter {
	return patchesFilter{patches, readFile, drops, unmatched}
}

func (f patchesFilter) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	var err error
	for i, p := range f.patches {
		deleted := func(n *yaml.RNode) {
			f.drops.recordChosen(n, fmt.Sprintf("patches[%d] deletes it", i), fmt.Sprintf("change patches[%d] so that it keeps the object", i))
		}
		noop := func(msg string) {
			if f.unmatched != nil {
				f.unmatched(fmt.Sprintf("patches[%d]: %s", i, msg))
			}
		}
		if nodes, err = f.apply(nodes, p, mergeHooks{deleted, noop}); err != nil {
			// one line per problem, each naming the patch
			prefix := fmt.Sprintf("patches[%d]: ", i)
			return nil, errors.New(prefix + strings.ReplaceAll(err.Error(), "\n", "\n"+prefix))
		}
	}
	return nodes, nil
}

// mergeHooks hear what a strategic-merge patch does beyond changing
// objects: deleted of each object it deletes, noop of each deletion that
// deletes nothing.
type mergeHooks struct {
	deleted func(*yaml.RNode)
	noop    func(string)
}

func (f patchesFilter) apply(nodes []*yaml.RNode, p kustomizetypes.Patch, hooks mergeHooks) ([]*yaml.RNode, error) {
	text := strings.TrimSpace(p.Patch)
	switch {
	case text != "" && p.Path != "":
		return nil, errors.New("patch and path are both set")
	case text == "" && p.Path == "":
		return nil, errors.New("one of patch or path is required")
	case p.Path != "":
		if f.readFile == nil {
			return nil, fmt.Errorf("path %s: patch files cannot be read here", echo.Quote(p.Path))
		}
		b, err := f.readFile(p.Path)
		if err != nil {
			return nil, fmt.Errorf("path %s: %w", echo.Quote(p.Path), err)
		}
		if text = strings.TrimSpace(string(b)); text == "" {
			return nil, fmt.Errorf("path %s: empty patch", echo.Quote(p.Path))
		}
	}
	// Bounded before kustomize reads it: kyaml's de-anchoring recurses
	// without end on an alias cycle (`labels: &l {x: *l}`), which no recover
	// can stop (see yamlsafe).
	if _, err := yamlsafe.Parse([]byte(text)); err != nil {
		return nil, err
	}
	// Detection as kustomize's PatchTransformer does it.
	sm, errSM := resource.NewFactory(&hasher.Hasher{}).RNodesFromBytes([]byte(text))
	ops, errJSON := decodeJSONPatch(text)
	switch {
	case errSM == nil && errJSON == nil && len(sm) > 0 && len(ops) > 0:
		return nil, errors.New("the patch is both a strategic-merge and a JSON 6902 patch")
	case errSM != nil && errJSON != nil:
		return nil, fmt.Errorf("neither a strategic-merge patch (%v) nor a JSON 6902 patch (%v)", errSM, errJSON)
	case errSM == nil && len(sm) > 0:
		return applyStrategicMerge(nodes, sm, p, hooks)
	case errJSON == nil:
		return applyJSON6902(nodes, text, p.Target)
	}
	return nil, errors.New("empty patch")
}

// decodeJSONPatch decodes JSON 6902 operations written in JSON or YAML.
func decodeJSONPatch(text string) (jsonpatch.Patch, error) {
	b := []byte(text)
	if !strings.HasPrefix(text, "[") {
		var err error
		if b, err = k8syaml.YAMLToJSON(b); err != nil {
			return nil, err
		}
	}
	return jsonpatch.DecodePatch(b)
}

// selectTarget returns the indexes of the objects target selects.
func selectTarget(nodes []*yaml.RNode, target *kustomizetypes.Selector) ([]int, error) {
	sr, err := kustomizetypes.NewSelectorRegex(target)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	var idx []int
	for i, n := range nodes {
		gvk := resid.GvkFromNode(n)
		if !sr.MatchGvk(gvk) || !sr.MatchName(n.GetName()) ||
			!sr.MatchNamespace(resid.NewResIdWithNamespace(gvk, n.GetName(), n.GetNamespace()).EffectiveNamespace()) {
			continue
		}
		ok, err := n.MatchesLabelSelector(target.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("target labelSelector: %w", err)
		}
		if !ok {
			continue
		}
		if ok, err = n.MatchesAnnotationSelector(target.AnnotationSelector); err != nil {
			return nil, fmt.Errorf("target annotationSelector: %w", err)
		}
		if ok {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil, fmt.Errorf("target %s matches no object%s", describeTarget(target), sameKind(nodes, sr))
	}
	return idx, nil
}

// sameKind names the objects of the kind a target that matched nothing
// names (a misspelt name or namespace), or "" when it names none or there
// are none.
func sameKind(nodes []*yaml.RNode, sr *kustomizetypes.SelectorRegex) string {
	var names []string
	for _, n := range nodes {
		if gvk := resid.GvkFromNode(n); gvk.Kind != "" && sr.MatchGvk(gvk) {
			names = append(names, strings.TrimPrefix(n.GetNamespace()+"/"+n.GetName(), "/"))
		}
	}
	if len(names) == 0 || len(names) == len(nodes) {
		return ""
	}
	slices.Sort(names)
	return "; objects of that kind: " + listSome(names)
}

// sameKindNamed names the objects of gvk's kind, for a patch identified by
// its own apiVersion, kind and name that matched none (a misspelt name, or
// another version), with their apiVersion when it is not the patch's; ""
// when there are none.
func sameKindNamed(nodes []*yaml.RNode, gvk resid.Gvk) string {
	var names []string
	for _, n := range nodes {
		if g := resid.GvkFromNode(n); g.Kind == gvk.Kind && g.Group == gvk.Group {
			name := strings.TrimPrefix(n.GetNamespace()+"/"+n.GetName(), "/")
			if g.Version != gvk.Version {
				name += " (apiVersion " + n.GetApiVersion() + ")"
			}
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	return "; objects of that kind: " + listSome(names)
}

// describeTarget writes a target the way a user wrote it.
func describeTarget(t *kustomizetypes.Selector) string {
	var parts []string
	for _, kv := range [][2]string{
		{"group", t.Group}, {"version", t.Version}, {"kind", t.Kind}, {"name", t.Name},
		{"namespace", t.Namespace}, {"labelSelector", t.LabelSelector}, {"annotationSelector", t.AnnotationSelector},
	} {
		if kv[1] != "" {
			parts = append(parts, fmt.Sprintf("%s=%q", kv[0], kv[1]))
		}
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func applyStrategicMerge(nodes []*yaml.RNode, patches []*yaml.RNode, p kustomizetypes.Patch, hooks mergeHooks) ([]*yaml.RNode, error) {
	if p.Target != nil {
		if len(patches) > 1 {
			return nil, errors.New("a patch with a target must hold one strategic-merge patch, not several")
		}
		idx, err := selectTarget(nodes, p.Target)
		if err != nil {
			return nil, err
		}
		return mergeInto(nodes, idx, patches[0], p.Options, hooks)
	}
	for _, patch := range patches {
		gvk := resid.GvkFromNode(patch)
		name, ns := patch.GetName(), patch.GetNamespace()
		var idx []int
		for i, n := range nodes {
			if resid.GvkFromNode(n).Equals(gvk) && n.GetName() == name && (ns == "" || n.GetNamespace() == ns) {
				idx = append(idx, i)
			}
		}
		switch len(idx) {
		case 0:
			return nil, fmt.Errorf("no object matches %s (apiVersion %s)%s", describe(patch), patch.GetApiVersion(), sameKindNamed(nodes, gvk))
		case 1:
		default:
			return nil, fmt.Errorf("%d objects match %s: set metadata.namespace in the patch or use a target", len(idx), describe(patch))
		}
		var err error
		if nodes, err = mergeInto(nodes, idx, patch, p.Options, hooks); err != nil {
			return nil, err
		}
	}
	return nodes, nil
}

// mergeInto applies a strategic-merge patch to nodes[idx...], dropping objects
// the patch deletes, as kustomize's Resource.ApplySmPatch does, and telling
// hooks.deleted (when not nil) about each. Before merging, it reads the patch
// against each object (checkMerge): an element the merge would add by mistake
// is an error, and a deletion that deletes nothing in any of the objects goes
// to hooks.noop.
func mergeInto(nodes []*yaml.RNode, idx []int, patch *yaml.RNode, options map[string]bool, hooks mergeHooks) ([]*yaml.RNode, error) {
	var errs []string
	noops := map[string]int{}
	var noopOrder []noop
	for _, i := range idx {
		c := checkMerge(nodes[i], patch)
		for _, e := range c.errs {
			errs = append(errs, describe(nodes[i])+": "+e)
		}
		for _, o := range c.noops {
			if noops[o.path]++; noops[o.path] == 1 {
				noopOrder = append(noopOrder, noop{o.path, describe(nodes[i]) + ": " + o.msg})
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "\n"))
	}
	for _, o := range noopOrder {
		if noops[o.path] < len(idx) || hooks.noop == nil {
			continue
		}
		if len(idx) > 1 {
			o.msg += fmt.Sprintf(" (nor in the %d other objects the target selects)", len(idx)-1)
		}
		hooks.noop(o.msg)
	}
	gone := map[int]bool{}
	for _, i := range idx {
		n := nodes[i]
		apiVersion, kind, name, ns := n.GetApiVersion(), n.GetKind(), n.GetName(), n.GetNamespace()
		pc := patch.Copy()
		// The target's apiVersion, not the patch's, as kustomize does.
		pc.SetApiVersion(apiVersion)
		out, err := patchstrategicmerge.Filter{Patch: pc}.Filter([]*yaml.RNode{n})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", describe(n), err)
		}
		if len(out) == 0 || out[0].IsNilOrEmpty() {
			gone[i] = true
			if hooks.deleted != nil {
				hooks.deleted(n)
			}
			continue
		}
		r := out[0]
		if !options["allowKindChange"] && r.GetKind() != kind {
			r.SetKind(kind)
		}
		if !options["allowNameChange"] && r.GetName() != name {
			if err := r.PipeE(yaml.SetK8sName(name)); err != nil {
				return nil, err
			}
		}
		if r.GetNamespace() != ns {
			if err := setNamespace(r, ns); err != nil {
				return nil, err
			}
		}
		nodes[i] = r
	}
	if len(gone) == 0 {
		return nodes, nil
	}
	out := make([]*yaml.RNode, 0, len(nodes)-len(gone))
	for i, n := range nodes {
		if !gone[i] {
			out = append(out, n)
		}
	}
	return out, nil
}

func applyJSON6902(nodes []*yaml.RNode, text string, target *kustomizetypes.Selector) ([]*yaml.RNode, error) {
	if target == nil {
		return nil, errors.New("a JSON 6902 patch needs a target")
	}
	idx, err := selectTarget(nodes, target)
	if err != nil {
		return nil, err
	}
	for _, i := range idx {
		if _, err := (patchjson6902.Filter{Patch: text}).Filter([]*yaml.RNode{nodes[i]}); err != nil {
			if hint := missingPath(nodes[i], text); hint != "" {
				return nil, fmt.Errorf("%s: %s", describe(nodes[i]), hint)
			}
			return nil, fmt.Errorf("%s: %w", describe(nodes[i]), err)
		}
	}
	return nodes, nil
}

// missingPath names the first operation of a JSON 6902 patch whose path
// leads through something the object lacks, with what the object has there
// (the keys of a map, the indexes of a list and the names of its items), or
// "" when every path exists. The library's "doc is missing path" names
// neither the operation nor what would have been right.
func missingPath(n *yaml.RNode, text string) string {
	ops, err := decodeJSONPatch(text)
	if err != nil {
		return ""
	}
	obj, err := n.Map()
	if err != nil {
		return ""
	}
	for _, op := range ops {
		kind := op.Kind()
		path, err := op.Path()
		if err != nil || kind == "unknown" {
			continue
		}
		segs := strings.Split(path, "/")[1:]
		if kind == "add" || kind == "copy" || kind == "move" {
			// The last segment of an add is created: only its parent must exist.
			segs = segs[:max(len(segs)-1, 0)]
		}
		var cur any = obj
		at := ""
		for _, seg := range segs {
			seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
			next, ok, has := step(cur, seg)
			if !ok {
				return fmt.Sprintf("%s %s: %s has no %s; %s", kind, echo.Short(path), cmp.Or(echo.Short(at), "the object"), echo.Quote(seg), has)
			}
			cur, at = next, at+"/"+seg
		}
	}
	return ""
}

// step follows one JSON pointer segment from v, or says what v has.
func step(v any, seg string) (next any, ok bool, has string) {
	switch t := v.(type) {
	case map[string]any:
		if x, ok := t[seg]; ok {
			return x, true, ""
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, echo.Short(k))
		}
		slices.Sort(keys)
		return nil, false, "it has " + listSome(keys)
	case []any:
		var i int
		if _, err := fmt.Sscanf(seg, "%d", &i); err == nil && fmt.Sprint(i) == seg && i >= 0 && i < len(t) {
			return t[i], true, ""
		}
		items := make([]string, len(t))
		for i, x := range t {
			items[i] = fmt.Sprint(i)
			if m, ok := x.(map[string]any); ok {
				if name, ok := m["name"].(string); ok {
					items[i] += " (" + echo.Short(name) + ")"
				}
			}
		}
		if len(items) == 0 {
			return nil, false, "it is an empty list"
		}
		return nil, false, "its items are " + listSome(items)
	}
	return nil, false, "it is not a map or a list"
}
