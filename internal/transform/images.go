package transform

import (
	"cmp"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// imageRule is one prefix rewrite.
type imageRule struct{ from, to string }

// imagesFilter rewrites image references by prefix.
type imagesFilter struct{ rules []imageRule }

// Images rewrites image references that start with a key of rewrites to start
// with its value instead (mirrors: "quay.io/org" → "mirror.example.com/org").
//
// The longest matching prefix wins (ties cannot happen: keys are distinct), and
// a reference is rewritten once. A prefix matches only at a boundary: it ends
// with '/', ':' or '@', or the reference continues with one of them or ends
// there, so "quay.io/org" rewrites "quay.io/org/img:1" and "quay.io/org" but
// not "quay.io/organization/img". Tags and digests are kept.
//
// Rewritten: the image of every container and init container, and every env
// value that is a whole image reference under a prefix (operators pass operand
// images as RELATED_IMAGE_* variables), in the pod templates of Deployments,
// DaemonSets, StatefulSets, ReplicaSets, ReplicationControllers, Jobs and
// CronJobs and in Pods. The CSV's relatedImages are not rendered, so not
// rewritten. Scalar styles and comments are kept.
func Images(rewrites map[string]string) kio.Filter {
	rules := make([]imageRule, 0, len(rewrites))
	for from, to := range rewrites {
		if from != "" {
			rules = append(rules, imageRule{from, to})
		}
	}
	slices.SortFunc(rules, func(a, b imageRule) int {
		return cmp.Or(cmp.Compare(len(b.from), len(a.from)), cmp.Compare(a.from, b.from))
	})
	return imagesFilter{rules}
}

// rewrite returns ref with its longest matching prefix replaced.
func (f imagesFilter) rewrite(ref string) (string, bool) {
	for _, r := range f.rules {
		if !strings.HasPrefix(ref, r.from) {
			continue
		}
		rest := ref[len(r.from):]
		if rest == "" || strings.ContainsAny(r.from[len(r.from)-1:], "/:@") || strings.ContainsAny(rest[:1], "/:@") {
			return r.to + rest, true
		}
	}
	return "", false
}

// podSpecPaths are where each workload kind keeps its pod spec.
var podSpecPaths = map[groupKind][]string{
	{groupApps, "Deployment"}:            {"spec", "template", "spec"},
	{groupApps, "DaemonSet"}:             {"spec", "template", "spec"},
	{groupApps, "StatefulSet"}:           {"spec", "template", "spec"},
	{groupApps, "ReplicaSet"}:            {"spec", "template", "spec"},
	{groupCore, "ReplicationController"}: {"spec", "template", "spec"},
	{groupBatch, "Job"}:                  {"spec", "template", "spec"},
	{groupBatch, "CronJob"}:              {"spec", "jobTemplate", "spec", "template", "spec"},
	{groupCore, "Pod"}:                   {"spec"},
}

// podSpec returns the pod spec of a workload, or nil.
func podSpec(n *yaml.RNode) *yaml.RNode {
	p := podSpecPaths[gkOf(n)]
	if p == nil {
		return nil
	}
	s, _ := n.Pipe(yaml.Lookup(p...))
	return s
}

func (f imagesFilter) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	if len(f.rules) == 0 {
		return nodes, nil
	}
	for _, n := range nodes {
		ps := podSpec(n)
		if ps == nil {
			continue
		}
		for _, list := range []string{"initContainers", "containers", "ephemeralContainers"} {
			seq := ps.Field(list)
			if seq == nil || seq.Value.YNode().Kind != yaml.SequenceNode {
				continue
			}
			for _, c := range seq.Value.Content() {
				f.container(yaml.NewRNode(c))
			}
		}
	}
	return nodes, nil
}

// container rewrites one container's image and env values.
func (f imagesFilter) container(c *yaml.RNode) {
	if img := c.Field("image"); img != nil {
		f.scalar(img.Value.YNode())
	}
	env := c.Field("env")
	if env == nil || env.Value.YNode().Kind != yaml.SequenceNode {
		return
	}
	for _, e := range env.Value.Content() {
		if v := yaml.NewRNode(e).Field("value"); v != nil && !strings.ContainsAny(v.Value.YNode().Value, " \t\n") {
			f.scalar(v.Value.YNode())
		}
	}
}

// scalar rewrites a string scalar in place, keeping its style and comments.
func (f imagesFilter) scalar(y *yaml.Node) {
	if y.Kind != yaml.ScalarNode {
		return
	}
	if v, ok := f.rewrite(y.Value); ok {
		y.Value = v
	}
}
