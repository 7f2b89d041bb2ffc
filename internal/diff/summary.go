package diff

import (
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"
)

// summarize says in words what changed between two paired objects, for the
// kinds a reviewer of a bump cares most about; nil for the others.
func summarize(ctx context.Context, old, cur item) ([]string, error) {
	var out []string
	if old.obj.Name != cur.obj.Name {
		out = append(out, "renamed from "+old.obj.Name)
	}
	if metadataOnly(old, cur) {
		return append(out, "labels or annotations only"), nil
	}
	var more []string
	var err error
	switch {
	case cur.obj.Group == "apiextensions.k8s.io" && cur.obj.Kind == "CustomResourceDefinition":
		more, err = summarizeCRD(ctx, old.node.YNode(), cur.node.YNode())
	case cur.obj.Group == "apps" && cur.obj.Kind == "Deployment":
		more, err = summarizeDeployment(old.text, cur.text)
	case cur.obj.Group == "rbac.authorization.k8s.io" && (cur.obj.Kind == "Role" || cur.obj.Kind == "ClusterRole"):
		more, err = summarizeRules(old.text, cur.text)
	}
	return append(out, more...), err
}

// metadataOnly reports whether two objects differ in nothing but their
// labels and annotations (and name, which the summary already says). It
// walks the two node trees side by side: writing both out again to compare
// the texts cost as much as the renders themselves.
func metadataOnly(old, cur item) bool {
	return sameNode(old.node.YNode(), cur.node.YNode(), true)
}

// sameNode compares values (kind, resolved tag, scalar value, content in
// order), not styles; top says n is the object, whose metadata's labels,
// annotations and name are skipped.
func sameNode(a, b *kyaml.Node, top bool) bool {
	for a.Kind == kyaml.DocumentNode && len(a.Content) == 1 {
		a = a.Content[0]
	}
	for b.Kind == kyaml.DocumentNode && len(b.Content) == 1 {
		b = b.Content[0]
	}
	if a.Kind != b.Kind || a.ShortTag() != b.ShortTag() || a.Value != b.Value {
		return false
	}
	if a.Kind == kyaml.AliasNode {
		return sameNode(a.Alias, b.Alias, false)
	}
	if top && a.Kind == kyaml.MappingNode {
		ac, bc := withoutMetadataNames(a.Content), withoutMetadataNames(b.Content)
		if len(ac) != len(bc) {
			return false
		}
		for i := range ac {
			if !sameNode(ac[i], bc[i], false) {
				return false
			}
		}
		return true
	}
	if len(a.Content) != len(b.Content) {
		return false
	}
	for i := range a.Content {
		if !sameNode(a.Content[i], b.Content[i], false) {
			return false
		}
	}
	return true
}

// withoutMetadataNames is an object's key/value list with metadata's
// labels, annotations and name left out (a new metadata node; the others
// shared).
func withoutMetadataNames(content []*kyaml.Node) []*kyaml.Node {
	out := make([]*kyaml.Node, 0, len(content))
	for i := 0; i+1 < len(content); i += 2 {
		k, v := content[i], content[i+1]
		if k.Value == "metadata" && v.Kind == kyaml.MappingNode {
			m := &kyaml.Node{Kind: v.Kind, Tag: v.Tag}
			for j := 0; j+1 < len(v.Content); j += 2 {
				switch v.Content[j].Value {
				case "labels", "annotations", "name":
				default:
					m.Content = append(m.Content, v.Content[j], v.Content[j+1])
				}
			}
			v = m
		}
		out = append(out, k, v)
	}
	return out
}

