package transform

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// This file is the reference graph: which rendered objects another object
// cannot work without, and the check that no step dropped one of them while
// keeping the object that needs it. Every reference olm-cmp knows is listed in
// references, and nowhere else.

// groupCertManager is cert-manager's API group.
const groupCertManager = "cert-manager.io"

// injectCAFromAnnotation asks cert-manager's cainjector to copy a
// Certificate's CA into the object (webhook configurations, CRDs, APIServices).
const injectCAFromAnnotation = "cert-manager.io/inject-ca-from"

// refTarget is an object a reference points at. An empty namespace matches any:
// objects of a bundle or an extra manifest may leave it out.
type refTarget struct {
	gk              groupKind
	namespace, name string
}

func (t refTarget) String() string { return t.gk.Kind + " " + t.name }

// reference says that from needs to: use is a phrase about from with one %s
// for the object needed ("runs as %s"), and fatal says whether the operator
// cannot work without it.
type reference struct {
	from  *yaml.RNode
	to    refTarget
	use   string
	fatal bool
}

// provides reports whether n is the object t names (direct) or makes it: a
// cert-manager Certificate makes the Secret its spec.secretName names.
func provides(n *yaml.RNode, t refTarget) (direct, ok bool) {
	if !sameNamespace(n.GetNamespace(), t.namespace) {
		return false, false
	}
	gk := gkOf(n)
	if gk == t.gk && n.GetName() == t.name {
		return true, true
	}
	if t.gk == (groupKind{groupCore, "Secret"}) && gk == (groupKind{groupCertManager, "Certificate"}) {
		s, _ := n.GetString("spec.secretName")
		return false, s == t.name
	}
	return false, false
}

func sameNamespace(a, b string) bool { return a == b || a == "" || b == "" }

// references lists what n needs. Optional references (a Secret or ConfigMap
// marked optional) are left out: the operator runs without them.
func references(n *yaml.RNode) []reference {
	ns := n.GetNamespace()
	var refs []reference
	add := func(gk groupKind, namespace, name, use string, fatal bool) {
		if name != "" {
			refs = append(refs, reference{n, refTarget{gk, namespace, name}, use, fatal})
		}
	}
	if ps := podSpec(n); ps != nil {
		sa := str(ps, "serviceAccountName")
		if sa == "" {
			sa = str(ps, "serviceAccount")
		}
		if sa == "" {
			sa = "default"
		}
		add(groupKind{groupCore, "ServiceAccount"}, ns, sa, "runs as %s", true)
		for _, v := range elements(ps, "volumes") {
			addSource(add, ns, v, "secret", "secretName", "mounts %s")
			addSource(add, ns, v, "configMap", "name", "mounts %s")
			for _, src := range elements(v, "projected", "sources") {
				addSource(add, ns, src, "secret", "name", "mounts %s")
				addSource(add, ns, src, "configMap", "name", "mounts %s")
			}
		}
		for _, list := range []string{"initContainers", "containers"} {
			for _, c := range elements(ps, list) {
				for _, e := range elements(c, "envFrom") {
					addSource(add, ns, e, "secretRef", "name", "takes its environment from %s")
					addSource(add, ns, e, "configMapRef", "name", "takes its environment from %s")
				}
				for _, e := range elements(c, "env") {
					addSource(add, ns, e, "valueFrom.secretKeyRef", "name", "takes its environment from %s")
					addSource(add, ns, e, "valueFrom.configMapKeyRef", "name", "takes its environment from %s")
				}
			}
		}
	}
	service := groupKind{groupCore, "Service"}
	switch gk := gkOf(n); gk {
	case groupKind{groupAdmission, "ValidatingWebhookConfiguration"}, groupKind{groupAdmission, "MutatingWebhookConfiguration"}:
		for _, w := range elements(n, "webhooks") {
			add(service, str(w, "clientConfig", "service", "namespace"), str(w, "clientConfig", "service", "name"), "sends its admission requests to %s", true)
		}
	case groupKind{groupAPIRegistry, "APIService"}:
		add(service, str(n, "spec", "service", "namespace"), str(n, "spec", "service", "name"), "serves its API through %s", true)
	case groupKind{groupAPIExtensions, "CustomResourceDefinition"}:
		for _, p := range [][]string{{"spec", "conversion", "webhook", "clientConfig", "service"}, {"spec", "conversion", "webhookClientConfig", "service"}} {
			add(service, str(n, append(p, "namespace")...), str(n, append(p, "name")...), "sends its conversion requests to %s", true)
		}
	case groupKind{groupRBAC, "RoleBinding"}, groupKind{groupRBAC, "ClusterRoleBinding"}:
		// A binding to a missing role grants nothing but breaks nothing, and
		// the role may come from elsewhere: a warning, not an error.
		kind := str(n, "roleRef", "kind")
		roleNS := ns
		if kind == "ClusterRole" {
			roleNS = ""
		}
		if kind == "Role" || kind == "ClusterRole" {
			add(groupKind{groupRBAC, kind}, roleNS, str(n, "roleRef", "name"), "grants %s", false)
		}
	case groupKind{groupCertManager, "Certificate"}:
		kind := str(n, "spec", "issuerRef", "kind")
		if kind == "" {
			kind = "Issuer"
		}
		group := str(n, "spec", "issuerRef", "group")
		if group == "" || group == groupCertManager {
			issuerNS := ns
			if kind == "ClusterIssuer" {
				issuerNS = ""
			}
			add(groupKind{groupCertManager, kind}, issuerNS, str(n, "spec", "issuerRef", "name"), "is issued by %s", true)
		}
	}
	if v := n.GetAnnotations(injectCAFromAnnotation)[injectCAFromAnnotation]; v != "" {
		if certNS, name, ok := strings.Cut(v, "/"); ok {
			add(groupKind{groupCertManager, "Certificate"}, certNS, name, "takes its CA bundle from %s ("+injectCAFromAnnotation+")", true)
		}
	}
	return refs
}

