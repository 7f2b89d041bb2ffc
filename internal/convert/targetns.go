package convert

import (
	"fmt"
	"slices"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// TargetNamespaces defaults and validates the namespaces the operator watches,
// following OLM v1's renderer (validateTargetNamespaces):
//
//   - no watch namespaces: all namespaces ([""]) if the CSV supports
//     AllNamespaces, else the install namespace if it supports OwnNamespace
//     (OLM v1's ClusterExtension config does that second step), else an error
//     asking for watch namespaces;
//   - [""]: needs AllNamespaces; [installNs]: needs OwnNamespace; one other
//     namespace: needs SingleNamespace; several: needs MultiNamespace (plus
//     OwnNamespace if the install namespace is among them).
//
// Unlike OLM v1 (whose ClusterExtension takes a single watchNamespace)
// MultiNamespace is supported. Duplicates are dropped, order is kept.
func TargetNamespaces(csv *v1alpha1.ClusterServiceVersion, installNs string, watch []string) ([]string, error) {
	if csv == nil {
		return nil, fmt.Errorf("no ClusterServiceVersion to read install modes from")
	}
	modes := supportedModes(csv)
	if len(watch) == 0 {
		switch {
		case modes[v1alpha1.InstallModeTypeAllNamespaces]:
			return []string{""}, nil
		case modes[v1alpha1.InstallModeTypeOwnNamespace]:
			return []string{installNs}, nil
		}
		return nil, fmt.Errorf("invalid target namespaces []: exactly one target namespace must be specified: %s supports install modes %v, neither AllNamespaces nor OwnNamespace, so watchNamespaces must name the namespace(s) the operator watches", csvName(csv), modeList(modes))
	}
	targets := uniq(watch)
	if err := checkTargets(modes, installNs, targets); err != nil {
		return nil, fmt.Errorf("invalid target namespaces %v: %w", targets, err)
	}
	return targets, nil
}

// checkTargets is OLM v1's target namespace table (olm-conversion.md §1.1),
// with MultiNamespace allowed.
func checkTargets(modes map[v1alpha1.InstallModeType]bool, installNs string, targets []string) error {
	all := len(targets) == 1 && targets[0] == ""
	if !all {
		for _, ns := range targets {
			if ns == "" {
				return fmt.Errorf(`"" (all namespaces) cannot be combined with other namespaces`)
			}
			if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
				return fmt.Errorf("namespace %q is not a valid namespace name: %s", ns, strings.Join(errs, ", "))
			}
		}
	}
	switch {
	case all:
		if !modes[v1alpha1.InstallModeTypeAllNamespaces] {
			return fmt.Errorf("supported install modes %v do not support targeting all namespaces", modeList(modes))
		}
	case len(targets) == 1 && targets[0] == installNs:
		if !modes[v1alpha1.InstallModeTypeOwnNamespace] {
			return fmt.Errorf("supported install modes %v do not support targeting own namespace", modeList(modes))
		}
	case len(targets) == 1:
		if !modes[v1alpha1.InstallModeTypeSingleNamespace] {
			return fmt.Errorf("supported install modes %v do not support targeting a single namespace other than the install namespace %q", modeList(modes), installNs)
		}
	default:
		if !modes[v1alpha1.InstallModeTypeOwnNamespace] && slices.Contains(targets, installNs) {
			return fmt.Errorf("supported install modes %v do not support targeting own namespace", modeList(modes))
		}
		if !modes[v1alpha1.InstallModeTypeMultiNamespace] {
			return fmt.Errorf("supported install modes %v do not support targeting several namespaces", modeList(modes))
		}
	}
	return nil
}

func supportedModes(csv *v1alpha1.ClusterServiceVersion) map[v1alpha1.InstallModeType]bool {
	m := map[v1alpha1.InstallModeType]bool{}
	for _, im := range csv.Spec.InstallModes {
		if im.Supported {
			m[im.Type] = true
		}
	}
	return m
}

// modeList is the sorted list of supported modes, as OLM prints it.
func modeList(m map[v1alpha1.InstallModeType]bool) []v1alpha1.InstallModeType {
	out := make([]v1alpha1.InstallModeType, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func uniq(in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func csvName(csv *v1alpha1.ClusterServiceVersion) string {
	return fmt.Sprintf("ClusterServiceVersion %q", csv.Name)
}

// allNamespaces reports OLM's AllNamespaces mode: targets == [""].
func allNamespaces(targets []string) bool {
	return len(targets) == 1 && targets[0] == ""
}
