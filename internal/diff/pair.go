package diff

import (
	"cmp"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// pair matches TO's objects (b) with FROM's (a) and returns, for each paired
// index of b, its index in a. Three passes, each over what the earlier left:
//  1. the same group, kind, namespace and name;
//  2. RBAC by role: the same kind and namespace bound to the same
//     ServiceAccounts (OLM's hashed names change with every rule change);
//  3. the same name once FROM's CSV name is replaced by TO's (a CSV rename).
func pair(a, b []item, fromCSV, toCSV string) map[int]int {
	pairs := map[int]int{}
	used := map[int]bool{}
	match := func(key func(it item, side []item, from bool) string) {
		left := map[string][]int{}
		for i, it := range a {
			if !used[i] {
				if k := key(it, a, true); k != "" {
					left[k] = append(left[k], i)
				}
			}
		}
		right := map[string][]int{}
		var keys []string
		for j, it := range b {
			if _, ok := pairs[j]; ok {
				continue
			}
			if k := key(it, b, false); k != "" && len(left[k]) > 0 {
				if len(right[k]) == 0 {
					keys = append(keys, k)
				}
				right[k] = append(right[k], j)
			}
		}
		for _, k := range keys {
			for j, i := range closest(a, b, left[k], right[k]) {
				pairs[j], used[i] = i, true
			}
		}
	}
	match(func(it item, _ []item, _ bool) string { return it.obj.String() })
	match(func(it item, side []item, _ bool) string { return roleKey(it, side) })
	if fromCSV != "" && toCSV != "" && fromCSV != toCSV {
		match(func(it item, _ []item, from bool) string {
			o := it.obj
			if from {
				o.Name = strings.ReplaceAll(o.Name, fromCSV, toCSV)
			}
			return o.String()
		})
	}
	return pairs
}

// closest pairs candidates of one key, most similar first: one each side is
// the common case; several (two permission entries for one ServiceAccount)
// go by the share of identical lines.
func closest(a, b []item, is, js []int) map[int]int {
	out := map[int]int{}
	if len(is) == 1 && len(js) == 1 {
		out[js[0]] = is[0]
		return out
	}
	type cand struct {
		i, j  int
		ratio float64
	}
	var cands []cand
	for _, i := range is {
		for _, j := range js {
			m := difflib.NewMatcher(difflib.SplitLines(a[i].text), difflib.SplitLines(b[j].text))
			cands = append(cands, cand{i, j, m.Ratio()})
		}
	}
	slices.SortStableFunc(cands, func(x, y cand) int {
		return cmp.Or(cmp.Compare(y.ratio, x.ratio), cmp.Compare(x.j, y.j), cmp.Compare(x.i, y.i))
	})
	usedI := map[int]bool{}
	for _, c := range cands {
		if _, ok := out[c.j]; ok || usedI[c.i] {
			continue
		}
		out[c.j], usedI[c.i] = c.i, true
	}
	return out
}

var rbacKinds = map[string]bool{"Role": true, "ClusterRole": true, "RoleBinding": true, "ClusterRoleBinding": true}

// roleKey is "kind namespace ← subjects" for RBAC objects: a binding's
// ServiceAccount subjects, and for a role those of the bindings (of its own
// render) that grant it. "" for anything else, or a role nothing binds.
func roleKey(it item, side []item) string {
	o := it.obj
	if o.Group != "rbac.authorization.k8s.io" || !rbacKinds[o.Kind] {
		return ""
	}
	var subjects []string
	if strings.HasSuffix(o.Kind, "Binding") {
		subjects = serviceAccounts(it)
	} else {
		for _, other := range side {
			if other.obj.Group == o.Group && other.obj.Kind == o.Kind+"Binding" && other.obj.Namespace == o.Namespace &&
				ref(other, "kind") == o.Kind && ref(other, "name") == o.Name {
				subjects = append(subjects, serviceAccounts(other)...)
			}
		}
	}
	if len(subjects) == 0 {
		return ""
	}
	slices.Sort(subjects)
	return o.Kind + " " + o.Namespace + " <- " + strings.Join(slices.Compact(subjects), ",")
}

// serviceAccounts lists a binding's ServiceAccount subjects as namespace/name.
func serviceAccounts(it item) []string {
	subjects, err := it.node.Pipe(yaml.Lookup("subjects"))
	if err != nil || subjects == nil {
		return nil
	}
	elems, err := subjects.Elements()
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range elems {
		if field(s, "kind") == "ServiceAccount" {
			out = append(out, field(s, "namespace")+"/"+field(s, "name"))
		}
	}
	return out
}

// ref reads roleRef.<key> of a binding.
func ref(it item, key string) string {
	n, err := it.node.Pipe(yaml.Lookup("roleRef"))
	if err != nil || n == nil {
		return ""
	}
	return field(n, key)
}

// field reads a scalar field of a mapping node, "" when absent.
func field(n *yaml.RNode, key string) string {
	f := n.Field(key)
	if f == nil || f.Value == nil {
		return ""
	}
	return yaml.GetValue(f.Value)
}
