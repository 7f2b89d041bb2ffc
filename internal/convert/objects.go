package convert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/kustomize/kyaml/yaml"
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
	v, err := jsonValue(j)
	if err != nil {
		return nil, fmt.Errorf("encode %T as YAML: %w", obj, err)
	}
	y, err := yamlv2.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %T as YAML: %w", obj, err)
	}
	return yaml.Parse(string(y))
}

// jsonValue decodes j into the value sigs.k8s.io/yaml's JSONToYAML decodes
// it into, so that marshalling it prints what JSONToYAML prints. JSONToYAML
// reads the JSON with the YAML v2 parser (to keep integers integers), which
// was 60% of its cost; encoding/json decodes the same document, and each
// number is typed as YAML v2 resolves a plain scalar (yamlNumber).
func jsonValue(j []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return asYAMLv2(v), nil
}

// asYAMLv2 turns encoding/json's generic values into YAML v2's: mappings
// keyed by interface{}, numbers by yamlNumber.
func asYAMLv2(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[any]any, len(v))
		for k, x := range v {
			m[k] = asYAMLv2(x)
		}
		return m
	case []any:
		for i, x := range v {
			v[i] = asYAMLv2(x)
		}
		return v
	case json.Number:
		return yamlNumber(string(v))
	}
	return v
}

// yamlNumber types a JSON number as YAML v2's resolve types a plain scalar:
// an int when it fits, then int64, uint64, a float, else the text itself
// (1e400). v2 also requires a float to match its float pattern, which every
// JSON number does.
func yamlNumber(s string) any {
	if i, err := strconv.ParseInt(s, 0, 64); err == nil {
		if i == int64(int(i)) {
			return int(i)
		}
		return i
	}
	if u, err := strconv.ParseUint(s, 0, 64); err == nil {
		return u
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	return s
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
