package convert

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// supportedKinds are the kinds a registry+v1 bundle may ship besides the CSV
// and CRDs (operator-registry pkg/lib/bundle/supported_resources.go), mapped
// to whether they are namespaced. operator-registry lists VerticalPodAutoscaler
// as cluster-scoped, so OLM never sets its namespace; it is namespaced, and we
// treat it so (docs/olm-parity.md).
var supportedKinds = map[string]bool{
	"Secret":                true,
	"ConfigMap":             true,
	"Service":               true,
	"ServiceAccount":        true,
	"Role":                  true,
	"RoleBinding":           true,
	"PrometheusRule":        true,
	"ServiceMonitor":        true,
	"PodMonitor":            true,
	"PodDisruptionBudget":   true,
	"NetworkPolicy":         true,
	"ClusterRole":           false,
	"ClusterRoleBinding":    false,
	"PriorityClass":         false,
	"ConsoleYAMLSample":     false,
	"ConsoleQuickStart":     false,
	"ConsoleCLIDownload":    false,
	"ConsoleLink":           false,
	"ConsolePlugin":         false,
	"VerticalPodAutoscaler": true,
}

// clusterScopedKinds are the cluster-scoped kinds Convert can emit.
var clusterScopedKinds = map[string]bool{
	"CustomResourceDefinition":       true,
	"ClusterRole":                    true,
	"ClusterRoleBinding":             true,
	"ValidatingWebhookConfiguration": true,
	"MutatingWebhookConfiguration":   true,
	"PriorityClass":                  true,
	"ConsoleYAMLSample":              true,
	"ConsoleQuickStart":              true,
	"ConsoleCLIDownload":             true,
	"ConsoleLink":                    true,
	"ConsolePlugin":                  true,
	"Namespace":                      true,
}

// KindNamespaced reports whether objects of kind, as Convert emits them, live
// in a namespace. Every kind Convert emits is covered; unknown kinds are
// reported namespaced.
func KindNamespaced(kind string) bool { return !clusterScopedKinds[kind] }

// toRNode turns a typed object (k8s API struct or map) into a YAML node: JSON
// first, so field names, omitempty and key order (sorted) are those of the
// API's JSON encoding, exactly as OLM v1 writes its objects.
func toRNode(obj any) (*yaml.RNode, error) {
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", obj, err)
	}
	y, err := sigsyaml.JSONToYAML(j)
	if err != nil {
		return nil, fmt.Errorf("encode %T as YAML: %w", obj, err)
	}
	return yaml.Parse(string(y))
}

// toRNodes converts each object, stopping at the first error.
func toRNodes[T any](objs []T) ([]*yaml.RNode, error) {
	out := make([]*yaml.RNode, 0, len(objs))
	for i := range objs {
		n, err := toRNode(&objs[i])
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// setAnnotations adds annotations to a node's metadata, keeping existing order.
func setAnnotations(n *yaml.RNode, kv map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		if err := n.PipeE(yaml.SetAnnotation(k, kv[k])); err != nil {
			return fmt.Errorf("annotate %s %q: %w", n.GetKind(), n.GetName(), err)
		}
	}
	return nil
}
