package convert

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// GenerateValidatingWebhookConfigurations reproduces OLM v1's
// BundleValidatingWebhookResourceGenerator: one configuration per
// ValidatingAdmissionWebhook definition, named generateName without a
// trailing "-" (OLM v0 used generateName and got a random suffix), holding one
// webhook of the same name that calls the deployment's webhook Service. The
// namespaceSelector limits it to the target namespaces (none in AllNamespaces
// mode). Deviation: no metadata.namespace (OLM v1 sets one on this
// cluster-scoped object).
func GenerateValidatingWebhookConfigurations(b *bundle.Bundle, o Options) ([]*yaml.RNode, error) {
	return webhookConfigurations(b, o, v1alpha1.ValidatingAdmissionWebhook, func(wh v1alpha1.WebhookDescription, name string, cc admissionregistrationv1.WebhookClientConfig) any {
		return &admissionregistrationv1.ValidatingWebhookConfiguration{
			TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "ValidatingWebhookConfiguration"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{
				Name:                    name,
				Rules:                   wh.Rules,
				FailurePolicy:           wh.FailurePolicy,
				MatchPolicy:             wh.MatchPolicy,
				ObjectSelector:          wh.ObjectSelector,
				SideEffects:             wh.SideEffects,
				TimeoutSeconds:          wh.TimeoutSeconds,
				AdmissionReviewVersions: wh.AdmissionReviewVersions,
				ClientConfig:            cc,
				NamespaceSelector:       webhookNamespaceSelector(o.TargetNamespaces),
			}},
		}
	})
}

// GenerateMutatingWebhookConfigurations reproduces OLM v1's
// BundleMutatingWebhookResourceGenerator: as the validating generator, plus
// reinvocationPolicy. Same deviation (no metadata.namespace).
func GenerateMutatingWebhookConfigurations(b *bundle.Bundle, o Options) ([]*yaml.RNode, error) {
	return webhookConfigurations(b, o, v1alpha1.MutatingAdmissionWebhook, func(wh v1alpha1.WebhookDescription, name string, cc admissionregistrationv1.WebhookClientConfig) any {
		return &admissionregistrationv1.MutatingWebhookConfiguration{
			TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "MutatingWebhookConfiguration"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Webhooks: []admissionregistrationv1.MutatingWebhook{{
				Name:                    name,
				Rules:                   wh.Rules,
				FailurePolicy:           wh.FailurePolicy,
				MatchPolicy:             wh.MatchPolicy,
				ObjectSelector:          wh.ObjectSelector,
				SideEffects:             wh.SideEffects,
				TimeoutSeconds:          wh.TimeoutSeconds,
				AdmissionReviewVersions: wh.AdmissionReviewVersions,
				ClientConfig:            cc,
				ReinvocationPolicy:      wh.ReinvocationPolicy,
				NamespaceSelector:       webhookNamespaceSelector(o.TargetNamespaces),
			}},
		}
	})
}

