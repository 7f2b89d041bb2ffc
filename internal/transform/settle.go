package transform

import (
	"errors"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Argo CD resource hook annotations.
const (
	HookAnnotation             = "argocd.argoproj.io/hook"
	HookDeletePolicyAnnotation = "argocd.argoproj.io/hook-delete-policy"
)

// settleSuffix ends the name render gives the hook.
const settleSuffix = "-sync-settled"

// settleHookFilter appends the PostSync settle hook.
type settleHookFilter struct{ namespace, name string }

// SettleHook appends a ConfigMap in namespace that Argo CD runs as a PostSync
// hook and deletes when it succeeds. Its name is name made a valid one as the
// auth-reader binding's is: render names it after the spec's metadata.name,
// and "GitLab Operator-sync-settled" becomes gitlab-operator-sync-settled.
//
// Why: Argo CD ends a sync right after it applies the last wave, without
// waiting for that wave (it waits for every other wave to be healthy), and
// compares the Application at once. When that comparison runs before Argo
// CD's cluster cache has seen the last wave's writes, it finds those objects
// missing or old; Argo CD 3.x then self-heals at once (2.x waited 5 s) with a
// second, partial sync that finds them unchanged. After a hook phase the last
// wave is no longer last: Argo CD waits for it to be healthy, pauses between
// the sync phase and the hooks, and waits until its cache has seen the hook
// itself, so the comparison after the sync sees everything it applied.
func SettleHook(namespace, name string) kio.Filter { return settleHookFilter{namespace, name} }

func (f settleHookFilter) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	if f.namespace == "" || f.name == "" {
		return nil, errors.New("settle hook: no namespace or name")
	}
	// render names the hook <metadata.name>-sync-settled: a long name is cut
	// before that suffix, as the auth-reader binding's is, not through it.
	name := dnsSubdomainName(f.name, "")
	if base, ok := strings.CutSuffix(f.name, settleSuffix); ok {
		name = dnsSubdomainName(base, settleSuffix)
	}
	cm, err := newObject("v1", "ConfigMap", f.namespace, name)
	if err != nil {
		return nil, err
	}
	for _, kv := range [][2]string{
		{HookAnnotation, "PostSync"},
		// BeforeHookCreation: a hook left by an interrupted sync does not block the next one
		{HookDeletePolicyAnnotation, "HookSucceeded,BeforeHookCreation"},
	} {
		if err := cm.PipeE(yaml.SetAnnotation(kv[0], kv[1])); err != nil {
			return nil, err
		}
	}
	data := "Argo CD PostSync hook of olm-cmp: it holds the end of a sync until Argo CD has seen every object the sync applied, so that the Application is Synced at once. Argo CD deletes it when the hook succeeds."
	if err := cm.PipeE(yaml.SetField("data", yaml.NewMapRNode(&map[string]string{"purpose": data}))); err != nil {
		return nil, err
	}
	return append(nodes, cm), nil
}

// isHook reports whether n is an Argo CD resource hook (it runs in a hook
// phase, after or around the sync waves, and is not part of the comparison).
func isHook(n *yaml.RNode) bool {
	_, ok := n.GetAnnotations(HookAnnotation)[HookAnnotation]
	return ok
}
