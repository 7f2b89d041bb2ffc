package convert

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// Each validator reproduces one of OLM v1's checks (rukpak/render/registryv1/
// validators) unless its comment says otherwise. Messages keep OLM's wording
// and add where the problem is: the CSV file and field, or the object's file.

// csvSpec returns the CSV spec (a loaded bundle always has a CSV).
func csvSpec(b *bundle.Bundle) *v1alpha1.ClusterServiceVersionSpec { return &b.CSV.Spec }

// csvErr prefixes a CSV problem with the CSV's file and the field path.
func csvErr(b *bundle.Bundle, field, format string, a ...any) error {
	file := "ClusterServiceVersion"
	if b != nil && b.CSVFile != "" {
		file = b.CSVFile
	}
	return fmt.Errorf("%s: %s: %s", file, field, fmt.Sprintf(format, a...))
}

const deploymentsField = "spec.install.spec.deployments"

// CheckDeploymentSpecUniqueness: strategy deployment names are unique.
func CheckDeploymentSpecUniqueness(b *bundle.Bundle) []error {
	seen := map[string]bool{}
	dups := map[string]bool{}
	for _, d := range csvSpec(b).InstallStrategy.StrategySpec.DeploymentSpecs {
		if seen[d.Name] {
			dups[d.Name] = true
		}
		seen[d.Name] = true
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(dups)) {
		errs = append(errs, csvErr(b, deploymentsField, "cluster service version contains duplicate strategy deployment spec '%s'", name))
	}
	return errs
}

// CheckDeploymentNameIsDNS1123SubDomain: deployment names are valid object names.
func CheckDeploymentNameIsDNS1123SubDomain(b *bundle.Bundle) []error {
	var errs []error
	for i, d := range csvSpec(b).InstallStrategy.StrategySpec.DeploymentSpecs {
		if msgs := validation.IsDNS1123Subdomain(d.Name); len(msgs) > 0 {
			slices.Sort(msgs)
			errs = append(errs, csvErr(b, fmt.Sprintf("%s[%d].name", deploymentsField, i), "invalid cluster service version strategy deployment name '%s': %s", d.Name, strings.Join(msgs, ", ")))
		}
	}
	return errs
}

// CheckCRDResourceUniqueness: the bundle ships each CRD once.
func CheckCRDResourceUniqueness(b *bundle.Bundle) []error {
	first := map[string]string{}
	var errs []error
	for _, crd := range b.CRDs {
		name := objName(crd)
		if f, ok := first[name]; ok {
			errs = append(errs, fmt.Errorf("%s: bundle contains duplicate custom resource definition '%s' (also in %s)", crd.File, name, f))
			continue
		}
		first[name] = crd.File
	}
	return errs
}

// CheckOwnedCRDExistence: every CRD in spec.customresourcedefinitions.owned is shipped.
func CheckOwnedCRDExistence(b *bundle.Bundle) []error {
	have := map[string]bool{}
	for _, crd := range b.CRDs {
		have[objName(crd)] = true
	}
	missing := map[string]bool{}
	for _, o := range csvSpec(b).CustomResourceDefinitions.Owned {
		if !have[o.Name] {
			missing[o.Name] = true
		}
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(missing)) {
		errs = append(errs, csvErr(b, "spec.customresourcedefinitions.owned", "cluster service definition references owned custom resource definition '%s' not found in bundle", name))
	}
	return errs
}

// CheckPackageNameNotEmpty: metadata/annotations.yaml names the package.
func CheckPackageNameNotEmpty(b *bundle.Bundle) []error {
	if b.Package == "" {
		return []error{errors.New("metadata/annotations.yaml: operators.operatorframework.io.bundle.package.v1: package name is empty")}
	}
	return nil
}

