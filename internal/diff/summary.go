package diff

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"
)

// summarize says in words what changed between two paired objects, for the
// kinds a reviewer of a bump cares most about; nil for the others.
func summarize(old, cur item) ([]string, error) {
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
		more, err = summarizeCRD(old.text, cur.text)
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
// storage flags changed, and fields (JSON paths into the object)
// added and removed; and a scope change.
func summarizeCRD(oldText, curText string) ([]string, error) {
	var a, b apiextv1.CustomResourceDefinition
	if err := yaml.Unmarshal([]byte(oldText), &a); err != nil {
		return nil, fmt.Errorf("reading the FROM CRD: %w", err)
	}
	if err := yaml.Unmarshal([]byte(curText), &b); err != nil {
		return nil, fmt.Errorf("reading the TO CRD: %w", err)
	}
	var out []string
	if a.Spec.Scope != b.Spec.Scope {
		out = append(out, fmt.Sprintf("scope %s -> %s", a.Spec.Scope, b.Spec.Scope))
	}
	old := map[string]apiextv1.CustomResourceDefinitionVersion{}
	for _, v := range a.Spec.Versions {
		old[v.Name] = v
	}
	seen := map[string]bool{}
	for _, v := range b.Spec.Versions {
		seen[v.Name] = true
		p, ok := old[v.Name]
		if !ok {
			out = append(out, fmt.Sprintf("%s: version added (served=%t, storage=%t)", v.Name, v.Served, v.Storage))
			continue
		}
		if p.Served != v.Served {
			out = append(out, fmt.Sprintf("%s: served %t -> %t", v.Name, p.Served, v.Served))
		}
		if p.Storage != v.Storage {
			out = append(out, fmt.Sprintf("%s: storage %t -> %t", v.Name, p.Storage, v.Storage))
		}
		before, after := fields(p.Schema), fields(v.Schema)
		n := len(out)
		for _, f := range after {
			if _, found := slices.BinarySearch(before, f); !found {
				out = append(out, fmt.Sprintf("%s: field added %s", v.Name, f))
			}
		}
		for _, f := range before {
			if _, found := slices.BinarySearch(after, f); !found {
				out = append(out, fmt.Sprintf("%s: field removed %s", v.Name, f))
			}
		}
		if len(out) == n && !equality.Semantic.DeepEqual(p.Schema, v.Schema) {
			out = append(out, v.Name+": schema changed (descriptions or validations; no field added or removed)")
		}
	}
	for _, v := range a.Spec.Versions {
		if !seen[v.Name] {
			out = append(out, fmt.Sprintf("%s: version removed (was served=%t, storage=%t)", v.Name, v.Served, v.Storage))
		}
	}
	return out, nil
}

// fields lists the JSON paths a version's schema declares, sorted: ".spec.x",
// "[*]" for array items, ".*" for additionalProperties values.
func fields(v *apiextv1.CustomResourceValidation) []string {
	if v == nil || v.OpenAPIV3Schema == nil {
		return nil
	}
	var out []string
	var walk func(path string, s *apiextv1.JSONSchemaProps, depth int)
	walk = func(path string, s *apiextv1.JSONSchemaProps, depth int) {
		if s == nil || depth > 64 { // schemas are trees; the bound only guards hostile input
			return
		}
		for name, p := range s.Properties {
			child := path + "." + name
			out = append(out, child)
			walk(child, &p, depth+1)
		}
		if s.Items != nil {
			walk(path+"[*]", s.Items.Schema, depth+1)
		}
		if s.AdditionalProperties != nil {
			walk(path+".*", s.AdditionalProperties.Schema, depth+1)
		}
	}
	walk("", v.OpenAPIV3Schema, 0)
	sort.Strings(out)
	return out
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
