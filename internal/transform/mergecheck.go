package transform

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/editdist"
)

// This file reads a strategic-merge patch against the object it is about to
// patch, with the merge keys kustomize's merge itself uses (kyaml's OpenAPI
// schema of the built-in kinds), to find what the merge would do silently:
//
//   - An element of a merge-keyed list (containers by name, ports by
//     containerPort, …) whose key no element of the object has is not an
//     error to the merge: it appends a new element holding only the fields
//     the patch sets. That is refused when the new element is incomplete for
//     its type (it lacks a field the schema requires, or a container's
//     image, which the API server's validation requires), or when its type
//     needs more than its key (a container, a webhook) and its key is a
//     name one edit away from an existing element's (`manger` next to
//     `manager`):
//     both are a misspelt key far more often than an addition. A real
//     addition is complete (a sidecar with its name and image) and named
//     unlike its neighbours; one that is not can still be added with a JSON
//     6902 `add`, which says "append" explicitly.
//   - A deletion of what the object does not have (`$patch: delete` on an
//     element or a field it lacks, `field: null` for a field it lacks)
//     deletes nothing: a no-op, reported like any spec entry that matched
//     nothing (noop.go).
//
// Kinds without a built-in schema (custom resources) have no merge keys:
// kustomize replaces their lists whole, so there is nothing to check.

// mergeCheck is what checkMerge found in one object.
type mergeCheck struct {
	// errs are new elements refused, one line each.
	errs []string
	// noops are deletions that delete nothing, keyed by their path so
	// that a patch applied to several objects reports only those that
	// delete nothing in any of them.
	noops []noop
}

type noop struct{ path, msg string }

// checkMerge reads patch against obj (before the merge).
func checkMerge(obj, patch *yaml.RNode) mergeCheck {
	var c mergeCheck
	if directive(patch) == "delete" {
		return c // the whole object goes: nothing to check inside
	}
	schema := openapi.SchemaForResourceType(yaml.TypeMeta{APIVersion: obj.GetApiVersion(), Kind: obj.GetKind()})
	c.mapping(schema, "", obj, patch)
	return c
}

// directive is the value of a mapping's `$patch`, or "".
func directive(n *yaml.RNode) string {
	if n == nil || n.YNode().Kind != yaml.MappingNode {
		return ""
	}
	return str(n, "$patch")
}

// field returns the schema of a field, or nil.
func field(s *openapi.ResourceSchema, name string) *openapi.ResourceSchema {
	if s == nil {
		return nil
	}
	return s.Field(name)
}

// mapping walks the fields patch sets on obj (nil: obj lacks the map).
func (c *mergeCheck) mapping(schema *openapi.ResourceSchema, path string, obj, patch *yaml.RNode) {
	fields, err := patch.Fields()
	if err != nil {
		return
	}
	for _, name := range fields {
		if strings.HasPrefix(name, "$") {
			continue
		}
		p := joinPath(path, name)
		v := patch.Field(name).Value
		var have *yaml.RNode
		if obj != nil {
			if f := obj.Field(name); f != nil && !yaml.IsMissingOrNull(f.Value) {
				have = f.Value
			}
		}
		switch {
		case v.IsTaggedNull():
			if have == nil {
				c.noops = append(c.noops, noop{p, fmt.Sprintf("%s: null deletes nothing: the object has no %s", p, p)})
			}
		case v.YNode().Kind == yaml.MappingNode:
			switch directive(v) {
			case "delete":
				if have == nil {
					c.noops = append(c.noops, noop{p, fmt.Sprintf("$patch: delete of %s deletes nothing: the object has no %s", p, p)})
				}
			case "replace":
			default:
				if have != nil && have.YNode().Kind != yaml.MappingNode {
					have = nil
				}
				c.mapping(field(schema, name), p, have, v)
			}
		case v.YNode().Kind == yaml.SequenceNode:
			if have != nil && have.YNode().Kind != yaml.SequenceNode {
				have = nil
			}
			c.list(field(schema, name), p, have, v)
		}
	}
}

// list walks a list the patch sets: only merge-keyed lists of objects merge
// element by element; other lists are replaced whole.
func (c *mergeCheck) list(schema *openapi.ResourceSchema, path string, have, patch *yaml.RNode) {
	if schema == nil {
		return
	}
	strategy, keys := schema.PatchStrategyAndKeyList()
	if !slices.Contains(strings.Split(strategy, ","), "merge") || len(keys) == 0 {
		return
	}
	var existing []*yaml.RNode
	if have != nil {
		existing, _ = have.Elements()
	}
	elems, _ := patch.Elements()
	// A list-wide directive (an element holding only `$patch`).
	for _, e := range elems {
		if fs, _ := e.Fields(); len(fs) == 1 && fs[0] == "$patch" {
			switch directive(e) {
			case "replace":
				return
			case "delete":
				if len(existing) == 0 {
					c.noops = append(c.noops, noop{path, fmt.Sprintf("$patch: delete of %s deletes nothing: the object has no %s", path, path)})
				}
				return
			}
		}
	}
	elemSchema := schema.Elements()
	noun := elementNoun(path)
	for _, e := range elems {
		if e.YNode().Kind != yaml.MappingNode {
			continue
		}
		if fs, _ := e.Fields(); len(fs) == 1 && fs[0] == "$patch" {
			continue
		}
		id, match := keyID(e, keys), matching(existing, e, keys)
		p := path + "[" + id + "]"
		switch {
		case directive(e) == "delete":
			if match == nil {
				c.noops = append(c.noops, noop{p, fmt.Sprintf("$patch: delete of %s deletes nothing: no %s has %s; existing: %s", p, noun, id, listSome(keyIDs(existing, keys)))})
			}
		case directive(e) == "replace":
		case match != nil:
			c.mapping(elemSchema, p, match, e)
		default:
			c.created(elemSchema, p, noun, e, keys, existing)
		}
	}
}

