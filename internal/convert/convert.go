// Package convert turns a registry+v1 bundle into the plain Kubernetes objects
// OLM would create for it. Like OLM v1's renderer it is two lists: validators
// that reject bundles OLM rejects, and generators that each emit one family of
// objects. Deviations from OLM v1 are listed in docs/olm-parity.md.
package convert

import (
	"errors"
	"fmt"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// CertProvider names who issues the serving certificates of webhooks.
type CertProvider string

// The providers are spec.certificateProvider's values, named once, in spec.
const (
	CertManager    CertProvider = spec.CertProviderCertManager
	ServiceCA      CertProvider = spec.CertProviderServiceCA
	NoCertProvider CertProvider = spec.CertProviderNone
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
	// OwnsBundle says the caller hands the bundle over: its CRD nodes
	// become the output's and are changed in place instead of copied. A
	// large bundle's CRDs are most of its memory (sail-operator's: 10 MB of
	// nodes), and a copy kept both alive for the whole render. Only for a
	// bundle nothing reads afterwards but its CSV and the CRDs' group,
	// kind, scope and file (render.Renderer.Render's, which it loaded
	// itself).
	OwnsBundle bool
}

// Validator reports why OLM would refuse a bundle (nothing when it would not).
type Validator func(b *bundle.Bundle) []error

// GenerateFunc emits one family of objects for a validated bundle. Options
// passed to it are already resolved: TargetNamespaces is never empty.
type GenerateFunc func(b *bundle.Bundle, o Options) ([]*yaml.RNode, error)

// Generator is one entry of a Renderer's list.
type Generator struct {
	Generate GenerateFunc
	// CopiesBundleObjects marks generators whose objects are copies of
	// objects the bundle ships (CRDs, other manifests) rather than objects
	// built from the CSV: when both produce one identity, the CSV's wins.
	CopiesBundleObjects bool
}

// Renderer is OLM v1's registry+v1 renderer as a value: its BundleValidator
// and its ResourceGenerators. Adding a behaviour is adding one function and
// one entry; a test fails when a Check*/Generate* function of this package is
// in neither list.
type Renderer struct {
	Validators []Validator
	Generators []Generator
}

// DefaultRenderer is the renderer olm-cmp uses. Validators reproduce OLM
// v1's BundleValidator (the first thirteen, in OLM's order) followed by the
// checks OLM v1 makes elsewhere or that we add to fail early with a clear
// message instead of emitting objects the API server rejects. Generators
// reproduce OLM v1's ResourceGenerators, in its order. Each call returns new
// lists, so no caller can change another's.
func DefaultRenderer() Renderer {
	return Renderer{
		Validators: []Validator{
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
		},
		Generators: []Generator{
			{Generate: GenerateServiceAccounts},
			{Generate: GeneratePermissions},
			{Generate: GenerateClusterPermissions},
			{Generate: GenerateCRDs, CopiesBundleObjects: true},
			{Generate: GenerateAdditionalResources, CopiesBundleObjects: true},
			{Generate: GenerateDeployments},
			{Generate: GenerateValidatingWebhookConfigurations},
			{Generate: GenerateMutatingWebhookConfigurations},
			{Generate: GenerateWebhookServices},
			{Generate: GenerateCertProviderObjects},
		},
	}
}

// Convert is DefaultRenderer().Convert.
func Convert(b *bundle.Bundle, o Options) ([]*yaml.RNode, error) {
	return DefaultRenderer().Convert(b, o)
}

// Validate is DefaultRenderer().Validate.
func Validate(b *bundle.Bundle) error { return DefaultRenderer().Validate(b) }

// Convert validates b (a loaded bundle: its CSV is never nil; render checks
// that once, at the pipeline's boundary), resolves o (target namespaces defaulted from the CSV's
// install modes) and runs every generator. The result is de-duplicated by
// apiVersion group, kind, namespace and name; a generated object wins over an
// object the bundle ships under the same identity (e.g. a ServiceAccount).
// Bundle-shipped objects are copies of the original nodes, never round-tripped
// through typed structs.
func (r Renderer) Convert(b *bundle.Bundle, o Options) ([]*yaml.RNode, error) {
	if err := r.Validate(b); err != nil {
		return nil, err
	}
	resolved, err := ResolveOptions(b, o)
	if err != nil {
		return nil, err
	}
	var out []*yaml.RNode
	var fromBundle []bool
	for _, g := range r.Generators {
		objs, err := g.Generate(b, resolved)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
		for range objs {
			fromBundle = append(fromBundle, g.CopiesBundleObjects)
		}
	}
	return dedupe(out, fromBundle), nil
}

// Validate runs every validator and joins all their errors, so a user sees
// every problem of the bundle at once.
func (r Renderer) Validate(b *bundle.Bundle) error {
	if b == nil || b.CSV == nil {
		return errors.New("bundle has no ClusterServiceVersion in manifests/")
	}
	var errs []error
	for _, v := range r.Validators {
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
		return o, &TargetNamespacesError{err}
	}
	o.TargetNamespaces = targets
	return o, nil
}

// TargetNamespacesError is Options.TargetNamespaces refused by the CSV's
// install modes: the caller knows which field of its own input that is.
type TargetNamespacesError struct{ Err error }

func (e *TargetNamespacesError) Error() string { return e.Err.Error() }
func (e *TargetNamespacesError) Unwrap() error { return e.Err }

// bundleName names a bundle in messages: the CSV name, else the package.
func bundleName(b *bundle.Bundle) string {
	if b.CSV != nil && b.CSV.Name != "" {
		return fmt.Sprintf("%q", b.CSV.Name)
	}
	return fmt.Sprintf("of package %q", b.Package)
}

// dedupe keeps one object per identity. OLM v1 would apply both copies (the
// later silently overwriting the earlier); we keep the one generated from the
// CSV because it is what OLM's own logic asks for, and otherwise the first.
func dedupe(objs []*yaml.RNode, fromBundle []bool) []*yaml.RNode {
	index := map[string]int{}
	out := make([]*yaml.RNode, 0, len(objs))
	outFromBundle := make([]bool, 0, len(objs))
	for i, n := range objs {
		k := bundle.ObjectID(n)
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
