package transform

import (
	"slices"
	"strings"
	"testing"
)

func TestParseSelector(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Selector
	}{
		{"ConsoleYAMLSample", Selector{Kind: "ConsoleYAMLSample", Name: "*", AnyGroup: true}},
		{"*", Selector{Kind: "*", Name: "*", AnyGroup: true}},
		// a '.' in the first of two segments: group/Kind
		{"console.openshift.io/*", Selector{Group: "console.openshift.io", Kind: "*", Name: "*"}},
		{"*.openshift.io/Console*", Selector{Group: "*.openshift.io", Kind: "Console*", Name: "*"}},
		// a built-in group without a '.': group/Kind
		{"apps/Deployment", Selector{Group: "apps", Kind: "Deployment", Name: "*"}},
		{"batch/*", Selector{Group: "batch", Kind: "*", Name: "*"}},
		{"core/ConfigMap", Selector{Group: "", Kind: "ConfigMap", Name: "*"}},
		// otherwise Kind/name
		{"Deployment/my-operator", Selector{Kind: "Deployment", Name: "my-operator", AnyGroup: true}},
		{"*/my-operator", Selector{Kind: "*", Name: "my-operator", AnyGroup: true}},
		{"monitoring/Foo", Selector{Kind: "monitoring", Name: "Foo", AnyGroup: true}},
		// three segments
		{"rbac.authorization.k8s.io/ClusterRole/op-*", Selector{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "op-*"}},
		{"core/Service/op", Selector{Group: "", Kind: "Service", Name: "op"}},
	} {
		got, err := ParseSelector(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseSelector(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "a/b/c/d", "apps//x", "[", "apps/[a-"} {
		if _, err := ParseSelector(bad); err == nil {
			t.Errorf("ParseSelector(%q): no error", bad)
		}
	}
}

const excludeInput = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: op
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
---
apiVersion: v1
kind: Service
metadata:
  name: op-svc
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: op
---
apiVersion: console.openshift.io/v1
kind: ConsoleYAMLSample
metadata:
  name: sample
---
apiVersion: console.openshift.io/v1
kind: ConsoleLink
metadata:
  name: link
---
apiVersion: example.com/v1
kind: ConfigMap
metadata:
  name: not-core
`

// names lists "Kind/name" of the rendered objects.
func names(t *testing.T, out string) []string {
	var got []string
	for _, n := range parse(t, out) {
		got = append(got, n.GetKind()+"/"+n.GetName())
	}
	return got
}

func TestExclude(t *testing.T) {
	all := names(t, excludeInput)
	for _, tc := range []struct {
		name      string
		selectors []string
		dropped   []string
		warnings  []string
	}{
		{"none", nil, nil, nil},
		{"kind", []string{"ConsoleYAMLSample"}, []string{"ConsoleYAMLSample/sample"}, nil},
		{"kind matches every group", []string{"ConfigMap"}, []string{"ConfigMap/cfg", "ConfigMap/not-core"}, nil},
		{"core group only", []string{"core/ConfigMap"}, []string{"ConfigMap/cfg"}, nil},
		{"group glob", []string{"console.openshift.io/*"}, []string{"ConsoleYAMLSample/sample", "ConsoleLink/link"}, nil},
		{"dotless group", []string{"apps/Deployment"}, []string{"Deployment/op"}, nil},
		{"kind/name", []string{"Deployment/op"}, []string{"Deployment/op"}, nil},
		{"any kind by name", []string{"*/op"}, []string{"Deployment/op", "ClusterRole/op"}, nil},
		{"three segments", []string{"core/*/op-*"}, []string{"Service/op-svc"}, nil},
		{"unmatched selectors warn, naming what there is", []string{"Foo", "apps/ConfigMap", "ConfigMap/cfg", "Deployment/opp", "Deploymnet"},
			[]string{"ConfigMap/cfg"},
			[]string{
				`exclude "Foo" matched no object; no Foo is rendered; kinds rendered: ClusterRole, ConfigMap, ConsoleLink, ConsoleYAMLSample, Deployment, Service`,
				`exclude "apps/ConfigMap" matched no object; that kind is in group core, example.com`,
				`exclude "Deployment/opp" matched no object; objects of that kind: op`,
				`exclude "Deploymnet" matched no object; did you mean Deployment?`,
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w warnings
			got := names(t, run(t, Exclude(tc.selectors, w.add), excludeInput))
			want := slices.DeleteFunc(slices.Clone(all), func(s string) bool { return slices.Contains(tc.dropped, s) })
			if !slices.Equal(got, want) {
				t.Errorf("kept %v, want %v", got, want)
			}
			if !slices.Equal(w, tc.warnings) {
				t.Errorf("warnings %q, want %q", w, tc.warnings)
			}
		})
	}
}

func TestExcludeInvalid(t *testing.T) {
	msg := runErr(t, Exclude([]string{"ConfigMap", "a/b/c/d"}, nil), excludeInput)
	if !strings.HasPrefix(msg, `exclude[1]: "a/b/c/d": too many '/'`) {
		t.Errorf("error %q", msg)
	}
}
