package transform

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// namespaceFilter prepends the install Namespace.
type namespaceFilter struct{ name string }

// Namespace prepends a Namespace object named name unless the objects already
// hold one (a bundle or the user may ship it with labels of their own).
func Namespace(name string) kio.Filter { return namespaceFilter{name} }

func (f namespaceFilter) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	if f.name == "" {
		return nil, errors.New("namespace: no name")
	}
	for _, n := range nodes {
		if gkOf(n) == (groupKind{groupCore, "Namespace"}) && n.GetName() == f.name {
			return nodes, nil
		}
	}
	ns, err := newObject("v1", "Namespace", "", f.name)
	if err != nil {
		return nil, err
	}
	return append([]*yaml.RNode{ns}, nodes...), nil
}

// namespaceMetadataFilter sets labels and annotations on the install
// Namespace.
type namespaceMetadataFilter struct {
	name                string
	labels, annotations map[string]string
	warn, unmatched     func(string)
}

// NamespaceMetadata sets labels and annotations (spec.namespaceLabels,
// spec.namespaceAnnotations) on the Namespace named name, whoever renders it
// (olm-cmp, the bundle or an extra manifest): a value it had is replaced,
// with a warning. Without that Namespace in the render (createNamespace:
// false), it reports through unmatched: the namespace is created elsewhere,
// and must get them there.
func NamespaceMetadata(name string, labels, annotations map[string]string, warn, unmatched func(string)) kio.Filter {
	return namespaceMetadataFilter{name, labels, annotations, warn, unmatched}
}

func (f namespaceMetadataFilter) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	if len(f.labels) == 0 && len(f.annotations) == 0 {
		return nodes, nil
	}
	for _, n := range nodes {
		if gkOf(n) != (groupKind{groupCore, "Namespace"}) || n.GetName() != f.name {
			continue
		}
		for _, m := range []struct {
			field string
			have  map[string]string
			set   map[string]string
			pipe  func(k, v string) yaml.Filter
		}{
			{"namespaceLabels", n.GetLabels(), f.labels, func(k, v string) yaml.Filter { return yaml.SetLabel(k, v) }},
			{"namespaceAnnotations", n.GetAnnotations(), f.annotations, func(k, v string) yaml.Filter { return yaml.SetAnnotation(k, v) }},
		} {
			for _, k := range slices.Sorted(maps.Keys(m.set)) {
				v := m.set[k]
				if old, ok := m.have[k]; ok && old != v && f.warn != nil {
					f.warn(fmt.Sprintf("spec.%s: %s=%s replaces %s=%s on the Namespace %s the render holds (from the bundle or an extra manifest)",
						m.field, echo.Short(k), echo.Quote(v), echo.Short(k), echo.Quote(old), f.name))
				}
				if err := n.PipeE(m.pipe(k, v)); err != nil {
					return nil, fmt.Errorf("spec.%s: %w", m.field, err)
				}
			}
		}
		return nodes, nil
	}
	if f.unmatched != nil {
		f.unmatched(fmt.Sprintf("spec.namespaceLabels and spec.namespaceAnnotations apply to no object: the render has no Namespace %s (createNamespace: false); set them where the namespace is created (kubectl label namespace %s KEY=VALUE), or let the render create it (remove createNamespace: false)",
			f.name, f.name))
	}
	return nodes, nil
}

// isServiceAccount reports whether n is a core ServiceAccount.
func isServiceAccount(n *yaml.RNode) bool {
	return gkOf(n) == groupKind{groupCore, "ServiceAccount"}
}

// serviceAccountsFilter adds extra ServiceAccounts.
type serviceAccountsFilter struct {
	namespace          string
	names, pullSecrets []string
}

// ServiceAccounts appends a ServiceAccount in namespace for each of names that
// is not rendered already (an object with no namespace counts as being in
// namespace), with pullSecrets as its imagePullSecrets. These are the operand
// ServiceAccounts an operator creates later: created first, they carry the pull
// secrets. Names are de-duplicated and sorted.
func ServiceAccounts(namespace string, names, pullSecrets []string) kio.Filter {
	return serviceAccountsFilter{namespace, sortedNames(names), sortedNames(pullSecrets)}
}

func (f serviceAccountsFilter) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	if len(f.names) == 0 {
		return nodes, nil
	}
	have := map[string]bool{}
	for _, n := range nodes {
		if isServiceAccount(n) && (n.GetNamespace() == f.namespace || n.GetNamespace() == "") {
			have[n.GetName()] = true
		}
	}
	for _, name := range f.names {
		if have[name] {
			continue
		}
		sa, err := newObject("v1", "ServiceAccount", f.namespace, name)
		if err != nil {
			return nil, err
		}
		if err := addPullSecrets(sa, f.pullSecrets); err != nil {
			return nil, err
		}
		nodes = append(nodes, sa)
	}
	return nodes, nil
}

// imagePullSecretsFilter adds pull secrets to ServiceAccounts.
type imagePullSecretsFilter struct{ names []string }

// ImagePullSecrets adds {name: <secret>} to the imagePullSecrets of every
// ServiceAccount for each of names it does not list yet, keeping the entries it
// has. Only Secret names are handled, never their content. Names are
// de-duplicated and added in sorted order.
func ImagePullSecrets(names []string) kio.Filter {
	return imagePullSecretsFilter{sortedNames(names)}
}

func (f imagePullSecretsFilter) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	if len(f.names) == 0 {
		return nodes, nil
	}
	for _, n := range nodes {
		if !isServiceAccount(n) {
			continue
		}
		if err := addPullSecrets(n, f.names); err != nil {
			return nil, fmt.Errorf("imagePullSecrets: %s: %w", describe(n), err)
		}
	}
	return nodes, nil
}

