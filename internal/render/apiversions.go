package render

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// EveryClusterServes are the group/versions every supported Kubernetes
// cluster serves. A list of what the cluster serves (KUBE_API_VERSIONS,
// --api-versions) that lacks one is a hand-written, partial list: taken as
// is, it would drop every ClusterRole, CRD or webhook of the bundle with
// only warnings.
var EveryClusterServes = []string{
	"v1",
	"apps/v1",
	"rbac.authorization.k8s.io/v1",
	"apiextensions.k8s.io/v1",
	"admissionregistration.k8s.io/v1",
}

// CheckAPIVersions refuses a partial API list; source names where it came
// from, for the message (every transport's list reaches Resolve, which
// checks it; the CLI checks its flag first, to name it). Argo CD's KUBE_API_VERSIONS also lists
// group/version/kind entries ("apps/v1/Deployment"), which count for
// their group/version.
func CheckAPIVersions(source string, list []string) error {
	if list == nil {
		return nil // the cluster is unknown: nothing is dropped
	}
	var missing []string
	for _, gv := range EveryClusterServes {
		if !slices.ContainsFunc(list, func(e string) bool { return e == gv || strings.HasPrefix(e, gv+"/") }) {
			missing = append(missing, gv)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%s: the list looks partial: it lacks %s, which every cluster serves; give the cluster's whole list, as `kubectl api-versions` prints it (comma-separated: kubectl api-versions | paste -sd, -)",
		source, strings.Join(missing, ", "))
}

// IsAPIListEntry reports whether e reads as an entry of Argo CD's
// KUBE_API_VERSIONS (the CLI's --api-versions checks each entry with it: a
// typo would silently drop every object of that API): a version of the core API (v1), a group/version, or
// either followed by /Kind (v1/Pod, apps/v1/Deployment), which Argo CD lists
// for every kind the cluster serves. Versions are DNS labels (v1, v1beta1),
// and the core API's only version is v1, so "apps/Deployment" is a kind
// without its version, not a group/version.
func IsAPIListEntry(e string) bool {
	parts := strings.Split(e, "/")
	switch len(parts) {
	case 1:
		return isAPIVersion(parts[0])
	case 2:
		// The core API's only version is v1: "v1/Pod" names a kind.
		return isAPIGroup(parts[0]) && isAPIVersion(parts[1]) || parts[0] == "v1" && isKindName(parts[1])
	case 3:
		return isAPIGroup(parts[0]) && isAPIVersion(parts[1]) && isKindName(parts[2])
	}
	return false
}

func isAPIVersion(s string) bool { return len(validation.IsDNS1035Label(s)) == 0 }
func isAPIGroup(s string) bool   { return len(validation.IsDNS1123Subdomain(s)) == 0 }

// isKindName: kinds are CamelCase identifiers (Deployment, CustomResourceDefinition).
func isKindName(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
}
