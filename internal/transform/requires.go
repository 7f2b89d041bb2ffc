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

// refTarget is an object a reference points at: by kind and name, or (pods
// set) the workloads whose pod template carries the labels pods, or
// (defines set) the CRD that defines that kind. An empty namespace matches
// any: objects of a bundle or an extra manifest may leave it out.
type refTarget struct {
	gk              groupKind
	namespace, name string
	pods            map[string]string
	defines         groupKind
}

func (t refTarget) String() string { return t.gk.Kind + " " + t.name }

// reference says that from needs to: use is a phrase about from with one %s
// for the object needed ("runs as %s"), and fatal says whether the operator
// cannot work without it. elsewhere says the object needed may come from
// outside the render (a CRD installed separately): when the user dropped it
// on purpose (exclude, a patch), it is a warning. alt is another way out
// than keeping the dropped object ("exclude X too").
type reference struct {
	from      *yaml.RNode
	to        refTarget
	use       string
	fatal     bool
	elsewhere bool
	alt       string
}

// provides reports whether n is the object t names (direct) or makes it: a
// cert-manager Certificate makes the Secret its spec.secretName names.
func provides(n *yaml.RNode, t refTarget) (direct, ok bool) {
	if !sameNamespace(n.GetNamespace(), t.namespace) {
		return false, false
	}
	gk := gkOf(n)
	switch {
	case t.pods != nil:
		return true, runsPods(n, t.pods)
	case t.defines != (groupKind{}):
		return true, isCRD(n) && str(n, "spec", "group") == t.defines.Group && str(n, "spec", "names", "kind") == t.defines.Kind
	}
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

// runsPods reports whether n is a workload whose pod template carries every
// label of selector (a Service's spec.selector).
func runsPods(n *yaml.RNode, selector map[string]string) bool {
	p := podSpecPaths[gkOf(n)]
	if p == nil {
		return false
	}
	meta, _ := n.Pipe(yaml.Lookup(append(slices.Clone(p[:len(p)-1]), "metadata")...))
	if meta == nil {
		return false
	}
	for k, v := range selector {
		if str(meta, "labels", k) != v {
			return false
		}
	}
	return true
}

// serviceBackends are the references through the Services of refs: an
// object that needs a Service (a webhook configuration, an APIService, a
// conversion webhook) needs the pods behind it too, so it needs a workload
// of the render whose pod template the Service selects, when there was one.
// kept are the objects kept; a Service dropped is reported as itself.
func serviceBackends(refs []reference, kept []*yaml.RNode) []reference {
	var out []reference
	for _, r := range refs {
		if r.to.gk != (groupKind{groupCore, "Service"}) || r.to.pods != nil {
			continue
		}
		for _, svc := range kept {
			if direct, ok := provides(svc, r.to); !ok || !direct {
				continue
			}
			sel, _ := svc.Pipe(yaml.Lookup("spec", "selector"))
			if sel == nil || sel.YNode().Kind != yaml.MappingNode || len(sel.Content()) == 0 {
				continue
			}
			labels := map[string]string{}
			_ = sel.VisitFields(func(f *yaml.MapNode) error {
				labels[yaml.GetValue(f.Key)] = yaml.GetValue(f.Value)
				return nil
			})
			service := strings.ReplaceAll(displayName(svc), "%", "%%")
			out = append(out, reference{r.from, refTarget{gk: groupKind{groupCore, "Pod"}, namespace: svc.GetNamespace(), pods: labels},
				fmt.Sprintf(r.use, service) + ", whose pods only %s runs", r.fatal, false, r.alt})
		}
	}
	return out
}

// references lists what n needs. Optional references (a Secret or ConfigMap
// marked optional) are left out: the operator runs without them.
func references(n *yaml.RNode) []reference {
	ns := n.GetNamespace()
	var refs []reference
	add := func(gk groupKind, namespace, name, use string, fatal bool) {
		if name != "" {
			refs = append(refs, reference{from: n, to: refTarget{gk: gk, namespace: namespace, name: name}, use: use, fatal: fatal})
		}
	}
	// alt: the other way out when what a webhook configuration or an
	// APIService calls is dropped: drop the caller too.
	alt := func(r []reference, from int) {
		for i := from; i < len(r); i++ {
			r[i].alt = fmt.Sprintf("exclude %s/%s too", n.GetKind(), n.GetName())
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
		from := len(refs)
		for _, w := range elements(n, "webhooks") {
			add(service, str(w, "clientConfig", "service", "namespace"), str(w, "clientConfig", "service", "name"), "sends its admission requests to %s", true)
		}
		alt(refs, from)
	case groupKind{groupAPIRegistry, "APIService"}:
		from := len(refs)
		add(service, str(n, "spec", "service", "namespace"), str(n, "spec", "service", "name"), "serves its API through %s", true)
		alt(refs, from)
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
	// A custom resource needs the CRD that defines its kind, when the render
	// had one: the API server refuses it otherwise. The CRD may be installed
	// separately, hence elsewhere.
	if gk := gkOf(n); !builtinGroups[gk.Group] && gk.Kind != "" {
		refs = append(refs, reference{from: n, to: refTarget{defines: gk}, use: "is a custom resource of a kind %s defines", fatal: true,
			elsewhere: true, alt: "install the CRD on the cluster some other way before the sync"})
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

// drop is an object a step removed, why, and what the user can do instead;
// chosen when the user asked for it (exclude, a patch), not the cluster.
type drop struct {
	node       *yaml.RNode
	cause, fix string
	chosen     bool
}

// Drops records what the steps of one render drop (exclude, patches that
// delete, API versions), for RequiredObjects.
type Drops struct {
	list []drop
	// served, when not nil, are the APIs the cluster serves: a custom
	// resource of one of them has its CRD on the cluster, whatever the
	// render dropped.
	served []string
}

// record notes that n was dropped because of cause ("the cluster does not
// serve x"), with fix the way out. A nil *Drops records nothing.
func (d *Drops) record(n *yaml.RNode, cause, fix string) {
	if d != nil {
		d.list = append(d.list, drop{n, cause, fix, false})
	}
}

// recordChosen is record for a drop the user asked for.
func (d *Drops) recordChosen(n *yaml.RNode, cause, fix string) {
	if d != nil {
		d.list = append(d.list, drop{n, cause, fix, true})
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
// configuration, APIService or conversion webhook whose Service is gone or
// whose Service's only pods were the dropped workload's (serviceBackends), a
// Certificate whose Issuer is gone, an object whose inject-ca-from
// Certificate is gone, a custom resource whose CRD the cluster's API list
// dropped. The error names both objects and the way out, one line per
// problem, sorted. A binding whose role is gone is a warning, and so is a
// custom resource whose CRD the user dropped (it may be installed
// separately). A dropped object nothing needs is not reported here (the step
// that dropped it warns when it should).
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
		refs := references(n)
		for _, r := range append(refs, serviceBackends(refs, nodes)...) {
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
				u := use{podSpec(r.from) == nil, displayName(r.from) + " " + fmt.Sprintf(r.use, what), r.alt}
				if r.elsewhere && !d.chosen {
					u.alt = ""
				}
				if r.elsewhere && d.chosen && slices.Contains(f.drops.served, r.from.GetApiVersion()) {
					continue // the cluster serves it: installed some other way
				}
				if r.fatal && !(r.elsewhere && d.chosen) {
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
	alt    string // another way out (reference.alt)
}

// maxUses is how many objects needing a dropped one a message names.
const maxUses = 3

// message is one line: what was dropped and why, what needs it, the way out.
func (d drop) message(uses []use) string {
	slices.SortFunc(uses, func(a, b use) int {
		return cmp.Or(compareBool(a.notPod, b.notPod), cmp.Compare(a.text, b.text))
	})
	uses = slices.CompactFunc(uses, func(a, b use) bool { return a.text == b.text })
	var texts, alts []string
	for _, u := range uses[:min(len(uses), maxUses)] {
		texts = append(texts, u.text)
	}
	for _, u := range uses {
		if u.alt != "" && !slices.Contains(alts, u.alt) {
			alts = append(alts, u.alt)
		}
	}
	needs := strings.Join(texts, ", and ")
	if more := len(uses) - maxUses; more > 0 {
		needs += fmt.Sprintf(" (and %d more objects need it)", more)
	}
	fix := d.fix
	if len(alts) > maxUses {
		alts = append(alts[:maxUses], fmt.Sprintf("the same for %d more", len(alts)-maxUses))
	}
	if len(alts) > 0 {
		fix += ", or " + strings.Join(alts, ", or ")
	}
	return fmt.Sprintf("%s is dropped because %s, but %s: %s", displayName(d.node), d.cause, needs, fix)
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
