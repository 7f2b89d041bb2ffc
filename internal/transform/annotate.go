package transform

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// annotateFilter sets one annotation.
type annotateFilter struct{ key, value string }

// Annotate sets metadata.annotations[key] = value on every object, e.g. where
// it came from (render chooses the keys: olm-cmp.dev/bundle, ...). Pod
// templates are left alone: that would restart pods on every bundle change.
// Other annotations keep their order.
func Annotate(key, value string) kio.Filter { return annotateFilter{key, value} }

func (f annotateFilter) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	for _, n := range nodes {
		if err := n.PipeE(yaml.SetAnnotation(f.key, f.value)); err != nil {
			return nil, fmt.Errorf("annotate %s: %s: %w", f.key, describe(n), err)
		}
	}
	return nodes, nil
}

// apiVersionsFilter drops objects of APIs the cluster does not serve.
type apiVersionsFilter struct {
	served map[string]bool // apiVersions and apiVersion/Kind
	kinds  map[string]bool // apiVersions for which served lists kinds
	warn   func(string)
	drops  *Drops
}

// APIVersions drops the objects whose API the cluster does not serve, with a
// warning naming each, given served as in Argo CD's KUBE_API_VERSIONS:
// "group/version" ("v1" for the core group), and "group/version/Kind" entries
// for the kinds of each (Argo CD sends both). An object is kept when its
// apiVersion is served and, if served lists kinds for that apiVersion, its kind
// is among them; or when a CRD in the render defines its kind and version (the
// cluster cannot serve it before the first sync). Empty served keeps
// everything: the cluster is unknown.
func APIVersions(served []string, warn func(string)) kio.Filter {
	return apiVersionsRecording(served, warn, nil)
}

// apiVersionsRecording is APIVersions noting each drop in drops.
func apiVersionsRecording(served []string, warn func(string), drops *Drops) kio.Filter {
	f := apiVersionsFilter{warn: warn, drops: drops}
	if len(served) > 0 {
		f.served, f.kinds = map[string]bool{}, map[string]bool{}
		for _, s := range served {
			if s = strings.TrimSpace(s); s != "" {
				f.served[s] = true
				// "apps/v1/Deployment" and "v1/Pod" name kinds: their
				// apiVersion lists kinds.
				if i := strings.LastIndex(s, "/"); i > 0 && isKindSegment(s[i+1:]) {
					f.kinds[s[:i]] = true
				}
			}
		}
	}
	return f
}

// everyClusterServes are the APIs no supported Kubernetes lacks: a list of
// served APIs without one of them is partial, not a fact about the cluster.
var everyClusterServes = map[string]bool{
	"v1": true, "apps/v1": true, "rbac.authorization.k8s.io/v1": true,
	"apiextensions.k8s.io/v1": true, "admissionregistration.k8s.io/v1": true,
}

// isKindSegment tells "v1/Pod" (kind) from "apps/v1" (group/version): kinds
// start with an upper-case letter, versions with a lower-case 'v'.
func isKindSegment(s string) bool { return s != "" && s[0] >= 'A' && s[0] <= 'Z' }

func (f apiVersionsFilter) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	if f.served == nil {
		return nodes, nil
	}
	defined := crdKinds(nodes)
	out := nodes[:0:0]
	for _, n := range nodes {
		av, kind := n.GetApiVersion(), n.GetKind()
		_, version, _ := strings.Cut(av, "/")
		if !strings.Contains(av, "/") {
			version = av
		}
		if slices.Contains(defined[gkOf(n)], version) {
			out = append(out, n)
			continue
		}
		var cause string
		switch {
		case !f.served[av]:
			cause = "the cluster does not serve " + av
		case f.kinds[av] && !f.served[av+"/"+kind]:
			cause = fmt.Sprintf("the cluster does not serve kind %s in %s", kind, av)
		default:
			out = append(out, n)
			continue
		}
		warnf(f.warn, "dropped %s: %s", describe(n), cause)
		fix := fmt.Sprintf("install what serves %s on the cluster (its CRDs or operator) first, then refresh", av)
		if everyClusterServes[av] {
			fix = fmt.Sprintf("every cluster serves %s: the list of APIs the cluster serves (--api-versions, Argo CD's KUBE_API_VERSIONS) looks partial; give the whole list", av)
		}
		if gkOf(n).Group == groupCertManager {
			fix = "install cert-manager, or set certificateProvider: none and supply the Secret"
		}
		f.drops.record(n, cause, fix)
	}
	return out, nil
}