// addSource adds the reference of a volume or env source: the field kind of
// v (a dotted path) naming the object in its field nameField, unless it is
// optional.
func addSource(add func(groupKind, string, string, string, bool), ns string, v *yaml.RNode, kind, nameField, use string) {
	src, _ := v.Pipe(yaml.Lookup(strings.Split(kind, ".")...))
	if src == nil || str(src, "optional") == "true" {
		return
	}
	gk := groupKind{groupCore, "Secret"}
	if strings.HasPrefix(kind[strings.LastIndex(kind, ".")+1:], "configMap") {
		gk = groupKind{groupCore, "ConfigMap"}
	}
	add(gk, ns, str(src, nameField), use, true)
}

// str returns the scalar at path in n, or "".
func str(n *yaml.RNode, path ...string) string {
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || v == nil || v.YNode().Kind != yaml.ScalarNode {
		return ""
	}
	return v.YNode().Value
}

// elements returns the items of the list at path in n.
func elements(n *yaml.RNode, path ...string) []*yaml.RNode {
	seq, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || seq == nil || seq.YNode().Kind != yaml.SequenceNode {
		return nil
	}
	els, _ := seq.Elements()
	return els
}

// drop is an object a step removed, why, and what the user can do instead.
type drop struct {
	node       *yaml.RNode
	cause, fix string
}

// Drops records what the steps of one render drop (exclude, patches that
// delete, API versions), for RequiredObjects.
type Drops struct{ list []drop }

// record notes that n was dropped because of cause ("the cluster does not
// serve x"), with fix the way out. A nil *Drops records nothing.
func (d *Drops) record(n *yaml.RNode, cause, fix string) {
	if d != nil {
		d.list = append(d.list, drop{n, cause, fix})
	}
}

// requiredFilter checks the final objects against the drops.
type requiredFilter struct {
	drops *Drops
	warn  func(string)
}

// RequiredObjects fails the render when an object it keeps needs an object a
// step dropped (see references): a Deployment whose ServiceAccount, mounted
// Secret (or the Certificate that makes it) or ConfigMap is gone, a webhook
// configuration, APIService or conversion webhook whose Service is gone, a
// Certificate whose Issuer is gone, an object whose inject-ca-from
// Certificate is gone. The error names both objects and the way out, one line
// per problem, sorted. A binding whose role is gone is a warning. A dropped
// object nothing needs is not reported here (the step that dropped it warns
// when it should).
func RequiredObjects(drops *Drops, warn func(string)) kio.Filter {
	return requiredFilter{drops, warn}
}

func (f requiredFilter) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	if f.drops == nil || len(f.drops.list) == 0 {
		return nodes, nil
	}
	// per drop, what needs it: fatal uses, and uses that only warn
	fatal := make([][]use, len(f.drops.list))
	optional := make([][]use, len(f.drops.list))
	for _, n := range nodes {
		for _, r := range references(n) {
			if providedBy(nodes, r.to) {
				continue
			}
			for i, d := range f.drops.list {
				direct, ok := provides(d.node, r.to)
				if !ok {
					continue
				}
				what := "it"
				if !direct {
					what = "its " + r.to.String()
				}
				u := use{podSpec(r.from) == nil, displayName(r.from) + " " + fmt.Sprintf(r.use, what)}
				if r.fatal {
					fatal[i] = append(fatal[i], u)
				} else {
					optional[i] = append(optional[i], u)
				}
			}
		}
	}
	var errs, warns []string
	for i, d := range f.drops.list {
		switch {
		case len(fatal[i]) > 0:
			errs = append(errs, d.message(fatal[i]))
		case len(optional[i]) > 0:
			warns = append(warns, d.message(optional[i]))
		}
	}
	slices.Sort(warns)
	for _, w := range slices.Compact(warns) {
		warnf(f.warn, "%s", w)
	}
	if len(errs) == 0 {
		return nodes, nil
	}
	slices.Sort(errs)
	return nil, errors.New(strings.Join(slices.Compact(errs), "\n"))
}

// use is a sentence about an object that needs a dropped one; workloads
// (notPod false) are named first, as the clearest case.
type use struct {
	notPod bool
	text   string
}

// maxUses is how many objects needing a dropped one a message names.
const maxUses = 3

// message is one line: what was dropped and why, what needs it, the way out.
func (d drop) message(uses []use) string {
	slices.SortFunc(uses, func(a, b use) int {
		return cmp.Or(compareBool(a.notPod, b.notPod), cmp.Compare(a.text, b.text))
	})
	uses = slices.CompactFunc(uses, func(a, b use) bool { return a.text == b.text })
	var texts []string
	for _, u := range uses[:min(len(uses), maxUses)] {
		texts = append(texts, u.text)
	}
	needs := strings.Join(texts, ", and ")
	if more := len(uses) - maxUses; more > 0 {
		needs += fmt.Sprintf(" (and %d more objects need it)", more)
	}
	return fmt.Sprintf("%s is dropped because %s, but %s: %s", displayName(d.node), d.cause, needs, d.fix)
}

// providedBy reports whether one of nodes is or makes t.
func providedBy(nodes []*yaml.RNode, t refTarget) bool {
	for _, n := range nodes {
		if _, ok := provides(n, t); ok {
			return true
		}
	}
	return false
}

// displayName names an object the way a user reads it: "Deployment ns/name".
func displayName(n *yaml.RNode) string {
	id := n.GetName()
	if ns := n.GetNamespace(); ns != "" {
		id = ns + "/" + id
	}
	return n.GetKind() + " " + id
}