// CheckConversionWebhookSupport: conversion webhooks only for bundles whose
// only install mode is AllNamespaces (OLM v0 parity: a CRD is cluster-wide).
func CheckConversionWebhookSupport(b *bundle.Bundle) []error {
	modes := supportedModes(&v1alpha1.ClusterServiceVersion{Spec: *csvSpec(b)})
	if len(modes) == 1 && modes[v1alpha1.InstallModeTypeAllNamespaces] {
		return nil
	}
	var errs []error
	for i, wh := range csvSpec(b).WebhookDefinitions {
		if wh.Type == v1alpha1.ConversionWebhook {
			errs = append(errs, csvErr(b, fmt.Sprintf("spec.webhookdefinitions[%d]", i), "bundle contains conversion webhook %q and supports install modes %s - conversion webhooks are only supported for bundles that only support AllNamespaces install mode", wh.GenerateName, modeWords(modes)))
		}
	}
	return errs
}

// CheckWebhookDeploymentReferentialIntegrity: webhooks name an existing deployment.
func CheckWebhookDeploymentReferentialIntegrity(b *bundle.Bundle) []error {
	deps := map[string]bool{}
	for _, d := range csvSpec(b).InstallStrategy.StrategySpec.DeploymentSpecs {
		deps[d.Name] = true
	}
	var errs []error
	for i, wh := range csvSpec(b).WebhookDefinitions {
		if !deps[wh.DeploymentName] {
			errs = append(errs, csvErr(b, fmt.Sprintf("spec.webhookdefinitions[%d].deploymentName", i), "webhook of type '%s' with name '%s' references non-existent deployment '%s'", wh.Type, wh.GenerateName, wh.DeploymentName))
		}
	}
	return errs
}

// CheckWebhookNameUniqueness: webhook names are unique per webhook type.
func CheckWebhookNameUniqueness(b *bundle.Bundle) []error {
	type key struct {
		t    v1alpha1.WebhookAdmissionType
		name string
	}
	seen := map[key]bool{}
	reported := map[key]bool{}
	var errs []error
	for i, wh := range csvSpec(b).WebhookDefinitions {
		k := key{wh.Type, wh.GenerateName}
		if seen[k] && !reported[k] {
			reported[k] = true
			errs = append(errs, csvErr(b, fmt.Sprintf("spec.webhookdefinitions[%d].generateName", i), "duplicate webhook '%s' of type '%s'", wh.GenerateName, wh.Type))
		}
		seen[k] = true
	}
	return errs
}

// CheckWebhookNameIsDNS1123SubDomain: webhook names are valid object names.
func CheckWebhookNameIsDNS1123SubDomain(b *bundle.Bundle) []error {
	var errs []error
	for i, wh := range csvSpec(b).WebhookDefinitions {
		if msgs := validation.IsDNS1123Subdomain(wh.GenerateName); len(msgs) > 0 {
			slices.Sort(msgs)
			errs = append(errs, csvErr(b, fmt.Sprintf("spec.webhookdefinitions[%d].generateName", i), "webhook of type '%s' has invalid name '%s': %s", wh.Type, wh.GenerateName, strings.Join(msgs, ",")))
		}
	}
	return errs
}

// CheckConversionWebhookCRDReferenceUniqueness: one conversion webhook per CRD.
func CheckConversionWebhookCRDReferenceUniqueness(b *bundle.Bundle) []error {
	byCRD := map[string][]string{}
	for _, wh := range csvSpec(b).WebhookDefinitions {
		if wh.Type != v1alpha1.ConversionWebhook {
			continue
		}
		for _, crd := range wh.ConversionCRDs {
			byCRD[crd] = append(byCRD[crd], wh.GenerateName)
		}
	}
	var errs []error
	for _, crd := range slices.Sorted(maps.Keys(byCRD)) {
		if whs := byCRD[crd]; len(whs) > 1 {
			slices.Sort(whs)
			errs = append(errs, csvErr(b, "spec.webhookdefinitions[].conversionCRDs", "conversion webhooks [%s] reference same custom resource definition '%s'", strings.Join(whs, ","), crd))
		}
	}
	return errs
}

