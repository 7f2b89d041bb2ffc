package render

import (
	"fmt"
	"slices"
	"strings"
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
