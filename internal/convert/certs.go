package convert

import (
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Annotations the certificate providers use (OLM v1 certproviders/).
const (
	certManagerInjectCA    = "cert-manager.io/inject-ca-from"
	serviceCAInjectBundle  = "service.beta.openshift.io/inject-cabundle"
	serviceCAServingSecret = "service.beta.openshift.io/serving-cert-secret-name"
)

// OLM v0's certificate lifetime, kept by OLM v1's cert-manager provider.
const (
	certDuration    = 730 * 24 * time.Hour
	certRenewBefore = 24 * time.Hour
)

// certNames are the per-deployment names OLM v1 derives in CertProvisionerFor
// (which keeps OLM v0's naming): the webhook Service "<dep>-service" (dots
// replaced) and the Certificate/Secret "<service>-cert".
type certNames struct {
	Service, Cert, Namespace string
	Provider                 CertProvider
}

func certsFor(deployment string, o Options) certNames {
	svc := ObjectNameForBaseAndSuffix(strings.ReplaceAll(deployment, ".", "-"), "service")
	return certNames{
		Service:   svc,
		Cert:      ObjectNameForBaseAndSuffix(svc, "cert"),
		Namespace: o.InstallNamespace,
		Provider:  o.CertProvider,
	}
}

// hasProvider is false for "" and "none": Services and webhooks are still
// rendered, but without CA injection or certificate volumes (as OLM v1).
func (c certNames) hasProvider() bool {
	return c.Provider == CertManager || c.Provider == ServiceCA
}

// injectCA adds the provider's CA-injection annotation to a webhook
// configuration or CRD node, like OLM v1's InjectCABundle.
func (c certNames) injectCA(n *yaml.RNode) error {
	switch c.Provider {
	case CertManager:
		return setAnnotations(n, map[string]string{certManagerInjectCA: c.Namespace + "/" + c.Cert})
	case ServiceCA:
		return setAnnotations(n, map[string]string{serviceCAInjectBundle: "true"})
	}
	return nil
}

// annotateService asks service-ca to write the serving certificate Secret.
func (c certNames) annotateService(n *yaml.RNode) error {
	if c.Provider != ServiceCA {
		return nil
	}
	return setAnnotations(n, map[string]string{serviceCAServingSecret: c.Cert})
}

// additionalObjects are the provider's own objects: for cert-manager a
// self-signed Issuer and a Certificate with OLM v0's parameters (CN and DNS
// names of the Service, serverAuth, 2 years, renewed a day early).
func (c certNames) additionalObjects() ([]*yaml.RNode, error) {
	if c.Provider != CertManager {
		return nil, nil
	}
	issuer := ObjectNameForBaseAndSuffix(c.Cert, "selfsigned-issuer")
	host := fmt.Sprintf("%s.%s", c.Service, c.Namespace)
	objs := []map[string]any{{
		"apiVersion": "cert-manager.io/v1",
		"kind":       "Issuer",
		"metadata":   map[string]any{"name": issuer, "namespace": c.Namespace},
		"spec":       map[string]any{"selfSigned": map[string]any{}},
		"status":     map[string]any{},
	}, {
		"apiVersion": "cert-manager.io/v1",
		"kind":       "Certificate",
		"metadata":   map[string]any{"name": c.Cert, "namespace": c.Namespace},
		"spec": map[string]any{
			"secretName":  c.Cert,
			"commonName":  host,
			"usages":      []string{"server auth"},
			"dnsNames":    []string{host, host + ".svc", host + ".svc.cluster.local"},
			"issuerRef":   map[string]any{"name": issuer},
			"duration":    certDuration.String(),
			"renewBefore": certRenewBefore.String(),
		},
		"status": map[string]any{},
	}}
	return toRNodes(objs)
}
