package convert

import (
	"fmt"
	"slices"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/yamlsafe"
)

// GenerateCRDs reproduces OLM v1's BundleCRDGenerator. CRDs are copies of the
// bundle's nodes (so `{}`, key order and subresources survive; `status` and a
// stray metadata.namespace are dropped). A CRD named in a conversion webhook's
// conversionCRDs gets, as in OLM v0's webhook.go:
//   - spec.conversion replaced by a Webhook strategy calling the deployment's
//     webhook Service in the install namespace, at webhookPath (default "/")
//     and containerPort (default 443), with conversionReviewVersions taken
//     from admissionReviewVersions;
//   - the certificate provider's CA-injection annotation.
//
// preserveUnknownFields: true is an error, since the API server would never
// call the webhook. Under o.OwnsBundle the bundle's own nodes are changed
// and returned.
func GenerateCRDs(b *bundle.Bundle, o Options) ([]*yaml.RNode, error) {
	conv, err := conversionWebhooks(b)
	if err != nil {
		return nil, err
	}
	out := make([]*yaml.RNode, 0, len(b.CRDs))
	for _, crd := range b.CRDs {
		if crd.RNode == nil {
			return nil, fmt.Errorf("%s: empty CustomResourceDefinition", crd.File)
		}
		n := crd.RNode
		if !o.OwnsBundle {
			n = yaml.NewRNode(yamlsafe.CopyTree(crd.YNode())) // the bundle is shared: changes go to a copy
		}
		if err := dropClusterScopedFields(n); err != nil {
			return nil, fmt.Errorf("%s: %w", crd.File, err)
		}
		if wh, ok := conv[n.GetName()]; ok {
			if err := wireConversionWebhook(n, wh, o); err != nil {
				return nil, fmt.Errorf("%s: CustomResourceDefinition %q: %w", crd.File, n.GetName(), err)
			}
		}
		out = append(out, n)
	}
	return out, nil
}

// conversionWebhooks maps CRD names to the conversion webhook that serves them.
func conversionWebhooks(b *bundle.Bundle) (map[string]v1alpha1.WebhookDescription, error) {
	m := map[string]v1alpha1.WebhookDescription{}
	for _, wh := range csvSpec(b).WebhookDefinitions {
		if wh.Type != v1alpha1.ConversionWebhook {
			continue
		}
		for _, name := range wh.ConversionCRDs {
			if _, dup := m[name]; dup {
				return nil, fmt.Errorf("custom resource definition '%s' is referenced by multiple conversion webhook definitions", name)
			}
			m[name] = wh
		}
	}
	return m, nil
}

func wireConversionWebhook(n *yaml.RNode, wh v1alpha1.WebhookDescription, o Options) error {
	pu, err := n.Pipe(yaml.Lookup("spec", "preserveUnknownFields"))
	if err != nil {
		return err
	}
	if pu != nil && yaml.GetValue(pu) == "true" {
		return fmt.Errorf("spec.preserveUnknownFields must be false to let the API server call conversion webhook %q", wh.GenerateName)
	}
	path := "/"
	if wh.WebhookPath != nil {
		path = *wh.WebhookPath
	}
	port := webhookPort(wh)
	certs := certsFor(wh.DeploymentName, o)
	conversion, err := toRNode(&apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig: &apiextensionsv1.WebhookClientConfig{
				Service: &apiextensionsv1.ServiceReference{
					Namespace: o.InstallNamespace,
					Name:      certs.Service,
					Path:      &path,
					Port:      &port,
				},
			},
			ConversionReviewVersions: slices.Clone(wh.AdmissionReviewVersions),
		},
	})
	if err != nil {
		return err
	}
	if err := n.SetMapField(conversion, "spec", "conversion"); err != nil {
		return err
	}
	return certs.injectCA(n)
}

// dropClusterScopedFields removes what must not be applied on a cluster-scoped
// object: metadata.namespace (deviation: OLM keeps it) and, for CRDs, status.
func dropClusterScopedFields(n *yaml.RNode) error {
	if err := n.SetNamespace(""); err != nil {
		return err
	}
	if n.GetKind() == "CustomResourceDefinition" {
		return n.PipeE(yaml.Clear("status"))
	}
	return nil
}

// setStringNamespace sets metadata.namespace as a string that YAML 1.1 reads
// as one. kyaml's SetNamespace wrote "y" or "123" plain, so the repo-server,
// a YAML 1.1 reader, got a boolean or a number (found by the validate step).
// The file's key stays where it was.
func setStringNamespace(n *yaml.RNode, ns string) error {
	old, err := n.Pipe(yaml.Lookup(yaml.MetadataField, yaml.NamespaceField))
	if err != nil {
		return err
	}
	if old == nil || old.YNode().Kind != yaml.ScalarNode {
		return n.PipeE(yaml.SetK8sNamespace(ns))
	}
	v := yaml.NewStringRNode(ns).YNode()
	if yaml.IsYaml1_1NonString(v) {
		v.Style = yaml.DoubleQuotedStyle // as kyaml's FieldSetter does for a new field
	}
	*old.YNode() = *v
	return nil
}

// webhookPort is the webhook's containerPort, defaulted to 443 as the CSV
// CRD's schema default did on an OLM v0 cluster (a file carries no default).
func webhookPort(wh v1alpha1.WebhookDescription) int32 {
	if wh.ContainerPort > 0 {
		return wh.ContainerPort
	}
	return 443
}

// GenerateAdditionalResources reproduces OLM v1's
// BundleAdditionalResourcesGenerator: the bundle's other objects, copied as
// shipped, namespaced ones moved into the install namespace. Deviations:
// cluster-scoped ones lose metadata.namespace, and VerticalPodAutoscaler is
// treated as namespaced (operator-registry lists it as cluster-scoped).
func GenerateAdditionalResources(b *bundle.Bundle, o Options) ([]*yaml.RNode, error) {
	out := make([]*yaml.RNode, 0, len(b.Others))
	for _, obj := range b.Others {
		if obj.RNode == nil {
			return nil, fmt.Errorf("%s: empty object", obj.File)
		}
		namespaced, ok := supportedKinds[obj.GetKind()]
		if !ok {
			return nil, fmt.Errorf("%s: bundle contains unsupported resource: Name: %v, Kind: %v", obj.File, obj.GetName(), obj.GetKind())
		}
		n := obj.Copy()
		var err error
		if namespaced {
			err = setStringNamespace(n, o.InstallNamespace)
		} else {
			err = dropClusterScopedFields(n)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %s %q: %w", obj.File, obj.GetKind(), obj.GetName(), err)
		}
		out = append(out, n)
	}
	return out, nil
}