// summarizeCRD lists, per version: versions added and removed, served and
// storage flags changed, and fields (JSON paths into the object) added and
// removed; and a scope change. It reads the two CRDs' YAML nodes, already
// parsed, in time linear in their size and checking ctx every few thousand
// nodes: decoding two CRDs of 100,000 properties into Go structs (as it did)
// took seconds and 300 MB that no deadline could interrupt.
func summarizeCRD(ctx context.Context, a, b *kyaml.Node) ([]string, error) {
	w := &nodeWalk{ctx: ctx}
	var out []string
	if sa, sb := scalarAt(a, "spec", "scope"), scalarAt(b, "spec", "scope"); sa != sb {
		out = append(out, fmt.Sprintf("scope %s -> %s", sa, sb))
	}
	before, after := crdVersions(a), crdVersions(b)
	old := map[string]crdVersion{}
	for _, v := range before {
		old[v.name] = v
	}
	seen := map[string]bool{}
	for _, v := range after {
		seen[v.name] = true
		p, ok := old[v.name]
		if !ok {
			out = append(out, fmt.Sprintf("%s: version added (served=%t, storage=%t)", v.name, v.served, v.storage))
			continue
		}
		if p.served != v.served {
			out = append(out, fmt.Sprintf("%s: served %t -> %t", v.name, p.served, v.served))
		}
		if p.storage != v.storage {
			out = append(out, fmt.Sprintf("%s: storage %t -> %t", v.name, p.storage, v.storage))
		}
		was, is := w.fields(p.schema), w.fields(v.schema)
		n := len(out)
		for _, f := range is {
			if _, found := slices.BinarySearch(was, f); !found {
				out = append(out, fmt.Sprintf("%s: field added %s", v.name, f))
			}
		}
		for _, f := range was {
			if _, found := slices.BinarySearch(is, f); !found {
				out = append(out, fmt.Sprintf("%s: field removed %s", v.name, f))
			}
		}
		if len(out) == n && !w.same(p.schema, v.schema, 0) {
			out = append(out, v.name+": schema changed (descriptions or validations; no field added or removed)")
		}
		if w.err != nil {
			return nil, w.err
		}
	}
	for _, v := range before {
		if !seen[v.name] {
			out = append(out, fmt.Sprintf("%s: version removed (was served=%t, storage=%t)", v.name, v.served, v.storage))
		}
	}
	return out, w.err
}

// crdVersion is what summarizeCRD reads of one of spec.versions.
type crdVersion struct {
	name            string
	served, storage bool
	// schema is schema.openAPIV3Schema, nil when absent.
	schema *kyaml.Node
}

func crdVersions(crd *kyaml.Node) []crdVersion {
	vs := nodeAt(crd, "spec", "versions")
	if vs == nil || vs.Kind != kyaml.SequenceNode {
		return nil
	}
	out := make([]crdVersion, 0, len(vs.Content))
	for _, v := range vs.Content {
		out = append(out, crdVersion{name: scalarAt(v, "name"), served: scalarAt(v, "served") == "true",
			storage: scalarAt(v, "storage") == "true", schema: nodeAt(v, "schema", "openAPIV3Schema")})
	}
	return out
}

// nodeAt is the value at path through mappings from n, nil when there is
// none.
func nodeAt(n *kyaml.Node, path ...string) *kyaml.Node {
	v, err := kyaml.NewRNode(n).Pipe(kyaml.Lookup(path...))
	if err != nil || v == nil {
		return nil
	}
	return v.YNode()
}

// scalarAt is the scalar value at path, "" when there is none.
func scalarAt(n *kyaml.Node, path ...string) string {
	if v := nodeAt(n, path...); v != nil && v.Kind == kyaml.ScalarNode {
		return v.Value
	}
	return ""
}

// nodeWalk walks schemas, checking ctx every checkEvery nodes; once ctx is
// done, err is its error and the walk stops.
type nodeWalk struct {
	ctx   context.Context
	nodes int
	err   error
}

// checkEvery is how many nodes a walk visits between checks of its context:
// a few milliseconds of work.
const checkEvery = 4096

func (w *nodeWalk) visit() bool {
	if w.err != nil {
		return false
	}
	if w.nodes++; w.nodes%checkEvery == 0 {
		w.err = w.ctx.Err()
	}
	return w.err == nil
}

// maxSchemaDepth bounds the walks: schemas are trees, the bound only guards
// hostile input.
const maxSchemaDepth = 64

// fields lists the JSON paths a version's schema declares, sorted: ".spec.x",
// "[*]" for array items, ".*" for additionalProperties values.
func (w *nodeWalk) fields(schema *kyaml.Node) []string {
	var out []string
	var walk func(path string, s *kyaml.Node, depth int)
	walk = func(path string, s *kyaml.Node, depth int) {
		if s == nil || s.Kind != kyaml.MappingNode || depth > maxSchemaDepth || !w.visit() {
			return
		}
		for i := 0; i+1 < len(s.Content); i += 2 {
			switch v := s.Content[i+1]; s.Content[i].Value {
			case "properties":
				if v.Kind != kyaml.MappingNode {
					continue
				}
				for j := 0; j+1 < len(v.Content); j += 2 {
					child := path + "." + v.Content[j].Value
					out = append(out, child)
					walk(child, v.Content[j+1], depth+1)
				}
			case "items":
				walk(path+"[*]", v, depth+1)
			case "additionalProperties":
				walk(path+".*", v, depth+1)
			}
		}
	}
	walk("", schema, 0)
	slices.Sort(out)
	return slices.Compact(out)
}

