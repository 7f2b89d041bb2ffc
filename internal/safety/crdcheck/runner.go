package crdcheck

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	versionhelper "k8s.io/apimachinery/pkg/version"
	"sigs.k8s.io/crdify/pkg/config"
	"sigs.k8s.io/crdify/pkg/runner"
	"sigs.k8s.io/crdify/pkg/validations"
	"sigs.k8s.io/crdify/pkg/validators/crd"
	"sigs.k8s.io/crdify/pkg/validators/version"
	"sigs.k8s.io/crdify/pkg/validators/version/same"
	"sigs.k8s.io/crdify/pkg/validators/version/served"
)

// crdifyRunner runs crdify's three validators as runner.Runner does, but
// one version, or one pair of served versions, at a time, checking the
// context in between: crdify cannot be interrupted, and its served-version
// validator compares every pair of versions and then subtracts the old
// CRD's issues with nested linear searches (O(V^4) in served versions: 300
// took over ten minutes). Each pair's result depends on those two versions
// only, and a two-version CRD has exactly that pair, so the results are
// crdify's own (a test holds the two together), except that the old CRD's
// issues are subtracted by subtractKnown; internal/safety's limits.go
// (judged before it asks) bounds the cost of each step.
type crdifyRunner struct {
	crd    *crd.Validator
	same   *same.Validator
	served *served.Validator
}

func newCrdifyRunner(cfg *config.Config) (*crdifyRunner, error) {
	registry := runner.DefaultRegistry()
	initial, err := validations.LoadValidationsFromRegistry(registry)
	if err != nil {
		return nil, fmt.Errorf("loading validations from registry: %w", err)
	}
	configured, err := validations.ConfigureValidations(initial, registry, *cfg)
	if err != nil {
		return nil, fmt.Errorf("configuring validations: %w", err)
	}
	vals := slices.Collect(maps.Values(configured))
	props := validations.ComparatorsForValidations[apiextensionsv1.JSONSchemaProps](vals...)
	return &crdifyRunner{
		crd:    crd.New(crd.WithComparators(validations.ComparatorsForValidations[apiextensionsv1.CustomResourceDefinition](vals...)...)),
		same:   same.New(same.WithComparators(props...), same.WithUnhandledEnforcementPolicy(cfg.UnhandledEnforcement)),
		served: served.New(served.WithComparators(props...), served.WithUnhandledEnforcementPolicy(cfg.UnhandledEnforcement), served.WithConversionPolicy(cfg.Conversion)),
	}, nil
}

// run is runner.Runner.Run(old, cur), stopping with ctx's error once ctx is
// done. A panic in crdify (it dereferences a version's schema without
// checking it) becomes an error (internal/safety names the CRD).
func (r *crdifyRunner) run(ctx context.Context, old, cur *apiextensionsv1.CustomResourceDefinition) (res *runner.Results, err error) {
	defer func() {
		if recover() != nil {
			res, err = nil, errors.New("crdify failed on it: check that each of its versions has a valid schema; if they do, please report it")
		}
	}()
	res = &runner.Results{}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res.CRDValidation = r.crd.Validate(old, cur)
	for _, v := range old.Spec.Versions {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		res.SameVersionValidation = append(res.SameVersionValidation, r.same.Validate(withVersions(old, v), withVersions(cur, versionsNamed(cur, v.Name)...))...)
	}
	for _, pair := range servedPairs(cur) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		got := r.served.Validate(withVersions(cur), withVersions(cur, pair[0], pair[1]))
		// The old CRD's issues in the same pair are tolerated; a pair it
		// did not serve has none. Its conversion strategy is cleared: the
		// validator would skip a webhook-converted CRD, and crdify
		// subtracts the old CRD's issues whatever its strategy.
		prev := withVersions(old, versionsNamed(old, pair[0].Name, pair[1].Name)...)
		prev.Spec.Conversion = nil
		if servedBoth(prev) {
			got = subtractKnown(got, r.served.Validate(withVersions(old), prev))
		}
		res.ServedVersionValidation = append(res.ServedVersionValidation, got...)
	}
	return res, nil
}

// subtractKnown drops from cur each error and warning that known has for
// the same version pair, property and rule, as crdify's served-version
// validator does, but with maps instead of nested linear searches, and
// comparing messages as plainMessage writes them: crdify lists values
// (required fields, enum values) in random order, so the same issue is
// often a different string on each side.
func subtractKnown(cur, known []version.VersionedPropertyComparisonResult) []version.VersionedPropertyComparisonResult {
	type key struct{ version, property, rule, msg string }
	seen := map[key]bool{}
	for _, v := range known {
		for _, p := range v.PropertyComparisons {
			for _, r := range p.ComparisonResults {
				for _, m := range slices.Concat(r.Errors, r.Warnings) {
					seen[key{v.Version, p.Property, r.Name, plainMessage(m)}] = true
				}
			}
		}
	}
	out := make([]version.VersionedPropertyComparisonResult, 0, len(cur))
	for _, v := range cur {
		nv := version.VersionedPropertyComparisonResult{Version: v.Version}
		for _, p := range v.PropertyComparisons {
			np := validations.PropertyComparisonResult{Property: p.Property}
			for _, r := range p.ComparisonResults {
				drop := func(m string) bool { return seen[key{v.Version, p.Property, r.Name, plainMessage(m)}] }
				np.ComparisonResults = append(np.ComparisonResults, validations.ComparisonResult{
					Name:     r.Name,
					Errors:   slices.DeleteFunc(slices.Clone(r.Errors), drop),
					Warnings: slices.DeleteFunc(slices.Clone(r.Warnings), drop),
				})
			}
			nv.PropertyComparisons = append(nv.PropertyComparisons, np)
		}
		out = append(out, nv)
	}
	return out
}

// withVersions is c with only the versions given (a shallow copy: the
// validators copy what they change).
func withVersions(c *apiextensionsv1.CustomResourceDefinition, vs ...apiextensionsv1.CustomResourceDefinitionVersion) *apiextensionsv1.CustomResourceDefinition {
	out := *c
	out.Spec.Versions = vs
	return &out
}

func versionsNamed(c *apiextensionsv1.CustomResourceDefinition, names ...string) []apiextensionsv1.CustomResourceDefinitionVersion {
	var out []apiextensionsv1.CustomResourceDefinitionVersion
	for _, v := range c.Spec.Versions {
		if slices.Contains(names, v.Name) {
			out = append(out, v)
		}
	}
	return out
}

func servedBoth(c *apiextensionsv1.CustomResourceDefinition) bool {
	n := 0
	for _, v := range c.Spec.Versions {
		if v.Served {
			n++
		}
	}
	return n == 2
}

// servedPairs are the pairs crdify's served-version validator compares:
// the served versions in Kubernetes' version order, each with every later
// one.
func servedPairs(c *apiextensionsv1.CustomResourceDefinition) [][2]apiextensionsv1.CustomResourceDefinitionVersion {
	var vs []apiextensionsv1.CustomResourceDefinitionVersion
	for _, v := range c.Spec.Versions {
		if v.Served {
			vs = append(vs, v)
		}
	}
	slices.SortFunc(vs, func(a, b apiextensionsv1.CustomResourceDefinitionVersion) int {
		return versionhelper.CompareKubeAwareVersionStrings(a.Name, b.Name)
	})
	var out [][2]apiextensionsv1.CustomResourceDefinitionVersion
	for i := range vs {
		for _, w := range vs[i+1:] {
			out = append(out, [2]apiextensionsv1.CustomResourceDefinitionVersion{vs[i], w})
		}
	}
	return out
}
