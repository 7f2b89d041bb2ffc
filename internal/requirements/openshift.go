package requirements

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/convert"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// OpenShift-only metadata that something on OpenShift acts on, and nothing
// elsewhere does.
const (
	servingCertBeta    = "service.beta.openshift.io/serving-cert-secret-name"
	servingCertAlpha   = "service.alpha.openshift.io/serving-cert-secret-name"
	injectCABundle     = "service.beta.openshift.io/inject-cabundle"
	injectTrustedLabel = "config.openshift.io/inject-trusted-cabundle"
	sccAnnotation      = "openshift.io/scc"
	consolePlugins     = "console.openshift.io/plugins"
	// sccSubject is the finding on RBAC rules naming SCCs.
	sccSubject = "securitycontextconstraints"
)

// openshiftFindings reports OpenShift-only behaviour the render relies on:
// service-ca annotations, the trusted-CA-bundle label, SCCs, console plugins.
func openshiftFindings(in Input) []Finding {
	var out []Finding
	add := func(subject, source string, sev Severity, msg, fix string) {
		out = append(out, Finding{Category: OpenShift, Subject: subject, Source: source, Severity: sev, Message: msg, Fix: fix})
	}
	acceptFix := func(subject string) string { return fmt.Sprintf("accept %q (spec.accept)", "openshift:"+subject) }
	serviceCA := effectiveProvider(in) == spec.CertProviderServiceCA
	webhookServices := webhookServiceNames(in)
	for _, n := range in.Objects {
		// With certificateProvider service-ca, the annotations olm-cmp puts
		// on webhooks, their Services and converted CRDs are the
		// certificates finding's.
		ours := serviceCA && (webhookServices[n.GetName()] && n.GetKind() == "Service" ||
			slices.Contains([]string{"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "CustomResourceDefinition"}, n.GetKind()))
		ann := n.GetAnnotations()
		for _, key := range []string{servingCertBeta, servingCertAlpha} {
			if secret := ann[key]; secret != "" && !ours {
				add(key, objectName(n)+" annotation", Required,
					"OpenShift's service-ca writes the serving certificate Secret this annotation names; nothing else will, so whatever mounts it cannot start",
					fmt.Sprintf("create the Secret yourself (e.g. a cert-manager Certificate with secretName %s as an extra manifest), then %s", secret, acceptFix(key)))
			}
		}
		if ann[injectCABundle] == "true" && !ours {
			add(injectCABundle, objectName(n)+" annotation", Warning,
				"OpenShift's service-ca injects its CA bundle here; nothing else will",
				"inject a CA another way (cert-manager's cert-manager.io/inject-ca-from annotation through spec.patches, or trust-manager), then "+acceptFix(injectCABundle))
		}
		if n.GetKind() == "ConfigMap" && n.GetLabels()[injectTrustedLabel] == "true" {
			add(injectTrustedLabel, objectName(n)+" label", Warning,
				"OpenShift fills this ConfigMap with the cluster's trusted CA bundle; elsewhere it stays empty and the operator trusts only its image's CAs",
				"if the operator must trust a private CA, fill the ConfigMap (a spec.patches entry with ca-bundle.crt, or trust-manager); then "+acceptFix(injectTrustedLabel))
		}
		if scc := cmp.Or(ann[sccAnnotation], podTemplateAnnotation(n, sccAnnotation)); scc != "" {
			level := podSecurityLevel([]string{scc})
			add(sccAnnotation, objectName(n)+" annotation", Warning,
				"names an OpenShift SecurityContextConstraints; without OpenShift, Pod Security Admission decides what the pods may do",
				labelFix(level, []string{scc})+", then "+acceptFix(sccAnnotation))
			out[len(out)-1].level = level
		}
		if (n.GetKind() == "Role" || n.GetKind() == "ClusterRole") && rulesName(n, sccSubject) {
			sccs := ruleResourceNames(n, sccSubject)
			level := podSecurityLevel(sccs)
			add(sccSubject, objectName(n)+" rules", Warning,
				"grants use of an OpenShift SecurityContextConstraints (API group "+sccGroup+", which vanilla Kubernetes does not serve); without OpenShift, Pod Security Admission decides what the pods may do",
				labelFix(level, sccs)+", then "+acceptFix(sccSubject))
			// It stands for the api finding on the group too: an entry
			// written for either accepts it.
			out[len(out)-1].alias = string(API) + ":" + sccGroup
			out[len(out)-1].level = level
		}
	}
	if in.Bundle != nil && in.Bundle.CSV != nil && in.Bundle.CSV.Annotations[consolePlugins] != "" {
		add(consolePlugins, "CSV metadata.annotations", Warning,
			fmt.Sprintf("OLM on OpenShift enables the console plugins %s; there is no OpenShift console to show them", in.Bundle.CSV.Annotations[consolePlugins]),
			"nothing to do without the OpenShift console: "+acceptFix(consolePlugins))
	}
	return out
}

// podTemplateAnnotation is an annotation of a workload's pod template.
func podTemplateAnnotation(n *yaml.RNode, key string) string {
	path := podSpecPaths[n.GetKind()]
	if len(path) < 2 {
		return ""
	}
	meta, _ := n.Pipe(yaml.Lookup(append(slices.Clone(path[:len(path)-1]), "metadata", "annotations")...))
	if meta == nil {
		return ""
	}
	// A key with "/" cannot be a Lookup path segment.
	if f := meta.Field(key); f != nil {
		return yaml.GetValue(f.Value)
	}
	return ""
}

// rulesName reports whether a Role's rules name resource.
func rulesName(n *yaml.RNode, resource string) bool {
	rules, _ := n.Pipe(yaml.Lookup("rules"))
	found := false
	if rules != nil {
		_ = rules.VisitElements(func(r *yaml.RNode) error {
			res, _ := r.Pipe(yaml.Lookup("resources"))
			if res != nil && slices.ContainsFunc(res.Content(), func(y *yaml.Node) bool { return y.Value == resource }) {
				found = true
			}
			return nil
		})
	}
	return found
}

// effectiveProvider is the certificate provider the render used (render's
// rule: the spec's, else cert-manager when the bundle has webhooks).
func effectiveProvider(in Input) string {
	return in.Spec.CertProvider(in.Bundle != nil && in.Bundle.CSV != nil && len(in.Bundle.CSV.Spec.WebhookDefinitions) > 0)
}

// webhookServiceNames are the Services the conversion makes for webhook
// Deployments, named as OLM names them (convert.certsFor).
func webhookServiceNames(in Input) map[string]bool {
	out := map[string]bool{}
	if in.Bundle == nil || in.Bundle.CSV == nil {
		return out
	}
	for _, w := range in.Bundle.CSV.Spec.WebhookDefinitions {
		out[webhookService(w.DeploymentName)] = true
	}
	return out
}

func webhookService(deployment string) string {
	return convert.ObjectNameForBaseAndSuffix(strings.ReplaceAll(deployment, ".", "-"), "service")
}

// sccLevels are the Pod Security levels that allow what OpenShift's
// default SecurityContextConstraints allow: host access and privileged
// containers, any user ID with the baseline's limits, or the restricted
// profile. A custom SCC is not in the list: its level is unknown.
var sccLevels = map[string]string{
	"privileged": "privileged", "hostaccess": "privileged", "hostmount-anyuid": "privileged",
	"hostnetwork": "privileged", "hostnetwork-v2": "privileged", "node-exporter": "privileged",
	"anyuid": "baseline", "nonroot": "baseline", "nonroot-v2": "baseline",
	"restricted": "restricted", "restricted-v2": "restricted",
}

// podSecurityLevel is the loosest Pod Security level the SCCs named need,
// "" when one is unknown (a custom SCC) or none is named (a rule on every
// SCC).
func podSecurityLevel(sccs []string) string {
	if len(sccs) == 0 {
		return ""
	}
	level := "restricted"
	for _, s := range sccs {
		l, ok := sccLevels[s]
		if !ok {
			return ""
		}
		level = looserLevel(level, l)
	}
	return level
}

// looserLevel is the looser of two Pod Security levels ("" is unknown, and
// wins: nothing says the pods can do with less).
func looserLevel(a, b string) string {
	order := []string{"restricted", "baseline", "privileged"}
	if a == "" || b == "" {
		return ""
	}
	return order[max(slices.Index(order, a), slices.Index(order, b))]
}

// labelFix is the first half of an SCC finding's fix: the label to set.
func labelFix(level string, sccs []string) string {
	if level == "" {
		return "label the install namespace with the " + spec.PodSecurityPrefix + "enforce level its pods need (spec.namespaceLabels; privileged allows everything an SCC can)"
	}
	return fmt.Sprintf("label the install namespace %senforce: %s (spec.namespaceLabels; the level of the SCC %s)", spec.PodSecurityPrefix, level, strings.Join(sccs, ", "))
}

// ruleResourceNames are the resourceNames of the rules naming resource
// (none when a rule covers every object of it).
func ruleResourceNames(n *yaml.RNode, resource string) []string {
	rules, _ := n.Pipe(yaml.Lookup("rules"))
	var names []string
	all := false
	if rules != nil {
		_ = rules.VisitElements(func(r *yaml.RNode) error {
			res, _ := r.Pipe(yaml.Lookup("resources"))
			if res == nil || !slices.ContainsFunc(res.Content(), func(y *yaml.Node) bool { return y.Value == resource }) {
				return nil
			}
			rn, _ := r.Pipe(yaml.Lookup("resourceNames"))
			if rn == nil || len(rn.Content()) == 0 {
				all = true
				return nil
			}
			for _, y := range rn.Content() {
				names = append(names, y.Value)
			}
			return nil
		})
	}
	if all {
		return nil
	}
	return slices.Compact(slices.Sorted(slices.Values(names)))
}
