package diff

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// summarizeRules lists how the policy rules of a Role or ClusterRole changed.
// A rule that only gained or lost resources (a bump adding
// issuers/finalizers to a twelve-resource rule, say) is paired with its
// previous form and reported as those resources, not as a whole rule removed
// and another added; a rule with no counterpart is "rule added" or "rule
// removed".
func summarizeRules(oldText, curText string) ([]string, error) {
	var a, b rbacv1.ClusterRole // a Role has the same rules field
	if err := yaml.Unmarshal([]byte(oldText), &a); err != nil {
		return nil, fmt.Errorf("reading the FROM role: %w", err)
	}
	if err := yaml.Unmarshal([]byte(curText), &b); err != nil {
		return nil, fmt.Errorf("reading the TO role: %w", err)
	}
	before, after := unmatched(a.Rules, b.Rules), unmatched(b.Rules, a.Rules)
	pairs := pairRules(before, after)
	paired := map[int]bool{}
	var out []string
	for i, r := range after {
		j, ok := pairs[i]
		if !ok {
			out = append(out, "rule added: "+ruleString(r))
			continue
		}
		paired[j] = true
		out = append(out, ruleChange(before[j], r))
	}
	for j, r := range before {
		if !paired[j] {
			out = append(out, "rule removed: "+ruleString(r))
		}
	}
	return out, nil
}

// unmatched returns the rules of rules that other lacks, in order.
func unmatched(rules, other []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	others := make(map[string]bool, len(other))
	for _, r := range other {
		others[ruleString(r)] = true
	}
	var out []rbacv1.PolicyRule
	for _, r := range rules {
		if !others[ruleString(r)] {
			out = append(out, r)
		}
	}
	return out
}

// maxRulePairs bounds the rule pairs pairRules weighs: a role of thousands
// of unmatched rules (no honest one has a hundred) gets "rule added" and
// "rule removed" lines without pairing.
const maxRulePairs = 100_000

// pairRules pairs each new rule (index into after) with a previous one
// (index into before) that grants the same verbs on the same API groups (and
// resource names) and shares at least one resource or URL; among several, the
// one sharing the most, then the first. Rules whose verbs or groups changed
// are not paired: "rule added" and "rule removed" say that more plainly.
func pairRules(before, after []rbacv1.PolicyRule) map[int]int {
	pairs := map[int]int{}
	if len(before)*len(after) > maxRulePairs {
		return pairs
	}
	byKey := map[string][]int{}
	sets := make([]map[string]bool, len(before))
	for j, p := range before {
		byKey[ruleKey(p)] = append(byKey[ruleKey(p)], j)
		sets[j] = set(targets(p))
	}
	taken := map[int]bool{}
	for i, r := range after {
		best, bestShared := -1, 0
		for _, j := range byKey[ruleKey(r)] {
			if taken[j] {
				continue
			}
			if n := shared(sets[j], targets(r)); n > bestShared {
				best, bestShared = j, n
			}
		}
		if best >= 0 {
			pairs[i] = best
			taken[best] = true
		}
	}
	return pairs
}

// ruleKey is what a rule grants apart from its resources and URLs: verbs,
// API groups and resource names, each sorted.
func ruleKey(r rbacv1.PolicyRule) string {
	sorted := func(s []string) string {
		c := slices.Clone(s)
		slices.Sort(c)
		return strings.Join(c, ",")
	}
	return sorted(r.Verbs) + "|" + sorted(r.APIGroups) + "|" + sorted(r.ResourceNames) + "|" + fmt.Sprint(len(r.NonResourceURLs) > 0)
}

// targets are the resources of a rule, or its URLs for a non-resource rule.
func targets(r rbacv1.PolicyRule) []string {
	return append(slices.Clone(r.Resources), r.NonResourceURLs...)
}

func set(s []string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, v := range s {
		m[v] = true
	}
	return m
}

// shared counts the entries of b that a holds.
func shared(a map[string]bool, b []string) int {
	n := 0
	for _, s := range b {
		if a[s] {
			n++
		}
	}
	return n
}

// ruleChange says what a paired rule gained and lost, e.g. "rule
// get,list,watch on cert-manager.io: resources added issuers/finalizers".
func ruleChange(old, cur rbacv1.PolicyRule) string {
	what := "resources"
	var scope string
	if len(cur.NonResourceURLs) > 0 {
		what = "URLs"
		scope = "non-resource URLs"
	} else {
		groups := make([]string, 0, len(cur.APIGroups))
		for _, g := range cmpOr(cur.APIGroups, []string{""}) {
			if g == "" {
				g = "the core group"
			}
			groups = append(groups, g)
		}
		scope = strings.Join(groups, ",")
	}
	s := "rule " + strings.Join(cur.Verbs, ",") + " on " + scope
	if len(cur.ResourceNames) > 0 {
		s += " (names " + strings.Join(cur.ResourceNames, ",") + ")"
	}
	s += ":"
	before, after := targets(old), targets(cur)
	var parts []string
	if added := missing(after, before); len(added) > 0 {
		parts = append(parts, what+" added "+strings.Join(added, ", "))
	}
	if removed := missing(before, after); len(removed) > 0 {
		parts = append(parts, what+" removed "+strings.Join(removed, ", "))
	}
	if len(parts) == 0 { // verbs or resources reordered or repeated: the same grant
		parts = append(parts, "the same grant, written in another order")
	}
	return s + " " + strings.Join(parts, "; ")
}

// missing returns the entries of a that b lacks, in a's order, once each.
func missing(a, b []string) []string {
	in := set(b)
	var out []string
	for _, s := range a {
		if !in[s] {
			out = append(out, s)
			in[s] = true
		}
	}
	return out
}

// ruleString writes a rule as "verbs on resources".
func ruleString(r rbacv1.PolicyRule) string {
	var what []string
	for _, g := range cmpOr(r.APIGroups, []string{""}) {
		for _, res := range r.Resources {
			if g == "" {
				what = append(what, res)
			} else {
				what = append(what, res+"."+g)
			}
		}
	}
	what = append(what, r.NonResourceURLs...)
	s := strings.Join(r.Verbs, ",") + " on " + strings.Join(what, " ")
	if len(r.ResourceNames) > 0 {
		s += " (names " + strings.Join(r.ResourceNames, ",") + ")"
	}
	return s
}
