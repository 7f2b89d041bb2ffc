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
		return nil, fmt.Errorf("invalid target namespaces (none given): exactly one target namespace must be specified: %s supports install modes %s, neither AllNamespaces nor OwnNamespace, so watchNamespaces must name the namespace(s) the operator watches; %s", csvName(csv), modeWords(modes), watchChoices(modes, installNs))
	}
	targets := uniq(watch)
	if err := checkTargets(modes, installNs, targets); err != nil {
		return nil, fmt.Errorf("invalid target namespaces %s: %w; %s", namespaceWords(targets), err, watchChoices(modes, installNs))
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
			return fmt.Errorf("supported install modes %s do not support targeting all namespaces", modeWords(modes))
		}
	case len(targets) == 1 && targets[0] == installNs:
		if !modes[v1alpha1.InstallModeTypeOwnNamespace] {
			return fmt.Errorf("supported install modes %s do not support targeting own namespace", modeWords(modes))
		}
	case len(targets) == 1:
		if !modes[v1alpha1.InstallModeTypeSingleNamespace] {
			return fmt.Errorf("supported install modes %s do not support targeting a single namespace other than the install namespace %q", modeWords(modes), installNs)
		}
	default:
		if !modes[v1alpha1.InstallModeTypeOwnNamespace] && slices.Contains(targets, installNs) {
			return fmt.Errorf("supported install modes %s do not support targeting own namespace", modeWords(modes))
		}
		if !modes[v1alpha1.InstallModeTypeMultiNamespace] {
			return fmt.Errorf("supported install modes %s do not support targeting several namespaces", modeWords(modes))
		}
	}
	return nil
}

// watchChoices says which values of spec.watchNamespaces the CSV's install
// modes accept, so an install-mode error says what to write instead (OLM's
// own message only lists the modes).
func watchChoices(modes map[v1alpha1.InstallModeType]bool, installNs string) string {
	var names, choices []string
	for _, m := range []struct {
		mode   v1alpha1.InstallModeType
		choice string
	}{
		{v1alpha1.InstallModeTypeAllNamespaces, "leave spec.watchNamespaces empty (all namespaces)"},
		{v1alpha1.InstallModeTypeOwnNamespace, fmt.Sprintf("set it to [%s] (the install namespace)", installNs)},
		{v1alpha1.InstallModeTypeSingleNamespace, "set it to one other namespace"},
		{v1alpha1.InstallModeTypeMultiNamespace, "set it to several namespaces"},
	} {
		if modes[m.mode] {
			names = append(names, string(m.mode))
			choices = append(choices, m.choice)
		}
	}
	if len(names) == 0 {
		return "this operator's CSV marks no install mode as supported (spec.installModes): OLM cannot install it either"
	}
	if !modes[v1alpha1.InstallModeTypeAllNamespaces] && modes[v1alpha1.InstallModeTypeOwnNamespace] {
		// Empty means the install namespace when AllNamespaces is not supported.
		choices[0] = fmt.Sprintf("leave spec.watchNamespaces empty or set it to [%s] (the install namespace)", installNs)
	}
	// The first choice names the field; the others say "it".
	if rest, ok := strings.CutPrefix(choices[0], "set it to "); ok {
		choices[0] = "set spec.watchNamespaces to " + rest
	}
	return fmt.Sprintf("this operator supports %s: %s", andList(names), orList(choices))
}

func andList(s []string) string { return joinLast(s, " and ") }
func orList(s []string) string  { return joinLast(s, ", or ") }

// joinLast joins with commas and last before the final item.
func joinLast(s []string, last string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + last + s[len(s)-1]
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

// modeWords writes the supported modes for a reader: "OwnNamespace and
// SingleNamespace", or "(none)".
func modeWords(m map[v1alpha1.InstallModeType]bool) string {
	names := make([]string, 0, len(m))
	for _, mode := range modeList(m) {
		names = append(names, string(mode))
	}
	if len(names) == 0 {
		return "(none)"
	}
	return andList(names)
}

// namespaceWords writes target namespaces for a reader: "a, b", with the
// empty name (all namespaces) spelt out.
func namespaceWords(targets []string) string {
	words := make([]string, len(targets))
	for i, ns := range targets {
		words[i] = ns
		if ns == "" {
			words[i] = `"" (all namespaces)`
		}
	}
	return strings.Join(words, ", ")
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
