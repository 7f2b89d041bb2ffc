package convert

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// namespacesReadRule is the rule OLM appends when it lifts namespaced
// permissions to a ClusterRole in AllNamespaces mode: an operator written for
// one namespace may need to discover namespaces once it watches all of them.
var namespacesReadRule = rbacv1.PolicyRule{
	Verbs:     []string{"get", "list", "watch"},
	APIGroups: []string{corev1.GroupName},
	Resources: []string{"namespaces"},
}

// GenerateServiceAccounts reproduces OLM v1's BundleCSVServiceAccountGenerator:
// one ServiceAccount in the install namespace per distinct serviceAccountName
// of permissions and clusterPermissions. An empty name means the namespace's
// "default" account, which already exists and is not generated. Deployments'
// serviceAccountName is not consulted (neither OLM v0 nor v1 does).
func GenerateServiceAccounts(b *bundle.Bundle, o Options) ([]*yaml.RNode, error) {
	s := csvSpec(b).InstallStrategy.StrategySpec
	var names []string
	for _, p := range slices.Concat(s.Permissions, s.ClusterPermissions) {
		if n := saName(p); n != "default" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	sas := make([]corev1.ServiceAccount, 0, len(names))
	for _, n := range names {
		sas = append(sas, corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: o.InstallNamespace},
		})
	}
	return toRNodes(sas)
}

// GeneratePermissions reproduces OLM v1's BundleCSVPermissionsGenerator: for
// every target namespace and permissions[i], a Role and a RoleBinding (to the
// ServiceAccount in the install namespace) named
// hash("<csv>-<sa>", permissions[i]). Nothing in AllNamespaces mode, where
// GenerateClusterPermissions lifts them.
//
// Deviation (OLM v0 parity): when the targets do not include the install
// namespace (SingleNamespace/MultiNamespace), the same Role and RoleBinding are
// also created there, as OLM v0 does, so leader election and the operator's own
// ConfigMaps/Secrets keep working.
func GeneratePermissions(b *bundle.Bundle, o Options) ([]*yaml.RNode, error) {
	if allNamespaces(o.TargetNamespaces) {
		return nil, nil
	}
	namespaces := slices.Clone(o.TargetNamespaces)
	if !slices.Contains(namespaces, o.InstallNamespace) {
		namespaces = append(namespaces, o.InstallNamespace)
	}
	var objs []any
	for _, ns := range namespaces {
		for i, p := range csvSpec(b).InstallStrategy.StrategySpec.Permissions {
			name, err := permissionName(b, p)
			if err != nil {
				return nil, fmt.Errorf("spec.install.spec.permissions[%d]: %w", i, err)
			}
			objs = append(objs,
				&rbacv1.Role{
					TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
					ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
					Rules:      p.Rules,
				},
				&rbacv1.RoleBinding{
					TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
					ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
					Subjects:   []rbacv1.Subject{saSubject(p, o)},
					RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
				})
		}
	}
	return toRNodes(objs)
}

// GenerateClusterPermissions reproduces OLM v1's
// BundleCSVClusterPermissionsGenerator: a ClusterRole and ClusterRoleBinding
// per clusterPermissions[i], named hash("<csv>-<sa>", clusterPermissions[i]).
// In AllNamespaces mode permissions[i] are lifted too, with get/list/watch on
// namespaces appended before hashing (OLM v0's ensureSingletonRBAC rule).
func GenerateClusterPermissions(b *bundle.Bundle, o Options) ([]*yaml.RNode, error) {
	s := csvSpec(b).InstallStrategy.StrategySpec
	perms := slices.Clone(s.ClusterPermissions)
	if allNamespaces(o.TargetNamespaces) {
		for _, p := range s.Permissions {
			p.Rules = append(slices.Clone(p.Rules), namespacesReadRule)
			perms = append(perms, p)
		}
	}
	var objs []any
	for i, p := range perms {
		name, err := permissionName(b, p)
		if err != nil {
			return nil, fmt.Errorf("spec.install.spec.clusterPermissions[%d]: %w", i, err)
		}
		objs = append(objs,
			&rbacv1.ClusterRole{
				TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Rules:      p.Rules,
			},
			&rbacv1.ClusterRoleBinding{
				TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Subjects:   []rbacv1.Subject{saSubject(p, o)},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			})
	}
	return toRNodes(objs)
}

// permissionName is OLM v1's hashed RBAC name: base "<csv>-<sa>", suffix the
// hash of the whole permission entry (serviceAccountName + rules).
func permissionName(b *bundle.Bundle, p v1alpha1.StrategyDeploymentPermissions) (string, error) {
	return hashedName(fmt.Sprintf("%s-%s", csvMetaName(b), saName(p)), p)
}

func saName(p v1alpha1.StrategyDeploymentPermissions) string {
	return cmp.Or(p.ServiceAccountName, "default")
}

func saSubject(p v1alpha1.StrategyDeploymentPermissions, o Options) rbacv1.Subject {
	return rbacv1.Subject{Kind: "ServiceAccount", Namespace: o.InstallNamespace, Name: saName(p)}
}

// csvMetaName is the CSV's metadata.name.
func csvMetaName(b *bundle.Bundle) string { return b.CSV.Name }
