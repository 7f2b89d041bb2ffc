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
	match := func(key func(i int, it item, from bool) string) {
		left := map[string][]int{}
		for i, it := range a {
			if !used[i] {
				if k := key(i, it, true); k != "" {
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
			if k := key(j, it, false); k != "" && len(left[k]) > 0 {
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
	match(func(_ int, it item, _ bool) string { return it.obj.String() })
	roleA, roleB := roleKeys(a), roleKeys(b)
	match(func(i int, _ item, from bool) string {
		if from {
			return roleA[i]
		}
		return roleB[i]
	})
	if fromCSV != "" && toCSV != "" && fromCSV != toCSV {
		match(func(_ int, it item, from bool) string {
			o := it.obj
			if from {
				o.Name = strings.ReplaceAll(o.Name, fromCSV, toCSV)
			}
			return o.String()
		})
	}
	return pairs
}

// maxClosestPairs bounds the candidate pairs closest compares line by line
// (each comparison is quadratic in lines): beyond, candidates pair in order.
// Two or three permission entries of one ServiceAccount are the honest case.
const maxClosestPairs = 256

// maxRatioCells bounds the line pairs of two candidates weighed in order;
// bigger ones are weighed by the lines they share in any order.
const maxRatioCells = 1_000_000

// closest pairs candidates of one key, most similar first: one each side is
// the common case; several (two permission entries for one ServiceAccount)
// go by the share of identical lines, and more than maxClosestPairs in order.
func closest(a, b []item, is, js []int) map[int]int {
	out := map[int]int{}
	if len(is) == 1 && len(js) == 1 || len(is)*len(js) > maxClosestPairs {
		for k := range min(len(is), len(js)) {
			out[js[k]] = is[k]
		}
		return out
	}
	type cand struct {
		i, j  int
		ratio float64
	}
	var cands []cand
	for _, i := range is {
		for _, j := range js {
			la, lb := difflib.SplitLines(a[i].text), difflib.SplitLines(b[j].text)
			m := difflib.NewMatcher(la, lb)
			ratio := m.QuickRatio // the shared lines in any order: linear
			if len(la)*len(lb) <= maxRatioCells {
				ratio = m.Ratio // in order: quadratic, or worse, in lines
			}
			cands = append(cands, cand{i, j, ratio()})
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

// roleKeys gives, for each RBAC object of a render, "kind namespace ←
// subjects": a binding's ServiceAccount subjects, and for a role those of
// the bindings (of its own render) that grant it. "" for anything else, or
// a role nothing binds. Bindings are indexed by the role they grant, so the
// render is read once, not once per role.
func roleKeys(side []item) map[int]string {
	type grant struct{ kind, namespace, name string }
	granted := map[grant][]string{}
	for _, it := range side {
		o := it.obj
		if o.Group == "rbac.authorization.k8s.io" && (o.Kind == "RoleBinding" || o.Kind == "ClusterRoleBinding") {
			g := grant{strings.TrimSuffix(o.Kind, "Binding"), o.Namespace, ref(it, "name")}
			if ref(it, "kind") == g.kind {
				granted[g] = append(granted[g], serviceAccounts(it)...)
			}
		}
	}
	out := map[int]string{}
	for i, it := range side {
		o := it.obj
		if o.Group != "rbac.authorization.k8s.io" || !rbacKinds[o.Kind] {
			continue
		}
		var subjects []string
		if strings.HasSuffix(o.Kind, "Binding") {
			subjects = serviceAccounts(it)
		} else {
			subjects = slices.Clone(granted[grant{o.Kind, o.Namespace, o.Name}])
		}
		if len(subjects) == 0 {
			continue
		}
		slices.Sort(subjects)
		out[i] = o.Kind + " " + o.Namespace + " <- " + strings.Join(slices.Compact(subjects), ",")
	}
	return out
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
