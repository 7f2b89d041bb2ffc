package requirements

import (
	"fmt"
	"slices"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/convert"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// certificateFindings reports what the webhook certificate provider needs:
// cert-manager.io/v1 served (cert-manager), Secrets the user supplies
// (none), or OpenShift (service-ca). Only bundles with webhooks need one.
func certificateFindings(in Input, api apiView) []Finding {
	if in.Bundle == nil || in.Bundle.CSV == nil || len(in.Bundle.CSV.Spec.WebhookDefinitions) == 0 {
		return nil
	}
	var deployments []string
	for _, w := range in.Bundle.CSV.Spec.WebhookDefinitions {
		deployments = append(deployments, w.DeploymentName)
	}
	deployments = slices.Compact(slices.Sorted(slices.Values(deployments)))
	source := "CSV webhookdefinitions (Deployment " + strings.Join(deployments, ", ") + ")"
	provider := effectiveProvider(in)
	switch provider {
	case spec.CertProviderCertManager:
		if api.has("cert-manager.io", "v1") {
			return nil
		}
		where := fmt.Sprintf("vanilla Kubernetes %s does not serve cert-manager.io/v1", KubernetesVersion)
		if api.known {
			where = "the cluster does not serve cert-manager.io/v1 (its KUBE_API_VERSIONS): the Issuer and Certificates are dropped and the webhook Deployments wait forever for their Secrets"
		}
		return []Finding{{Category: Certificates, Subject: "cert-manager.io/v1", Source: source, Severity: Required,
			Message: "certificateProvider cert-manager: webhook serving certificates are cert-manager Certificates; " + where,
			Fix:     "install cert-manager first and declare cert-manager.io/v1 in spec.clusterAPIs; or set spec.certificateProvider: none and supply the certificates"}}
	case spec.CertProviderServiceCA:
		return []Finding{{Category: Certificates, Subject: "service-ca", Source: source, Severity: Required,
			Message: "certificateProvider service-ca: OpenShift's service-ca operator issues the webhook certificates and injects their CA; nothing does elsewhere",
			Fix:     "set spec.certificateProvider: cert-manager (with cert-manager installed) or none (you supply the certificates)"}}
	}
	// none: the user supplies each webhook Service's certificate.
	secrets := map[string]bool{}
	for _, n := range in.Objects {
		if n.GetKind() == "Secret" && n.GetApiVersion() == "v1" {
			secrets[n.GetName()] = true
		}
	}
	var out []Finding
	for _, d := range deployments {
		svc := webhookService(d)
		secret := convert.ObjectNameForBaseAndSuffix(svc, "cert")
		if secrets[secret] {
			continue
		}
		out = append(out, Finding{Category: Certificates, Subject: "Secret/" + secret, Source: "CSV webhookdefinitions (Deployment " + d + ")", Severity: Warning,
			Message: fmt.Sprintf("certificateProvider none: nothing issues the serving certificate of Service %s.%s.svc or sets the webhooks' caBundle", svc, in.Spec.Namespace),
			Fix: fmt.Sprintf("create the kubernetes.io/tls Secret %s/%s, mount it in Deployment %s (spec.config volumes and volumeMounts) and set caBundle (spec.patches); then accept %q",
				in.Spec.Namespace, secret, d, "certificates:Secret/"+secret)})
	}
	return out
}