// created judges an element the merge would append (see the file comment).
func (c *mergeCheck) created(schema *openapi.ResourceSchema, path, noun string, e *yaml.RNode, keys []string, existing []*yaml.RNode) {
	required := requiredFields(schema)
	var missing, sets []string
	for _, r := range required {
		if f := e.Field(r); f == nil || yaml.IsMissingOrNull(f.Value) {
			missing = append(missing, r)
		}
	}
	fields, _ := e.Fields()
	for _, f := range fields {
		if !strings.HasPrefix(f, "$") && !slices.Contains(keys, f) {
			sets = append(sets, f)
		}
	}
	holding := "nothing but its key"
	if len(sets) > 0 {
		holding = "only " + strings.Join(sets, ", ")
	}
	head := fmt.Sprintf("%s matches no %s; existing: %s", path, noun, listSome(keyIDs(existing, keys)))
	fix := "fix the keys"
	if len(keys) == 1 {
		fix = "fix the " + keys[0]
	}
	if len(missing) > 0 {
		c.errs = append(c.errs, fmt.Sprintf("%s — %s (a strategic-merge patch would add a new %s holding %s, without %s)",
			head, fix, noun, holding, strings.Join(missing, ", ")))
		return
	}
	if len(keys) != 1 || keys[0] != "name" || len(required) <= 1 {
		// Complete, and its type needs nothing beyond its key, or its key
		// is not a name (a mount path, a port: /certs2 next to /certs is
		// an addition): an addition.
		return
	}
	name := str(e, keys[0])
	for _, x := range existing {
		if other := str(x, keys[0]); editdist.OneEditApart(name, other) {
			c.errs = append(c.errs, fmt.Sprintf("%s — did you mean %s? %s (a strategic-merge patch would add a new %s holding %s; to add a %s named %s next to %s, use a JSON 6902 patch with op: add)",
				head, other, strings.ToUpper(fix[:1])+fix[1:], noun, holding, noun, name, other))
			return
		}
	}
}

// requiredFields are the fields a new element of this type must have: the
// schema's required list, and what the API server's validation requires
// beyond it (a container's image: the schema leaves it optional for
// higher-level objects that fill it in, a pod template does not).
func requiredFields(schema *openapi.ResourceSchema) []string {
	if schema == nil || schema.Schema == nil {
		return nil
	}
	req := slices.Clone(schema.Schema.Required)
	props := schema.Schema.Properties
	_, image := props["image"]
	_, pullPolicy := props["imagePullPolicy"]
	if image && pullPolicy && !slices.Contains(req, "image") {
		req = append(req, "image")
	}
	return req
}

// matching returns the element of existing that e's keys select, as the
// merge selects it: every key e sets has the same value.
func matching(existing []*yaml.RNode, e *yaml.RNode, keys []string) *yaml.RNode {
	for _, x := range existing {
		ok, any := true, false
		for _, k := range keys {
			v := e.Field(k)
			if v == nil {
				continue
			}
			any = true
			if str(x, k) != yaml.GetValue(v.Value) {
				ok = false
				break
			}
		}
		if ok && any {
			return x
		}
	}
	return nil
}

// keyID writes an element's keys as a path segment: name=manager, or
// containerPort=8080,protocol=TCP.
func keyID(e *yaml.RNode, keys []string) string {
	var parts []string
	for _, k := range keys {
		if v := e.Field(k); v != nil {
			parts = append(parts, k+"="+yaml.GetValue(v.Value))
		}
	}
	if len(parts) == 0 {
		return "no " + strings.Join(keys, ", ")
	}
	return strings.Join(parts, ",")
}

// keyIDs lists the elements of a list by their key values (the first key's,
// when there is one: "manager", "kube-rbac-proxy").
func keyIDs(elems []*yaml.RNode, keys []string) []string {
	var out []string
	for _, x := range elems {
		if len(keys) == 1 {
			out = append(out, str(x, keys[0]))
		} else {
			out = append(out, keyID(x, keys))
		}
	}
	return out
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// elementNoun names an element of the list at path in words:
// "spec.template.spec.initContainers" → "init container".
func elementNoun(path string) string {
	name := path[strings.LastIndex(path, ".")+1:]
	switch {
	case strings.HasSuffix(name, "ies"):
		name = strings.TrimSuffix(name, "ies") + "y"
	case strings.HasSuffix(name, "sses"), strings.HasSuffix(name, "ases"):
		name = strings.TrimSuffix(name, "es")
	case strings.HasSuffix(name, "s"):
		name = strings.TrimSuffix(name, "s")
	default:
		name += " entry"
	}
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte(' ')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
