// Package crdcheck makes, in olm-cmp-check, the CRD upgrade-safety
// comparison of internal/safety: sigs.k8s.io/crdify as OLM v1 configures
// it, run a version or a pair of versions at a time (runner.go), its
// results turned into findings in plain words (findings.go). Linked into
// olm-cmp, crdify and what it pulls (go-cmp, whose package initialisation
// compiles regular expressions, yaml.v2, json-patch) were paid by every
// process, `olm-cmp version` included (internal/checkproc says why they
// run in a second process).
//
// Its one operation is internal/safety/crdop's: it takes two CRDs as JSON
// and returns a crdop.Verdict. It is a pure function of its input, so
// internal/safety caches the verdicts by content and a warm `upgrade` or
// `diff` never starts olm-cmp-check.
package crdcheck

import (
	"context"
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/crdify/pkg/config"
	"sigs.k8s.io/crdify/pkg/validations/property"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/safety/crdop"
)

// Handlers returns crdcheck's operation by name, for internal/checks.
func Handlers() map[string]checkproc.Handler {
	return map[string]checkproc.Handler{
		crdop.Upgrade: func(ctx context.Context, in json.RawMessage) (any, error) {
			var pair crdop.Input
			if err := json.Unmarshal(in, &pair); err != nil {
				return nil, notAnInput(err)
			}
			old, cur := &apiextensionsv1.CustomResourceDefinition{}, &apiextensionsv1.CustomResourceDefinition{}
			if err := json.Unmarshal(pair.Old, old); err != nil {
				return nil, notAnInput(err)
			}
			if err := json.Unmarshal(pair.New, cur); err != nil {
				return nil, notAnInput(err)
			}
			old.Status.StoredVersions = pair.StoredVersions
			fs, err := Compare(ctx, old, cur)
			if err != nil || len(fs) == 0 {
				return crdop.Verdict{}, err // no findings: written null, the one form olm-cmp reads as none
			}
			return crdop.Verdict{Findings: fs}, nil
		},
	}
}

// notAnInput is the error of an input olm-cmp would not have sent
// (another build's).
func notAnInput(err error) error {
	return fmt.Errorf("%s got an input it cannot read (%v): is it the same build as olm-cmp?", checkproc.Executable, err)
}

// Compare judges the upgrade of old, the CRD the cluster runs (its
// status.storedVersions what the cluster may have stored), to cur. Every
// version of both has a schema (internal/safety reports one without
// before asking), and both are within internal/safety's limits, which
// bound crdify's time and memory. It stops with ctx's error once ctx is
// done.
func Compare(ctx context.Context, old, cur *apiextensionsv1.CustomResourceDefinition) ([]crdop.Finding, error) {
	r, err := newCrdifyRunner(crdifyConfig())
	if err != nil {
		return nil, fmt.Errorf("configuring the CRD upgrade-safety checks: %w", err)
	}
	res, err := r.run(ctx, old, cur)
	if err != nil {
		return nil, err
	}
	return findings(old, cur, res), nil
}

// crdifyConfig is OLM v1's configuration of crdify (operator-controller's
// CRD upgrade-safety preflight): every validation at its strictest default,
// except that description changes are ignored and new enum values allowed;
// CRDs converted by a webhook skip the comparisons across served versions
// (the webhook converts between them); any change no validation handles is
// an error. crdify itself tolerates problems the old CRD already had across
// its served versions.
func crdifyConfig() *config.Config {
	return &config.Config{
		Conversion:           config.ConversionPolicyIgnore,
		UnhandledEnforcement: config.EnforcementPolicyError,
		Validations: []config.ValidationConfig{
			{Name: "description", Enforcement: config.EnforcementPolicyNone},
			{
				Name:          "enum",
				Enforcement:   config.EnforcementPolicyError,
				Configuration: map[string]any{"additionPolicy": property.AdditionPolicyAllow},
			},
		},
	}
}
