package transform

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// imageRule is one prefix rewrite.
type imageRule struct{ from, to string }

// imagesFilter rewrites image references by prefix.
type imagesFilter struct {
	rules []imageRule
	// unmatched, when not nil, hears of each rule that rewrote nothing.
	unmatched func(string)
}

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
	return imagesReporting(rewrites, nil)
}

// imagesReporting is Images telling unmatched about each prefix that
// rewrote no image (a typo, or a prefix a longer one always wins over),
// listing the images there are (see noop.go).
func imagesReporting(rewrites map[string]string, unmatched func(string)) kio.Filter {
	rules := make([]imageRule, 0, len(rewrites))
	for from, to := range rewrites {
		if from != "" {
			rules = append(rules, imageRule{from, to})
		}
	}
	slices.SortFunc(rules, func(a, b imageRule) int {
		return cmp.Or(cmp.Compare(len(b.from), len(a.from)), cmp.Compare(a.from, b.from))
	})
	return imagesFilter{rules, unmatched}
}

// rewrite returns ref with its longest matching prefix replaced, and the
// index of that rule.
func (f imagesFilter) rewrite(ref string) (string, int) {
	for i, r := range f.rules {
		if !strings.HasPrefix(ref, r.from) {
			continue
		}
		rest := ref[len(r.from):]
		if rest == "" || strings.ContainsAny(r.from[len(r.from)-1:], "/:@") || strings.ContainsAny(rest[:1], "/:@") {
			return r.to + rest, i
		}
	}
	return "", -1
}

// imageRun is one pass of the filter: which rules rewrote something, and
// the container images seen (for the message about a rule that did not).
type imageRun struct {
	imagesFilter
	used   []bool
	images []string
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
	run := &imageRun{imagesFilter: f, used: make([]bool, len(f.rules))}
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
				run.container(yaml.NewRNode(c))
			}
		}
	}
	if f.unmatched != nil {
		slices.Sort(run.images)
		var unused []string
		for i, u := range run.used {
			if !u {
				unused = append(unused, f.rules[i].from)
			}
		}
		slices.Sort(unused) // the order a user reads the map in
		for _, from := range unused {
			f.unmatched(fmt.Sprintf("images %q matched no image; images rendered: %s", from, listSome(run.images)))
		}
	}
	return nodes, nil
}

// container rewrites one container's image and env values.
func (f *imageRun) container(c *yaml.RNode) {
	if img := c.Field("image"); img != nil {
		if y := img.Value.YNode(); y.Kind == yaml.ScalarNode {
			f.images = append(f.images, y.Value)
		}
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
func (f *imageRun) scalar(y *yaml.Node) {
	if y.Kind != yaml.ScalarNode {
		return
	}
	if v, i := f.rewrite(y.Value); i >= 0 {
		y.Value = v
		f.used[i] = true
	}
}