// webhookConfigurations is the loop both admission generators share: one
// configuration per definition of type typ, named generateName without a
// trailing "-", pointing at the deployment's webhook Service, CA injected by
// the certificate provider.
func webhookConfigurations(b *bundle.Bundle, o Options, typ v1alpha1.WebhookAdmissionType,
	build func(wh v1alpha1.WebhookDescription, name string, cc admissionregistrationv1.WebhookClientConfig) any) ([]*yaml.RNode, error) {
	var out []*yaml.RNode
	for _, wh := range csvSpec(b).WebhookDefinitions {
		if wh.Type != typ {
			continue
		}
		certs := certsFor(wh.DeploymentName, o)
		n, err := toRNode(build(wh, strings.TrimSuffix(wh.GenerateName, "-"), webhookClientConfig(wh, certs, o)))
		if err != nil {
			return nil, err
		}
		if err := certs.injectCA(n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// webhookClientConfig points a webhook at the deployment's webhook Service.
// The port defaults to 443 like the CSV schema did on an OLM v0 cluster (OLM
// v1 would write port 0, which the API server rejects).
func webhookClientConfig(wh v1alpha1.WebhookDescription, certs certNames, o Options) admissionregistrationv1.WebhookClientConfig {
	port := webhookPort(wh)
	return admissionregistrationv1.WebhookClientConfig{
		Service: &admissionregistrationv1.ServiceReference{
			Namespace: o.InstallNamespace,
			Name:      certs.Service,
			Path:      wh.WebhookPath,
			Port:      &port,
		},
	}
}

// webhookNamespaceSelector matches the target namespaces by their
// kubernetes.io/metadata.name label; nil (every namespace) in AllNamespaces mode.
func webhookNamespaceSelector(targets []string) *metav1.LabelSelector {
	if len(targets) == 0 || slices.Contains(targets, "") {
		return nil
	}
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key:      "kubernetes.io/metadata.name",
		Operator: metav1.LabelSelectorOpIn,
		Values:   slices.Clone(targets),
	}}}
}

// GenerateWebhookServices reproduces OLM v1's
// BundleDeploymentServiceResourceGenerator: one Service per deployment that
// serves webhooks, named "<deployment>-service" (dots replaced), with one port
// per distinct (containerPort, targetPort) pair, named after the port, sorted
// by port; targetPort is the webhook's targetPort or else the container port.
// The selector is the deployment's selector.matchLabels only.
func GenerateWebhookServices(b *bundle.Bundle, o Options) ([]*yaml.RNode, error) {
	ports := map[string][]corev1.ServicePort{}
	for _, wh := range csvSpec(b).WebhookDefinitions {
		p := webhookServicePort(wh)
		if !slices.Contains(ports[wh.DeploymentName], p) {
			ports[wh.DeploymentName] = append(ports[wh.DeploymentName], p)
		}
	}
	var out []*yaml.RNode
	for _, ds := range csvSpec(b).InstallStrategy.StrategySpec.DeploymentSpecs {
		ps, ok := ports[ds.Name]
		if !ok {
			continue
		}
		slices.SortStableFunc(ps, func(a, b corev1.ServicePort) int {
			return cmp.Or(cmp.Compare(a.Port, b.Port), cmp.Compare(a.TargetPort.IntValue(), b.TargetPort.IntValue()), cmp.Compare(a.TargetPort.String(), b.TargetPort.String()))
		})
		var selector map[string]string
		if ds.Spec.Selector != nil {
			selector = ds.Spec.Selector.MatchLabels
		}
		certs := certsFor(ds.Name, o)
		n, err := toRNode(&corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Name: certs.Service, Namespace: o.InstallNamespace},
			Spec:       corev1.ServiceSpec{Ports: ps, Selector: selector},
		})
		if err != nil {
			return nil, err
		}
		if err := certs.annotateService(n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func webhookServicePort(wh v1alpha1.WebhookDescription) corev1.ServicePort {
	port := webhookPort(wh)
	target := intstr.FromInt32(port)
	if wh.TargetPort != nil {
		target = *wh.TargetPort
	}
	return corev1.ServicePort{Name: strconv.Itoa(int(port)), Port: port, TargetPort: target}
}

// GenerateCertProviderObjects reproduces OLM v1's CertProviderResourceGenerator:
// the certificate provider's own objects for every deployment serving
// webhooks (cert-manager: an Issuer and a Certificate; service-ca: none).
func GenerateCertProviderObjects(b *bundle.Bundle, o Options) ([]*yaml.RNode, error) {
	var deps []string
	for _, wh := range csvSpec(b).WebhookDefinitions {
		if !slices.Contains(deps, wh.DeploymentName) {
			deps = append(deps, wh.DeploymentName)
		}
	}
	slices.Sort(deps)
	var out []*yaml.RNode
	for _, d := range deps {
		objs, err := certsFor(d, o).additionalObjects()
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}
