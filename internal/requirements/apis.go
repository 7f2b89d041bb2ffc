package requirements

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// apiView answers "will the cluster serve group/version": from the render's
// own CRDs and APIServices, spec.clusterAPIs, and either the cluster's
// KUBE_API_VERSIONS (known) or vanilla Kubernetes' groups.
type apiView struct {
	known bool
	// served are the cluster's group/versions and groups ("" is core).
	served map[string]bool
	// shipped are the group/versions and groups of the render's CRDs and
	// APIServices and of spec.clusterAPIs.
	shipped map[string]bool
	// anyVersion are spec.clusterAPIs groups named without a version.
	anyVersion map[string]bool
}

func newAPIView(in Input) apiView {
	v := apiView{known: len(in.APIVersions) > 0, served: map[string]bool{}, shipped: map[string]bool{}, anyVersion: map[string]bool{}}
	for _, e := range in.APIVersions {
		// Argo CD sends "v1", "apps/v1", and kinds: "v1/Pod", "apps/v1/Deployment".
		parts := strings.Split(strings.TrimSpace(e), "/")
		if n := len(parts); n > 1 && parts[n-1] != "" && parts[n-1][0] >= 'A' && parts[n-1][0] <= 'Z' {
			parts = parts[:n-1]
		}
		group, version := "", parts[0]
		if len(parts) == 2 {
			group, version = parts[0], parts[1]
		}
		v.served[group+"/"+version], v.served[group] = true, true
	}
	ship := func(group, version string) { v.shipped[group], v.shipped[group+"/"+version] = true, true }
	for _, n := range in.Objects {
		switch {
		case n.GetKind() == "CustomResourceDefinition" && strings.HasPrefix(n.GetApiVersion(), "apiextensions.k8s.io/"):
			group, _ := n.GetString("spec.group")
			vs, _ := n.Pipe(yaml.Lookup("spec", "versions"))
			if vs != nil {
				_ = vs.VisitElements(func(e *yaml.RNode) error {
					ship(group, str(e, "name"))
					return nil
				})
			}
		case n.GetKind() == "APIService" && strings.HasPrefix(n.GetApiVersion(), "apiregistration.k8s.io/"):
			group, _ := n.GetString("spec.group")
			version, _ := n.GetString("spec.version")
			ship(group, version)
		}
	}
	for _, a := range in.Spec.ClusterAPIs {
		group, version, found := strings.Cut(strings.TrimSpace(a), "/")
		if !found {
			v.anyVersion[group] = true
			continue
		}
		ship(group, version)
	}
	return v
}

// has reports whether group, in version when not "", will be served.
func (v apiView) has(group, version string) bool {
	key := group
	if version != "" {
		key = group + "/" + version
	}
	switch {
	case v.anyVersion[group] || v.shipped[key]:
		return true
	case v.known:
		return v.served[key]
	}
	return builtinGroups[group]
}

// apiUse is one place the operator names an API.
type apiUse struct {
	group, version, source string
	// needed: an object of the render or a declared requirement (error);
	// otherwise an RBAC rule, which harms nothing alone (warning).
	needed bool
}

// sccGroup is the group of SecurityContextConstraints: RBAC rules on it are
// the openshift:securitycontextconstraints finding's, which says what to do
// instead.
const sccGroup = "security.openshift.io"

// findings reports the API groups used and not served. Groups a
// certificates finding already covers are left to it, and so is
// security.openshift.io in RBAC rules when the openshift finding on
// securitycontextconstraints reports them (one fact, one finding).
func (v apiView) findings(in Input, certs, openshift []Finding) []Finding {
	covered := map[string]bool{}
	for _, c := range certs {
		covered[strings.SplitN(c.Subject, "/", 2)[0]] = true
	}
	sccCovered := slices.ContainsFunc(openshift, func(f Finding) bool { return f.Subject == sccSubject })
	uses := apiUses(in)
	// needed: groups an object of the render or a declared requirement
	// uses; the others only appear in RBAC rules.
	needed := map[string]bool{}
	for _, u := range uses {
		needed[u.group] = needed[u.group] || u.needed
	}
	var out []Finding
	for _, u := range uses {
		switch {
		case u.group == "*" || covered[u.group] || v.has(u.group, u.version):
			continue
		case u.group == sccGroup && !needed[u.group] && sccCovered:
			continue
		}
		out = append(out, v.finding(u, needed[u.group]))
	}
	return out
}

