package transform

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

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
// order and is the same whatever the input order: resource hooks after every
// other object (they run in a hook phase after the sync waves), then by wave,
// then Argo CD's kind order (unknown kinds last, by kind name), then
// namespace, name, group and version. Objects equal in all of these are
// ordered by their YAML.
func Sort() kio.Filter { return sortFilter{} }

type sortKey struct {
	hook                              bool
	wave, rank                        int
	kind, ns, name, group, version, s string
	n                                 *yaml.RNode
}

func (sortFilter) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	keys := make([]*sortKey, len(nodes))
	for i, n := range nodes {
		g, v := resid.ParseGroupVersion(n.GetApiVersion())
		keys[i] = &sortKey{
			hook: isHook(n), wave: Wave(n), rank: kindRank(n.GetKind()), kind: n.GetKind(),
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
			compareBool(a.hook, b.hook), cmp.Compare(a.wave, b.wave), cmp.Compare(a.rank, b.rank), cmp.Compare(a.kind, b.kind),
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

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// Serialize returns one YAML document per object (kyaml's encoding: stable
// bytes, comments and `{}` kept, no "---"). Internal annotations (kustomize's
// internal.config.kubernetes.io/ and ours) are removed first, on a copy.
//
// The YAML encoder does not always print what it was given: a folded scalar
// (>-) with more-indented lines, common in CRD descriptions generated from Go
// comments, reads back with other line breaks. Folded scalars are therefore
// printed as literal blocks (|), which keep every character as it is; only
// their look changes. VerifyRoundTrip checks the whole result, and the tests
// run it over every real bundle.
//
// Objects are independent, so they are printed in parallel: printing is the
// largest cost of rendering a bundle with multi-megabyte CRDs.
func Serialize(nodes []*yaml.RNode) ([]string, error) {
	out := make([]string, len(nodes))
	errs := make([]error, len(nodes))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(nodes)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sp := newScalarPrinter()
			for i := range work {
				out[i], errs[i] = serializeOne(nodes[i], sp)
			}
		}()
	}
	for i, n := range nodes {
		if n.IsNilOrEmpty() {
			errs[i] = fmt.Errorf("object %d is empty", i)
			continue
		}
		work <- i
	}
	close(work)
	wg.Wait()
	for i, err := range errs {
		switch {
		case err != nil && nodes[i].IsNilOrEmpty():
			return nil, err
		case err != nil:
			return nil, fmt.Errorf("object %d (%s): %w", i, describe(nodes[i]), err)
		}
	}
	return out, nil
}

// serializeOne prints n with multi-line folded scalars printed as literal
// blocks: with printYAML, or else with kyaml's encoder (encoderString).
func serializeOne(n *yaml.RNode, sp *scalarPrinter) (string, error) {
	n, _, err := withoutInternalAnnotations(n)
	if err != nil {
		return "", err
	}
	if s, err := printYAML(n.Document(), sp); err == nil {
		return s, nil
	}
	return encoderString(n)
}

// encoderString prints n with kyaml's encoder, multi-line folded scalars as
// literal blocks. The styles are switched on n itself (copying a
// multi-megabyte CRD would cost more than printing it) and switched back
// before returning.
func encoderString(n *yaml.RNode) (string, error) {
	unfolded := unfold(n.YNode(), nil)
	defer func() {
		for _, s := range unfolded {
			s.Style = s.Style&^yaml.LiteralStyle | yaml.FoldedStyle
		}
	}()
	return n.String()
}

// unfold switches folded scalars whose value holds a line break to literal
// style and returns them. Folded scalars without one print correctly.
func unfold(n *yaml.Node, changed []*yaml.Node) []*yaml.Node {
	if n.Kind == yaml.ScalarNode && n.Style&yaml.FoldedStyle != 0 && strings.Contains(n.Value, "\n") {
		n.Style = n.Style&^yaml.FoldedStyle | yaml.LiteralStyle
		changed = append(changed, n)
	}
	for _, c := range n.Content {
		changed = unfold(c, changed)
	}
	return changed
}

// VerifyRoundTrip parses a serialized document back and checks that it gives
// the same object as n (values and resolved tags; comments and styles aside).
func VerifyRoundTrip(n *yaml.RNode, doc string) error {
	n, _, err := withoutInternalAnnotations(n)
	if err != nil {
		return err
	}
	back, err := yaml.Parse(doc)
	if err != nil {
		return fmt.Errorf("output does not parse back: %w", err)
	}
	var bad []*yaml.Node
	path, err := compareNodes(n.YNode(), back.YNode(), "", &bad)
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		return fmt.Errorf("the YAML output does not parse back to the same object (at %s)", path)
	}
	return nil
}

// withoutInternalAnnotations returns n, or a copy of it without internal
// annotations if it has any (then copied is true).
func withoutInternalAnnotations(n *yaml.RNode) (_ *yaml.RNode, copied bool, _ error) {
	var drop []string
	for k := range n.GetAnnotations() {
		if strings.HasPrefix(k, internalPrefix) || strings.HasPrefix(k, "internal.config.kubernetes.io/") {
			drop = append(drop, k)
		}
	}
	if len(drop) == 0 {
		return n, false, nil
	}
	n = n.Copy()
	for _, k := range drop {
		if err := n.PipeE(yaml.ClearAnnotation(k)); err != nil {
			return nil, false, err
		}
	}
	return n, true, yaml.ClearEmptyAnnotations(n)
}

// compareNodes compares two YAML trees as data: same structure, same scalar
// values and resolved tags (comments and styles aside), no repeated keys. It
// appends to bad the scalars of a that differ and returns the path of the
// first; a structural difference is an error.
func compareNodes(a, b *yaml.Node, path string, bad *[]*yaml.Node) (string, error) {
	for a.Kind == yaml.DocumentNode && len(a.Content) == 1 {
		a = a.Content[0]
	}
	for b.Kind == yaml.DocumentNode && len(b.Content) == 1 {
		b = b.Content[0]
	}
	if a.Kind == yaml.AliasNode && a.Alias != nil {
		a = a.Alias
	}
	if b.Kind == yaml.AliasNode && b.Alias != nil {
		b = b.Alias
	}
	if a.Kind != b.Kind || len(a.Content) != len(b.Content) {
		return path, fmt.Errorf("the YAML output does not parse back to the same object (at %s)", cmp.Or(path, "the root"))
	}
	if a.Kind == yaml.ScalarNode {
		if a.Value != b.Value || a.ShortTag() != b.ShortTag() {
			*bad = append(*bad, a)
			return path, nil
		}
		return "", nil
	}
	var keys map[string]bool
	if a.Kind == yaml.MappingNode {
		keys = make(map[string]bool, len(a.Content)/2)
	}
	first := ""
	for i := range a.Content {
		p := path + "[" + strconv.Itoa(i) + "]"
		if keys != nil {
			k := a.Content[i-i%2].Value
			p = path + "." + k
			if i%2 == 0 {
				// A repeated key prints, but no reader takes it.
				if keys[k] {
					return p, fmt.Errorf("the YAML output does not parse back to the same object (at %s: repeated key)", p)
				}
				keys[k] = true
			}
		}
		q, err := compareNodes(a.Content[i], b.Content[i], p, bad)
		if err != nil {
			return q, err
		}
		if first == "" {
			first = q
		}
	}
	return first, nil
}
