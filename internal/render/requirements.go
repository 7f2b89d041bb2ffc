package render

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/requirements"
)

// checkRequirements runs the requirements report on the final objects of a
// render, and judges what did nothing: findings not accepted and spec
// entries that matched nothing (unmatched, from the steps, and the accept
// entries that accept no finding) become warnings, the entries first, or
// with spec.strict one error listing them all, an entry per line.
func checkRequirements(req Request, b *bundle.Bundle, objs []*yaml.RNode, unmatched []string) ([]requirements.Finding, []string, error) {
	in := requirements.Input{Bundle: b, Spec: req.Spec, Objects: objs, APIVersions: req.APIVersions}
	report := requirements.Report(in)
	unmatched = append(slices.Clone(unmatched), requirements.UnmatchedAccept(in, report)...)
	pending := requirements.Pending(report)
	lines := make([]string, len(pending))
	for i, f := range pending {
		lines[i] = f.Line()
	}
	if req.Spec.Strict && len(unmatched)+len(pending) > 0 {
		var errs []string
		for _, u := range unmatched {
			errs = append(errs, "strict: "+u)
		}
		if len(pending) > 0 {
			errs = append(errs, fmt.Sprintf("strict: %d requirement(s) not met; fix each, or state the cluster's APIs in spec.clusterAPIs, or accept it in spec.accept:\n  %s",
				len(pending), strings.Join(lines, "\n  ")))
		}
		return nil, nil, errors.New(strings.Join(errs, "\n"))
	}
	return report, append(unmatched, lines...), nil
}
