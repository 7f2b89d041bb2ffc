package validate

import (
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// nameRule is the API server's rule for the names of gk's objects: RBAC
// objects are path segments (any text without "/", "%", "." or ".."),
// Namespaces DNS-1123 labels, Services DNS-1035 labels (they become DNS
// names), and every other kind, custom resources included, a DNS-1123
// subdomain.
func nameRule(gk schema.GroupKind) apimachineryvalidation.ValidateNameFunc {
	switch gk.Group {
	case "rbac.authorization.k8s.io":
		switch gk.Kind {
		case "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding":
			return path.ValidatePathSegmentName
		}
	case "":
		switch gk.Kind {
		case "Namespace":
			return apimachineryvalidation.ValidateNamespaceName
		case "Service":
			return apimachineryvalidation.NameIsDNS1035Label
		}
	}
	return apimachineryvalidation.NameIsDNSSubdomain
}