func (v apiView) finding(u apiUse, needed bool) Finding {
	subject := u.group
	// The group is there in another version: name the missing version.
	if u.version != "" && v.has(u.group, "") {
		subject = u.group + "/" + u.version
	}
	where := fmt.Sprintf("not served by vanilla Kubernetes %s", KubernetesVersion)
	if v.known {
		where = "the cluster does not serve it (its KUBE_API_VERSIONS)"
	}
	if subject != u.group {
		where = fmt.Sprintf("version %s is not served", u.version)
	}
	msg := "the render uses " + u.group + " and does not ship it; " + where
	if !needed {
		msg = "only the operator's RBAC rules name " + u.group + " (no object of the render, no required CRD); the render does not ship it; " + where
	}
	if l := groupLabel(u.group); l != "" {
		msg = l + ": " + msg
	}
	example := u.group + "/" + u.version
	if u.version == "" {
		example = u.group + "/<version>"
	}
	provider := providers[u.group]
	if provider == "" {
		provider = "what serves it"
	}
	accept := fmt.Sprintf("accept %q", "api:"+u.group)
	var fix string
	switch {
	case isOpenShift(u.group):
		fix = fmt.Sprintf("if the operator cannot run without it, add a stand-in CRD as an extra manifest; otherwise %s (spec.accept); on OpenShift, declare it in spec.clusterAPIs", accept)
	case !needed:
		// An operator often installs such a group itself (its operand's
		// CRDs) or uses it only where it is served: "install first" would
		// be wrong advice as often as right.
		fix = fmt.Sprintf("verify: the operator may install it itself (its operands' CRDs) or use it only when served, then %s; if it needs it beforehand, install %s first and declare it in spec.clusterAPIs (%s)", accept, provider, example)
	default:
		fix = fmt.Sprintf("install %s first and declare it in spec.clusterAPIs (%s), or %s", provider, example, accept)
	}
	sev := Warning
	if needed {
		sev = Required
	}
	return Finding{Category: API, Subject: subject, Source: u.source, Severity: sev, Message: msg, Fix: fix, rbacOnly: !needed}
}

// apiUses lists the APIs of the render: RBAC rules of its Roles and
// ClusterRoles, the apiVersion of every object, the CSV's required CRDs, and
// the GVKs metadata/ requires.
func apiUses(in Input) []apiUse {
	var out []apiUse
	for _, n := range in.Objects {
		group, version := resid.ParseGroupVersion(n.GetApiVersion())
		out = append(out, apiUse{group, version, objectName(n), true})
		if (n.GetKind() == "Role" || n.GetKind() == "ClusterRole") && group == "rbac.authorization.k8s.io" {
			out = append(out, rbacUses(n)...)
		}
	}
	if in.Bundle == nil || in.Bundle.CSV == nil {
		return out
	}
	for _, r := range in.Bundle.CSV.Spec.CustomResourceDefinitions.Required {
		_, group, _ := strings.Cut(r.Name, ".")
		out = append(out, apiUse{group, r.Version, "CSV customresourcedefinitions.required " + r.Name, true})
	}
	for _, src := range []struct {
		file  string
		props []bundle.Property
		types []string
	}{
		{"metadata/dependencies.yaml", in.Bundle.Dependencies, []string{"olm.gvk"}},
		{"metadata/properties.yaml", in.Bundle.Properties, []string{"olm.gvk.required"}},
	} {
		for _, p := range src.props {
			if p.Type != src.types[0] {
				continue
			}
			var gvk struct{ Group, Version, Kind string }
			if json.Unmarshal(p.Value, &gvk) != nil || gvk.Group == "" {
				continue
			}
			out = append(out, apiUse{gvk.Group, gvk.Version, fmt.Sprintf("%s %s %s/%s %s", src.file, p.Type, gvk.Group, gvk.Version, gvk.Kind), true})
		}
	}
	return out
}

// rbacUses lists the groups of a Role's or ClusterRole's rules.
func rbacUses(n *yaml.RNode) []apiUse {
	var out []apiUse
	rules, _ := n.Pipe(yaml.Lookup("rules"))
	if rules == nil {
		return nil
	}
	_ = rules.VisitElements(func(r *yaml.RNode) error {
		groups, _ := r.Pipe(yaml.Lookup("apiGroups"))
		if groups == nil {
			return nil
		}
		for _, g := range groups.Content() {
			if legacyRBACGroups[g.Value] {
				continue
			}
			out = append(out, apiUse{g.Value, "", objectName(n) + " rules", false})
		}
		return nil
	})
	return out
}
