package diff

import (
	"strconv"
	"strings"
	"testing"
)

func TestSummarizeRules(t *testing.T) {
	roleOf := func(rules string) string {
		return "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\nrules:\n" + rules
	}
	cases := []struct {
		name     string
		from, to string
		want     []string
	}{
		{
			name: "resources added to a rule pair with it",
			from: "- {apiGroups: [cert-manager.io], resources: [issuers, clusterissuers], verbs: [get, list, watch]}\n",
			to:   "- {apiGroups: [cert-manager.io], resources: [issuers, issuers/finalizers, clusterissuers, clusterissuers/finalizers], verbs: [get, list, watch]}\n",
			want: []string{"rule get,list,watch on cert-manager.io: resources added issuers/finalizers, clusterissuers/finalizers"},
		},
		{
			name: "resources added and removed, core group",
			from: "- {apiGroups: [''], resources: [pods, secrets], verbs: [get]}\n",
			to:   "- {apiGroups: [''], resources: [pods, configmaps], verbs: [get]}\n",
			want: []string{"rule get on the core group: resources added configmaps; resources removed secrets"},
		},
		{
			name: "of two rules with the same verbs, the closer one pairs",
			from: "- {apiGroups: [a.io], resources: [x], verbs: [get]}\n- {apiGroups: [a.io], resources: [ys, zs], verbs: [get]}\n",
			to:   "- {apiGroups: [a.io], resources: [x], verbs: [get]}\n- {apiGroups: [a.io], resources: [ys, zs, ws], verbs: [get]}\n",
			want: []string{"rule get on a.io: resources added ws"},
		},
		{
			name: "a new rule stays added",
			from: "- {apiGroups: [a.io], resources: [x], verbs: [get]}\n",
			to:   "- {apiGroups: [a.io], resources: [x], verbs: [get]}\n- {apiGroups: [b.io], resources: [ys], verbs: [get]}\n",
			want: []string{"rule added: get on ys.b.io"},
		},
		{
			name: "changed verbs are a rule added and a rule removed",
			from: "- {apiGroups: [a.io], resources: [x], verbs: [get]}\n",
			to:   "- {apiGroups: [a.io], resources: [x], verbs: [get, delete]}\n",
			want: []string{"rule added: get,delete on x.a.io", "rule removed: get on x.a.io"},
		},
		{
			name: "same verbs and groups but no resource in common do not pair",
			from: "- {apiGroups: [a.io], resources: [x], verbs: [get]}\n",
			to:   "- {apiGroups: [a.io], resources: [ys], verbs: [get]}\n",
			want: []string{"rule added: get on ys.a.io", "rule removed: get on x.a.io"},
		},
		{
			name: "non-resource URLs pair as URLs",
			from: "- {nonResourceURLs: [/metrics], verbs: [get]}\n",
			to:   "- {nonResourceURLs: [/metrics, /healthz], verbs: [get]}\n",
			want: []string{"rule get on non-resource URLs: URLs added /healthz"},
		},
		{
			name: "reordered verbs say so",
			from: "- {apiGroups: [a.io], resources: [x], verbs: [get, list]}\n",
			to:   "- {apiGroups: [a.io], resources: [x], verbs: [list, get]}\n",
			want: []string{"rule list,get on a.io: the same grant, written in another order"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := summarizeRules(roleOf(tc.from), roleOf(tc.to))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("summary:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestRulePairingBound: beyond maxRulePairs, rules are not weighed against
// each other (a quadratic search): each is "rule added" or "rule removed".
func TestRulePairingBound(t *testing.T) {
	rules := func(verb string, n int) string {
		var b strings.Builder
		b.WriteString("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\nrules:\n")
		for i := range n {
			b.WriteString("- {apiGroups: [g], resources: [r" + strconv.Itoa(i) + ", shared], verbs: [" + verb + "]}\n")
		}
		return b.String()
	}
	for _, tc := range []struct {
		n      int
		paired bool
	}{{10, true}, {400, false}} {
		got, err := summarizeRules(rules("get", tc.n), strings.ReplaceAll(rules("get", tc.n), "shared]", "other]"))
		if err != nil {
			t.Fatal(err)
		}
		added := 0
		for _, s := range got {
			if strings.HasPrefix(s, "rule added: ") {
				added++
			}
		}
		if tc.paired && (len(got) != tc.n || added != 0) || !tc.paired && (len(got) != 2*tc.n || added != tc.n) {
			t.Errorf("%d rules: %d lines, %d added (paired: %t)", tc.n, len(got), added, tc.paired)
		}
	}
}