// addPullSecrets appends the names sa does not reference yet.
func addPullSecrets(sa *yaml.RNode, names []string) error {
	if len(names) == 0 {
		return nil
	}
	if f := sa.Field("imagePullSecrets"); f != nil && yaml.IsMissingOrNull(f.Value) {
		if err := sa.PipeE(yaml.Clear("imagePullSecrets")); err != nil {
			return err
		}
	}
	seq, err := sa.Pipe(yaml.LookupCreate(yaml.SequenceNode, "imagePullSecrets"))
	if err != nil {
		return err
	}
	if seq.YNode().Kind != yaml.SequenceNode {
		return errors.New("imagePullSecrets is not a list")
	}
	have := map[string]bool{}
	for _, e := range seq.Content() {
		if v, _ := yaml.NewRNode(e).GetString("name"); v != "" {
			have[v] = true
		}
	}
	// A flow-style empty list ([]) would print the new entries in flow style.
	if len(seq.Content()) == 0 {
		seq.YNode().Style = 0
	}
	for _, name := range names {
		if have[name] {
			continue
		}
		e := yaml.NewRNode(&yaml.Node{Kind: yaml.MappingNode})
		if err := e.PipeE(yaml.SetField("name", yaml.NewStringRNode(name))); err != nil {
			return err
		}
		seq.YNode().Content = append(seq.YNode().Content, e.YNode())
	}
	return nil
}

// The Role every extension API server needs to read its client CA.
const (
	authReaderRole      = "extension-apiserver-authentication-reader"
	authReaderNamespace = "kube-system"
	authReaderSuffix    = "-auth-reader"
)

// authReaderFilter adds the kube-system auth-reader RoleBinding.
type authReaderFilter struct{ namespace, name string }

// AuthReaderBinding adds a RoleBinding <name>-auth-reader in kube-system to the
// Role extension-apiserver-authentication-reader, with the ServiceAccount of
// every Deployment in namespace as subjects (sorted, de-duplicated; a pod
// template without serviceAccountName runs as "default"). OLM v0 creates it for
// operators that serve an APIService. The name is lower-cased, characters
// other than [a-z0-9] become '-', and it is cut to 253 characters
// keeping the suffix. Nothing is added when no Deployment is found or a
// RoleBinding of that name already exists in kube-system.
func AuthReaderBinding(namespace, name string) kio.Filter {
	return authReaderFilter{namespace, name}
}

func (f authReaderFilter) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	if f.namespace == "" || f.name == "" {
		return nil, errors.New("authReaderBinding: namespace and name are required")
	}
	name := authReaderBindingName(f.name)
	var sas []string
	for _, n := range nodes {
		if gkOf(n) == (groupKind{groupRBAC, "RoleBinding"}) && n.GetNamespace() == authReaderNamespace && n.GetName() == name {
			return nodes, nil
		}
		if gkOf(n) != (groupKind{groupApps, "Deployment"}) || (n.GetNamespace() != f.namespace && n.GetNamespace() != "") {
			continue
		}
		sa, _ := n.GetString("spec.template.spec.serviceAccountName")
		if sa == "" {
			sa, _ = n.GetString("spec.template.spec.serviceAccount")
		}
		if sa == "" {
			sa = "default"
		}
		sas = append(sas, sa)
	}
	sas = sortedNames(sas)
	if len(sas) == 0 {
		return nodes, nil
	}
	rb, err := newObject(groupRBAC+"/v1", "RoleBinding", authReaderNamespace, name)
	if err != nil {
		return nil, err
	}
	ref := yaml.NewRNode(&yaml.Node{Kind: yaml.MappingNode})
	if err := ref.PipeE(yaml.SetField("apiGroup", yaml.NewStringRNode(groupRBAC))); err != nil {
		return nil, err
	}
	if err := ref.PipeE(yaml.SetField("kind", yaml.NewStringRNode("Role"))); err != nil {
		return nil, err
	}
	if err := ref.PipeE(yaml.SetField("name", yaml.NewStringRNode(authReaderRole))); err != nil {
		return nil, err
	}
	if err := rb.PipeE(yaml.SetField("roleRef", ref)); err != nil {
		return nil, err
	}
	subjects := yaml.NewRNode(&yaml.Node{Kind: yaml.SequenceNode})
	for _, sa := range sas {
		s := yaml.NewRNode(&yaml.Node{Kind: yaml.MappingNode})
		for _, kv := range [][2]string{{"kind", "ServiceAccount"}, {"name", sa}, {"namespace", f.namespace}} {
			if err := s.PipeE(yaml.SetField(kv[0], yaml.NewStringRNode(kv[1]))); err != nil {
				return nil, err
			}
		}
		subjects.YNode().Content = append(subjects.YNode().Content, s.YNode())
	}
	if err := rb.PipeE(yaml.SetField("subjects", subjects)); err != nil {
		return nil, err
	}
	return append(nodes, rb), nil
}

// authReaderBindingName makes base + "-auth-reader" a valid DNS-1123
// subdomain (see dnsSubdomainName).
func authReaderBindingName(base string) string { return dnsSubdomainName(base, authReaderSuffix) }

// dnsSubdomainName makes base + suffix a valid DNS-1123 subdomain for an
// object olm-cmp names after the spec's metadata.name (which may be
// "GitLab Operator"): lower case, every other character '-', at most 253
// characters, suffix kept whole.
func dnsSubdomainName(base, suffix string) string {
	b := []byte(strings.ToLower(base))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			b[i] = '-'
		}
	}
	s := string(b)
	if max := 253 - len(suffix); len(s) > max {
		s = s[:max]
	}
	s = strings.Trim(s, "-")
	if s == "" {
		s = "operator"
	}
	return s + suffix
}
