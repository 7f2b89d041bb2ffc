package transform

import (
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// bundleSubjectsFilter moves the bundle's own ServiceAccount subjects into the
// install namespace.
type bundleSubjectsFilter struct {
	namespace, suggested string
	warn                 func(string)
}

// BundleSubjects rewrites, in every RoleBinding and ClusterRoleBinding, a
// ServiceAccount subject in the CSV's suggested namespace
// (operatorframework.io/suggested-namespace) to the install namespace, when
// the render installs a ServiceAccount of that name there (a ServiceAccount
// object or a Deployment's serviceAccountName) and the suggested namespace is
// not the install namespace. Bundles ship bindings of their own
// ServiceAccounts with the suggested namespace written in (universal-crossplane
// binds upbound-system/crossplane to its ClusterRole): the conversion moves
// the ServiceAccount and the namespaced objects into the install namespace but
// leaves the subject, so installed anywhere else the operator runs without
// those permissions (crossplane's `core init` is refused the CRDs it
// installs). OLM does the same, which is why each rewrite is a warning naming
// the binding. Subjects of other namespaces are left alone.
func BundleSubjects(namespace, suggested string, warn func(string)) kio.Filter {
	return bundleSubjectsFilter{namespace, suggested, warn}
}

func (f bundleSubjectsFilter) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	if f.suggested == "" || f.namespace == "" || f.suggested == f.namespace {
		return nodes, nil
	}
	own := map[string]bool{} // ServiceAccounts the render installs in namespace
	for _, n := range nodes {
		if n.GetNamespace() != f.namespace && n.GetNamespace() != "" {
			continue
		}
		switch {
		case isServiceAccount(n):
			own[n.GetName()] = true
		case gkOf(n) == (groupKind{groupApps, "Deployment"}):
			sa, _ := n.GetString("spec.template.spec.serviceAccountName")
			if sa == "" {
				sa = "default"
			}
			own[sa] = true
		}
	}
	for _, n := range nodes {
		if gk := gkOf(n); gk != (groupKind{groupRBAC, "RoleBinding"}) && gk != (groupKind{groupRBAC, "ClusterRoleBinding"}) {
			continue
		}
		subjects, err := n.Pipe(yaml.Lookup("subjects"))
		if err != nil || subjects == nil || subjects.YNode().Kind != yaml.SequenceNode {
			continue
		}
		for _, s := range subjects.Content() {
			sub := yaml.NewRNode(s)
			kind, _ := sub.GetString("kind")
			name, _ := sub.GetString("name")
			ns, _ := sub.GetString("namespace")
			if kind != "ServiceAccount" || ns != f.suggested || !own[name] {
				continue
			}
			if err := sub.PipeE(yaml.SetField("namespace", yaml.NewStringRNode(f.namespace))); err != nil {
				return nil, err
			}
			warnf(f.warn, "%s: subject ServiceAccount %s/%s is the bundle's own ServiceAccount, which this render installs in %s: bound there instead (the bundle writes its suggested namespace into the binding)",
				describe(n), f.suggested, name, f.namespace)
		}
	}
	return nodes, nil
}