// CheckConversionWebhooksReferenceOwnedCRDs: conversion webhooks convert owned CRDs only.
func CheckConversionWebhooksReferenceOwnedCRDs(b *bundle.Bundle) []error {
	owned := map[string]bool{}
	for _, o := range csvSpec(b).CustomResourceDefinitions.Owned {
		owned[o.Name] = true
	}
	var errs []error
	for i, wh := range csvSpec(b).WebhookDefinitions {
		if wh.Type != v1alpha1.ConversionWebhook {
			continue
		}
		for j, crd := range wh.ConversionCRDs {
			if !owned[crd] {
				errs = append(errs, csvErr(b, fmt.Sprintf("spec.webhookdefinitions[%d].conversionCRDs[%d]", i, j), "conversion webhook '%s' references custom resource definition '%s' not owned bundle", wh.GenerateName, crd))
			}
		}
	}
	return errs
}

// forbiddenRuleGroups and forbiddenAdmissionResources are OLM v1's webhook rule
// limits: a webhook on every group, on OLM's own API or on webhook
// configurations could lock the cluster out of removing it.
var (
	forbiddenRuleGroups         = []string{"*", "olm.operatorframework.io"}
	forbiddenAdmissionResources = []string{"*", "mutatingwebhookconfiguration", "mutatingwebhookconfigurations", "validatingwebhookconfiguration", "validatingwebhookconfigurations"}
)

// CheckWebhookRules: admission webhook rules stay off forbidden groups/resources.
func CheckWebhookRules(b *bundle.Bundle) []error {
	var errs []error
	for i, wh := range csvSpec(b).WebhookDefinitions {
		if wh.Type == v1alpha1.ConversionWebhook {
			continue // rules are not used for conversion webhooks
		}
		for j, rule := range wh.Rules {
			field := fmt.Sprintf("spec.webhookdefinitions[%d].rules[%d]", i, j)
			for _, g := range rule.APIGroups {
				if slices.Contains(forbiddenRuleGroups, g) {
					errs = append(errs, csvErr(b, field, "webhook %q contains forbidden rule: admission webhook rules cannot reference API group %q", wh.GenerateName, g))
				}
				if g != "admissionregistration.k8s.io" {
					continue
				}
				for _, r := range rule.Resources {
					if slices.Contains(forbiddenAdmissionResources, strings.ToLower(r)) {
						errs = append(errs, csvErr(b, field, "webhook %q contains forbidden rule: admission webhook rules cannot reference resource %q for API group %q", wh.GenerateName, r, g))
					}
				}
			}
		}
	}
	return errs
}

// CheckObjectSupport: every non-CSV, non-CRD object has a kind registry+v1
// allows (operator-registry's supported resource list).
func CheckObjectSupport(b *bundle.Bundle) []error {
	var errs []error
	for _, o := range b.Others {
		if o.RNode == nil {
			errs = append(errs, fmt.Errorf("%s: empty object", o.File))
			continue
		}
		kind := o.GetKind()
		if kind == "" || o.GetName() == "" {
			errs = append(errs, fmt.Errorf("%s: object has no kind or metadata.name (kind %q, name %q)", o.File, kind, o.GetName()))
			continue
		}
		if _, ok := supportedKinds[kind]; !ok {
			errs = append(errs, fmt.Errorf("%s: unsupported resource %q with kind %q: registry+v1 bundles may only ship %s", o.File, o.GetName(), kind, strings.Join(slices.Sorted(maps.Keys(supportedKinds)), ", ")))
		}
	}
	return errs
}

// CheckNoAPIServiceDefinitions reproduces the rejection OLM v1 makes before
// rendering (applier/provider.go): APIServices are not supported.
func CheckNoAPIServiceDefinitions(b *bundle.Bundle) []error {
	var errs []error
	for i, a := range csvSpec(b).APIServiceDefinitions.Owned {
		errs = append(errs, csvErr(b, fmt.Sprintf("spec.apiservicedefinitions.owned[%d]", i), "APIService %s.%s (%s) is not supported: OLM v1 cannot install bundles that own API services, and neither can olm-cmp", a.Version, a.Group, a.Kind))
	}
	return errs
}

