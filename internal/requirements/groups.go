package requirements

import "strings"

// KubernetesVersion is the release builtinGroups reflects.
const KubernetesVersion = "1.34"

// builtinGroups are the API groups a Kubernetes 1.34 API server serves with
// its default configuration (`kubectl api-versions` on a kind or kubeadm
// cluster, alpha APIs off): the groups of k8s.io/api plus apiextensions and
// apiregistration. "" is the core group.
var builtinGroups = map[string]bool{
	"":                             true,
	"admissionregistration.k8s.io": true,
	"apiextensions.k8s.io":         true,
	"apiregistration.k8s.io":       true,
	"apps":                         true,
	"authentication.k8s.io":        true,
	"authorization.k8s.io":         true,
	"autoscaling":                  true,
	"batch":                        true,
	"certificates.k8s.io":          true,
	"coordination.k8s.io":          true,
	"discovery.k8s.io":             true,
	"events.k8s.io":                true,
	"flowcontrol.apiserver.k8s.io": true,
	"networking.k8s.io":            true,
	"node.k8s.io":                  true,
	"policy":                       true,
	"rbac.authorization.k8s.io":    true,
	"resource.k8s.io":              true, // dynamic resource allocation, GA (v1) in 1.34
	"scheduling.k8s.io":            true,
	"storage.k8s.io":               true,
}

// legacyRBACGroups are groups Kubernetes no longer serves that old RBAC
// rules still name next to their successors ("extensions" beside "apps"):
// a rule on them grants nothing and harms nothing, so it is no finding.
var legacyRBACGroups = map[string]bool{"extensions": true}

// providers name what serves well-known groups that are not built in.
var providers = map[string]string{
	"cert-manager.io":               "cert-manager",
	"acme.cert-manager.io":          "cert-manager",
	"trust.cert-manager.io":         "trust-manager",
	"monitoring.coreos.com":         "prometheus-operator (its CRDs: ServiceMonitor, PodMonitor, PrometheusRule)",
	"metrics.k8s.io":                "metrics-server",
	"custom.metrics.k8s.io":         "a custom metrics adapter (prometheus-adapter, KEDA)",
	"external.metrics.k8s.io":       "an external metrics adapter (KEDA, prometheus-adapter)",
	"gateway.networking.k8s.io":     "the Gateway API CRDs",
	"snapshot.storage.k8s.io":       "the external-snapshotter CRDs",
	"operators.coreos.com":          "OLM v0",
	"olm.operatorframework.io":      "OLM v1 (operator-controller)",
	"packages.operators.coreos.com": "OLM v0's package server",
	"networking.istio.io":           "Istio",
	"security.istio.io":             "Istio",
	"telemetry.istio.io":            "Istio",
	"extensions.istio.io":           "Istio",
	"sailoperator.io":               "the Sail operator",
	"k8s.cni.cncf.io":               "Multus",
	"kubevirt.io":                   "KubeVirt",
	"cdi.kubevirt.io":               "KubeVirt CDI",
	"keda.sh":                       "KEDA",
	"serving.knative.dev":           "Knative Serving",
	"velero.io":                     "Velero",
	"autoscaling.k8s.io":            "the Vertical Pod Autoscaler",
	"leaderworkerset.x-k8s.io":      "LeaderWorkerSet",
}

// isOpenShift reports whether group is one of OpenShift's own APIs.
func isOpenShift(group string) bool {
	return group == "openshift.io" || strings.HasSuffix(group, ".openshift.io")
}

// groupLabel says whose API group is: OpenShift, a named provider, or "".
func groupLabel(group string) string {
	switch {
	case isOpenShift(group):
		return "OpenShift-only API"
	case providers[group] != "":
		return "provided by " + providers[group]
	}
	return ""
}
