package transform

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// argoKindOrder is Argo CD's apply order of kinds within a wave
// (gitops-engine pkg/sync/sync_tasks.go); every other kind comes after them.
var argoKindOrder = func() map[string]int {
	kinds := []string{
		"Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy",
		"PodDisruptionBudget", "ServiceAccount", "Secret", "ConfigMap", "StorageClass",
		"PersistentVolume", "PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole",
		"ClusterRoleBinding", "Role", "RoleBinding", "Service", "DaemonSet", "Pod",
		"ReplicationController", "ReplicaSet", "Deployment", "HorizontalPodAutoscaler",
		"StatefulSet", "Job", "CronJob", "IngressClass", "Ingress", "APIService",
	}
	m := make(map[string]int, len(kinds))
	for i, k := range kinds {
		m[k] = i
	}
	return m
}()

// kindRank is k's place in argoKindOrder; unknown kinds rank last.
func kindRank(k string) int {
	if r, ok := argoKindOrder[k]; ok {
		return r
	}
	return len(argoKindOrder)
}

// Wave returns n's sync wave as Argo CD reads it: the annotation as an
// integer, 0 when missing or not an integer.
func Wave(n *yaml.RNode) int {
	w, err := strconv.Atoi(n.GetAnnotations(SyncWaveAnnotation)[SyncWaveAnnotation])
	if err != nil {
		return 0
	}
	return w
}

// sortFilter orders objects.
type sortFilter struct{}

// Sort orders objects as Argo CD applies them, so the output reads in apply
// order and is the same whatever the input order: by wave, then Argo CD's kind
// order (unknown kinds last, by kind name), then namespace, name, group and
// version. Objects equal in all of these are ordered by their YAML.
func Sort() kio.Filter { return sortFilter{} }

type sortKey struct {
	wave, rank                        int
	kind, ns, name, group, version, s string
	n                                 *yaml.RNode
}

func (sortFilter) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	keys := make([]*sortKey, len(nodes))
	for i, n := range nodes {
		g, v := resid.ParseGroupVersion(n.GetApiVersion())
		keys[i] = &sortKey{
			wave: Wave(n), rank: kindRank(n.GetKind()), kind: n.GetKind(),
			ns: n.GetNamespace(), name: n.GetName(), group: g, version: v, n: n,
		}
	}
	text := func(k *sortKey) string {
		if k.s == "" {
			k.s = k.n.MustString()
		}
		return k.s
	}
	slices.SortStableFunc(keys, func(a, b *sortKey) int {
		if c := cmp.Or(
			cmp.Compare(a.wave, b.wave), cmp.Compare(a.rank, b.rank), cmp.Compare(a.kind, b.kind),
			cmp.Compare(a.ns, b.ns), cmp.Compare(a.name, b.name),
			cmp.Compare(a.group, b.group), cmp.Compare(a.version, b.version),
		); c != 0 {
			return c
		}
		return cmp.Compare(text(a), text(b))
	})
	out := make([]*yaml.RNode, len(keys))
	for i := range keys {
		out[i] = keys[i].n
	}
	return out, nil
}

// Serialize returns one YAML document per object (kyaml's encoding: stable
// bytes, comments and `{}` kept, no "---"). Internal annotations (kustomize's
// internal.config.kubernetes.io/ and ours) are removed first, on a copy. Each
// document is parsed back and must give the same object, so a document Argo CD
// cannot read is an error here rather than a failed sync.
func Serialize(nodes []*yaml.RNode) ([]string, error) {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		if n.IsNilOrEmpty() {
			return nil, fmt.Errorf("object %d is empty", i)
		}
		n, err := withoutInternalAnnotations(n)
		if err != nil {
			return nil, fmt.Errorf("object %d (%s): %w", i, describe(n), err)
		}
		s, err := n.String()
		if err != nil {
			return nil, fmt.Errorf("object %d (%s): %w", i, describe(n), err)
		}
		if err := checkRoundTrip(n, s); err != nil {
			return nil, fmt.Errorf("object %d (%s): %w", i, describe(n), err)
		}
		out[i] = s
	}
	return out, nil
}

// withoutInternalAnnotations returns n, or a copy of it without internal
// annotations if it has any.
func withoutInternalAnnotations(n *yaml.RNode) (*yaml.RNode, error) {
	var drop []string
	for k := range n.GetAnnotations() {
		if strings.HasPrefix(k, internalPrefix) || strings.HasPrefix(k, "internal.config.kubernetes.io/") {
			drop = append(drop, k)
		}
	}
	if len(drop) == 0 {
		return n, nil
	}
	n = n.Copy()
	for _, k := range drop {
		if err := n.PipeE(yaml.ClearAnnotation(k)); err != nil {
			return nil, err
		}
	}
	return n, yaml.ClearEmptyAnnotations(n)
}

// checkRoundTrip parses s and compares it with n as JSON.
func checkRoundTrip(n *yaml.RNode, s string) error {
	back, err := yaml.Parse(s)
	if err != nil {
		return fmt.Errorf("output does not parse: %w", err)
	}
	want, err := n.MarshalJSON()
	if err != nil {
		return err
	}
	got, err := back.MarshalJSON()
	if err != nil {
		return fmt.Errorf("output does not parse: %w", err)
	}
	if !bytes.Equal(want, got) {
		return errors.New("the YAML output does not parse back to the same object")
	}
	return nil
}
