// Package convert turns a registry+v1 bundle into the plain Kubernetes objects
// OLM would create for it. Like OLM v1's renderer it is two lists: validators
// that reject bundles OLM rejects, and generators that each emit one family of
// objects. Deviations from OLM v1 are listed in docs/olm-parity.md.
package convert

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// CertProvider names who issues the serving certificates of webhooks.
type CertProvider string

const (
	CertManager    CertProvider = "cert-manager"
	ServiceCA      CertProvider = "service-ca"
	NoCertProvider CertProvider = "none"
)

// Options are the install-time choices OLM takes from a ClusterExtension/Subscription.
type Options struct {
	// InstallNamespace is where the operator runs (required).
	InstallNamespace string
	// TargetNamespaces are the watched namespaces; [""] means all namespaces.
	// Use TargetNamespaces() to default and validate them against the CSV's install modes.
	TargetNamespaces []string
	// CertProvider issues webhook serving certificates; "" means none.
	CertProvider CertProvider
	// DeploymentConfig is OLM's SubscriptionConfig applied to every Deployment.
	DeploymentConfig *v1alpha1.SubscriptionConfig
}

// Generator emits one family of objects for a validated bundle. Options passed
// to a generator are already resolved: TargetNamespaces is never empty.
type Generator func(b *bundle.Bundle, o Options) ([]*yaml.RNode, error)

// Validators reproduce OLM v1's BundleValidator (the first thirteen, in OLM's
// order) followed by the checks OLM v1 makes elsewhere or that we add to fail
// early with a clear message instead of emitting objects the API server rejects.
// A test asserts every Check* function of this package is listed.
var Validators = []func(*bundle.Bundle) []error{
	CheckDeploymentSpecUniqueness,
	CheckDeploymentNameIsDNS1123SubDomain,
	CheckCRDResourceUniqueness,
	CheckOwnedCRDExistence,
	CheckPackageNameNotEmpty,
	CheckConversionWebhookSupport,
	CheckWebhookDeploymentReferentialIntegrity,
	CheckWebhookNameUniqueness,
	CheckWebhookNameIsDNS1123SubDomain,
	CheckConversionWebhookCRDReferenceUniqueness,
	CheckConversionWebhooksReferenceOwnedCRDs,
	CheckWebhookRules,
	CheckObjectSupport,
	// Not in OLM v1's BundleValidator:
	CheckNoAPIServiceDefinitions,
	CheckInstallStrategy,
	CheckAdmissionWebhookFields,
	CheckCRDVersion,
}

// Generators reproduce OLM v1's ResourceGenerators, in its order. A test
// asserts every Generate* function of this package is listed.
var Generators = []Generator{
	GenerateServiceAccounts,
	GeneratePermissions,
	GenerateClusterPermissions,
	GenerateCRDs,
	GenerateAdditionalResources,
	GenerateDeployments,
	GenerateValidatingWebhookConfigurations,
	GenerateMutatingWebhookConfigurations,
	GenerateWebhookServices,
	GenerateCertProviderObjects,
}

// Convert validates b, resolves o (target namespaces defaulted from the CSV's
// install modes) and runs every generator. The result is de-duplicated by
// apiVersion group, kind, namespace and name; a generated object wins over an
// object the bundle ships under the same identity (e.g. a ServiceAccount).
// Bundle-shipped objects are copies of the original nodes, never round-tripped
// through typed structs.
func Convert(b *bundle.Bundle, o Options) ([]*yaml.RNode, error) {
	if b == nil || b.CSV == nil {
		return nil, errors.New("bundle has no ClusterServiceVersion in manifests/")
	}
	if err := Validate(b); err != nil {
		return nil, err
	}
	resolved, err := ResolveOptions(b, o)
	if err != nil {
		return nil, err
	}
	var out []*yaml.RNode
	var fromBundle []bool
	for _, gen := range Generators {
		objs, err := gen(b, resolved)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
		copies := copiesBundleObjects(gen)
		for range objs {
			fromBundle = append(fromBundle, copies)
		}
	}
	return dedupe(out, fromBundle), nil
}

// Validate runs every validator and joins all their errors, so a user sees
// every problem of the bundle at once.
func Validate(b *bundle.Bundle) error {
	if b == nil || b.CSV == nil {
		return errors.New("bundle has no ClusterServiceVersion in manifests/")
	}
	var errs []error
	for _, v := range Validators {
		errs = append(errs, v(b)...)
	}
	if len(errs) > 0 {
		return fmt.Errorf("bundle %s is not installable: %w", bundleName(b), errors.Join(errs...))
	}
	return nil
}

// ResolveOptions checks o and fills the target namespaces in from the CSV's
// install modes, the way OLM v1's renderer defaults them.
func ResolveOptions(b *bundle.Bundle, o Options) (Options, error) {
	if b == nil || b.CSV == nil {
		return o, errors.New("bundle has no ClusterServiceVersion in manifests/")
	}
	if o.InstallNamespace == "" {
		return o, errors.New("install namespace is required")
	}
	switch o.CertProvider {
	case "", NoCertProvider, CertManager, ServiceCA:
	default:
		return o, fmt.Errorf("unknown certificate provider %q: use %q, %q or %q", o.CertProvider, CertManager, ServiceCA, NoCertProvider)
	}
	targets, err := TargetNamespaces(b.CSV, o.InstallNamespace, o.TargetNamespaces)
	if err != nil {
		return o, err
	}
	o.TargetNamespaces = targets
	return o, nil
}

// bundleName names a bundle in messages: the CSV name, else the package.
func bundleName(b *bundle.Bundle) string {
	if b.CSV != nil && b.CSV.Name != "" {
		return fmt.Sprintf("%q", b.CSV.Name)
	}
	return fmt.Sprintf("of package %q", b.Package)
}

// objectKey identifies an object the way the API server does.
type objectKey struct{ group, kind, namespace, name string }

func keyOf(n *yaml.RNode) objectKey {
	group, _, found := strings.Cut(n.GetApiVersion(), "/")
	if !found {
		group = "" // core group: "v1"
	}
	return objectKey{group: group, kind: n.GetKind(), namespace: n.GetNamespace(), name: n.GetName()}
}

// bundleCopies names the generators whose objects are copies of objects the
// bundle ships (as opposed to objects built from the CSV).
var bundleCopies = []Generator{GenerateCRDs, GenerateAdditionalResources}

func copiesBundleObjects(g Generator) bool {
	p := reflect.ValueOf(g).Pointer()
	for _, c := range bundleCopies {
		if reflect.ValueOf(c).Pointer() == p {
			return true
		}
	}
	return false
}

// dedupe keeps one object per identity. OLM v1 would apply both copies (the
// later silently overwriting the earlier); we keep the one generated from the
// CSV because it is what OLM's own logic asks for, and otherwise the first.
func dedupe(objs []*yaml.RNode, fromBundle []bool) []*yaml.RNode {
	index := map[objectKey]int{}
	out := make([]*yaml.RNode, 0, len(objs))
	outFromBundle := make([]bool, 0, len(objs))
	for i, n := range objs {
		k := keyOf(n)
		j, seen := index[k]
		switch {
		case !seen:
			index[k] = len(out)
			out = append(out, n)
			outFromBundle = append(outFromBundle, fromBundle[i])
		case outFromBundle[j] && !fromBundle[i]:
			out[j], outFromBundle[j] = n, false
		}
	}
	return out
}
