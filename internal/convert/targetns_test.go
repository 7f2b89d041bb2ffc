package convert

import (
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
)

func csvWithModes(modes ...v1alpha1.InstallModeType) *v1alpha1.ClusterServiceVersion {
	csv := &v1alpha1.ClusterServiceVersion{}
	csv.Name = "op.v1"
	for _, m := range []v1alpha1.InstallModeType{v1alpha1.InstallModeTypeOwnNamespace, v1alpha1.InstallModeTypeSingleNamespace, v1alpha1.InstallModeTypeMultiNamespace, v1alpha1.InstallModeTypeAllNamespaces} {
		csv.Spec.InstallModes = append(csv.Spec.InstallModes, v1alpha1.InstallMode{Type: m, Supported: slices.Contains(modes, m)})
	}
	return csv
}

func TestTargetNamespaces(t *testing.T) {
	const (
		all    = v1alpha1.InstallModeTypeAllNamespaces
		own    = v1alpha1.InstallModeTypeOwnNamespace
		single = v1alpha1.InstallModeTypeSingleNamespace
		multi  = v1alpha1.InstallModeTypeMultiNamespace
	)
	for _, tc := range []struct {
		name  string
		modes []v1alpha1.InstallModeType
		watch []string
		want  []string
		err   string // substring; "" = success
	}{
		{"default all", []v1alpha1.InstallModeType{all, own}, nil, []string{""}, ""},
		{"default own", []v1alpha1.InstallModeType{own, single}, nil, []string{"ns"}, ""},
		{"default single only", []v1alpha1.InstallModeType{single}, nil, nil, "exactly one target namespace must be specified"},
		{"default multi only", []v1alpha1.InstallModeType{multi}, nil, nil, "invalid target namespaces (none given): exactly one target namespace must be specified: ClusterServiceVersion \"op.v1\" supports install modes MultiNamespace, neither"},
		{"all ok", []v1alpha1.InstallModeType{all}, []string{""}, []string{""}, ""},
		{"all unsupported", []v1alpha1.InstallModeType{own}, []string{""}, nil, `invalid target namespaces "" (all namespaces): supported install modes OwnNamespace do not support targeting all namespaces;`},
		{"own ok", []v1alpha1.InstallModeType{own}, []string{"ns"}, []string{"ns"}, ""},
		{"own unsupported", []v1alpha1.InstallModeType{all, single}, []string{"ns"}, nil, "invalid target namespaces ns: supported install modes AllNamespaces and SingleNamespace do not support targeting own namespace;"},
		{"single ok", []v1alpha1.InstallModeType{single}, []string{"other"}, []string{"other"}, ""},
		{"single unsupported", []v1alpha1.InstallModeType{own, all}, []string{"other"}, nil, "invalid target namespaces other: supported install modes AllNamespaces and OwnNamespace do not support targeting a single namespace"},
		{"none supported", nil, []string{"a"}, nil, "invalid target namespaces a: supported install modes (none) do not support"},
		{"multi ok", []v1alpha1.InstallModeType{multi}, []string{"a", "b", "a"}, []string{"a", "b"}, ""},
		{"multi unsupported", []v1alpha1.InstallModeType{single}, []string{"a", "b"}, nil, "invalid target namespaces a, b: supported install modes SingleNamespace do not support targeting several namespaces;"},
		{"multi with own needs own", []v1alpha1.InstallModeType{multi}, []string{"a", "ns"}, nil, "own namespace"},
		{"multi with own", []v1alpha1.InstallModeType{multi, own}, []string{"a", "ns"}, []string{"a", "ns"}, ""},
		{"all mixed", []v1alpha1.InstallModeType{multi, all}, []string{"", "a"}, nil, "cannot be combined"},
		{"bad name", []v1alpha1.InstallModeType{single}, []string{"Not_A_NS"}, nil, "not a valid namespace name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := TargetNamespaces(csvWithModes(tc.modes...), "ns", tc.watch)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("want error containing %q, got %v (targets %q)", tc.err, err, got)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	// The error says which values of watchNamespaces would do.
	for _, tc := range []struct {
		modes []v1alpha1.InstallModeType
		watch []string
		want  string
	}{
		{[]v1alpha1.InstallModeType{all, own}, []string{"a", "b"}, "; this operator supports AllNamespaces and OwnNamespace: leave spec.watchNamespaces empty (all namespaces), or set it to [ns] (the install namespace)"},
		{[]v1alpha1.InstallModeType{own}, []string{""}, "; this operator supports OwnNamespace: leave spec.watchNamespaces empty or set it to [ns] (the install namespace)"},
		{[]v1alpha1.InstallModeType{single, multi}, nil, "; this operator supports SingleNamespace and MultiNamespace: set spec.watchNamespaces to one other namespace, or set it to several namespaces"},
		{nil, []string{"a"}, "; this operator's CSV marks no install mode as supported (spec.installModes): OLM cannot install it either"},
	} {
		_, err := TargetNamespaces(csvWithModes(tc.modes...), "ns", tc.watch)
		if err == nil || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("modes %v, watch %q: want an error ending %q, got %v", tc.modes, tc.watch, tc.want, err)
		}
	}
	if _, err := TargetNamespaces(nil, "ns", nil); err == nil {
		t.Error("nil CSV: want an error")
	}
}