// same reports whether two schema nodes hold the same value: a mapping's
// keys in any order (as the decoded schemas compared), styles aside.
func (w *nodeWalk) same(a, b *kyaml.Node, depth int) bool {
	if a == nil || b == nil {
		return a == b
	}
	if depth > maxSchemaDepth*4 || !w.visit() {
		return false
	}
	if a.Kind != b.Kind || a.ShortTag() != b.ShortTag() || a.Value != b.Value || len(a.Content) != len(b.Content) {
		return false
	}
	if a.Kind == kyaml.AliasNode {
		return w.same(a.Alias, b.Alias, depth+1)
	}
	if a.Kind != kyaml.MappingNode {
		for i := range a.Content {
			if !w.same(a.Content[i], b.Content[i], depth+1) {
				return false
			}
		}
		return true
	}
	values := make(map[string]*kyaml.Node, len(b.Content)/2)
	for i := 0; i+1 < len(b.Content); i += 2 {
		values[b.Content[i].Value] = b.Content[i+1]
	}
	for i := 0; i+1 < len(a.Content); i += 2 {
		v, ok := values[a.Content[i].Value]
		if !ok || !w.same(a.Content[i+1], v, depth+1) {
			return false
		}
	}
	return true
}

// summarizeDeployment lists image changes, and containers added or removed.
func summarizeDeployment(oldText, curText string) ([]string, error) {
	var a, b appsv1.Deployment
	if err := yaml.Unmarshal([]byte(oldText), &a); err != nil {
		return nil, fmt.Errorf("reading the FROM Deployment: %w", err)
	}
	if err := yaml.Unmarshal([]byte(curText), &b); err != nil {
		return nil, fmt.Errorf("reading the TO Deployment: %w", err)
	}
	images := func(d appsv1.Deployment) (map[string]string, []string) {
		m := map[string]string{}
		var order []string
		add := func(prefix string, cs []corev1.Container) {
			for _, c := range cs {
				m[prefix+c.Name] = c.Image
				order = append(order, prefix+c.Name)
			}
		}
		add("init container ", d.Spec.Template.Spec.InitContainers)
		add("container ", d.Spec.Template.Spec.Containers)
		return m, order
	}
	before, beforeOrder := images(a)
	after, afterOrder := images(b)
	var out []string
	for _, c := range afterOrder {
		switch img, ok := before[c]; {
		case !ok:
			out = append(out, fmt.Sprintf("%s added (image %s)", c, after[c]))
		case img != after[c]:
			out = append(out, fmt.Sprintf("%s: image %s -> %s", c, img, after[c]))
		}
	}
	for _, c := range beforeOrder {
		if _, ok := after[c]; !ok {
			out = append(out, fmt.Sprintf("%s removed (image %s)", c, before[c]))
		}
	}
	return append(out, relatedImages(a, b)...), nil
}

// relatedImages lists changes of the RELATED_IMAGE_* variables OLM operators
// read their operand images from: a bump often changes only those.
func relatedImages(a, b appsv1.Deployment) []string {
	env := func(d appsv1.Deployment) (map[string]string, []string) {
		m := map[string]string{}
		var order []string
		for _, c := range d.Spec.Template.Spec.Containers {
			for _, e := range c.Env {
				if strings.HasPrefix(e.Name, "RELATED_IMAGE_") {
					k := "container " + c.Name + ": " + e.Name
					if _, dup := m[k]; !dup {
						order = append(order, k)
					}
					m[k] = e.Value
				}
			}
		}
		return m, order
	}
	before, _ := env(a)
	after, order := env(b)
	var out []string
	for _, k := range order {
		if old, ok := before[k]; !ok {
			out = append(out, fmt.Sprintf("%s added (%s)", k, after[k]))
		} else if old != after[k] {
			out = append(out, fmt.Sprintf("%s %s -> %s", k, old, after[k]))
		}
	}
	return out
}

func cmpOr(s, def []string) []string {
	if len(s) == 0 {
		return def
	}
	return s
}