// CheckInstallStrategy is ours (OLM v0 checks the strategy name; OLM v1 renders
// nothing): a CSV must install at least one Deployment, each with containers.
func CheckInstallStrategy(b *bundle.Bundle) []error {
	s := csvSpec(b).InstallStrategy
	if s.StrategyName != "" && s.StrategyName != v1alpha1.InstallStrategyNameDeployment {
		return []error{csvErr(b, "spec.install.strategy", "unsupported install strategy %q: only %q is supported", s.StrategyName, v1alpha1.InstallStrategyNameDeployment)}
	}
	deps := s.StrategySpec.DeploymentSpecs
	if len(deps) == 0 {
		return []error{csvErr(b, deploymentsField, "no deployments: the CSV's install strategy must list at least one deployment")}
	}
	var errs []error
	for i, d := range deps {
		if len(d.Spec.Template.Spec.Containers) == 0 {
			errs = append(errs, csvErr(b, fmt.Sprintf("%s[%d].spec.template.spec.containers", deploymentsField, i), "deployment %q has no containers", d.Name))
		}
	}
	return errs
}

// CheckAdmissionWebhookFields is ours: admissionregistration.k8s.io/v1 requires
// sideEffects and admissionReviewVersions, so a definition without them would
// render a webhook configuration the API server rejects.
func CheckAdmissionWebhookFields(b *bundle.Bundle) []error {
	var errs []error
	for i, wh := range csvSpec(b).WebhookDefinitions {
		field := fmt.Sprintf("spec.webhookdefinitions[%d]", i)
		switch wh.Type {
		case v1alpha1.ValidatingAdmissionWebhook, v1alpha1.MutatingAdmissionWebhook:
			if wh.SideEffects == nil {
				errs = append(errs, csvErr(b, field+".sideEffects", "webhook %q has no sideEffects (required by admissionregistration.k8s.io/v1: None or NoneOnDryRun)", wh.GenerateName))
			}
			if len(wh.AdmissionReviewVersions) == 0 {
				errs = append(errs, csvErr(b, field+".admissionReviewVersions", "webhook %q has no admissionReviewVersions (required by admissionregistration.k8s.io/v1, e.g. [v1])", wh.GenerateName))
			}
		case v1alpha1.ConversionWebhook:
			if len(wh.AdmissionReviewVersions) == 0 {
				errs = append(errs, csvErr(b, field+".admissionReviewVersions", "conversion webhook %q has no admissionReviewVersions (they become the CRD's conversionReviewVersions, which apiextensions.k8s.io/v1 requires)", wh.GenerateName))
			}
		default:
			errs = append(errs, csvErr(b, field+".type", "webhook %q has unknown type %q (want ValidatingAdmissionWebhook, MutatingAdmissionWebhook or ConversionWebhook)", wh.GenerateName, wh.Type))
		}
	}
	return errs
}

// CheckCRDVersion is ours: OLM v1 decodes apiextensions.k8s.io/v1beta1 CRDs into
// the v1 type and silently drops their schema; API servers since 1.22 do not
// serve v1beta1. We refuse instead of emitting a CRD that cannot be applied.
func CheckCRDVersion(b *bundle.Bundle) []error {
	var errs []error
	for _, crd := range b.CRDs {
		if crd.RNode == nil {
			errs = append(errs, fmt.Errorf("%s: empty CustomResourceDefinition", crd.File))
			continue
		}
		if v := crd.GetApiVersion(); v != "apiextensions.k8s.io/v1" {
			errs = append(errs, fmt.Errorf("%s: CustomResourceDefinition %q has apiVersion %q: only apiextensions.k8s.io/v1 is supported (convert the CRD, e.g. with controller-gen crd:crdVersions=v1)", crd.File, objName(crd), v))
		}
		if objName(crd) == "" {
			errs = append(errs, fmt.Errorf("%s: CustomResourceDefinition has no metadata.name", crd.File))
		}
	}
	return errs
}

// objName is the object's name, "" for an empty object.
func objName(o bundle.Object) string {
	if o.RNode == nil {
		return ""
	}
	return o.GetName()
}
