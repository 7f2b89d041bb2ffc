package render

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/requirements"
)

// checkRequirements runs the requirements report on the final objects of a
// render: findings not accepted become warnings, or with spec.strict one
// error listing them all.
func checkRequirements(req Request, b *bundle.Bundle, objs []*yaml.RNode) ([]requirements.Finding, []string, error) {
	report := requirements.Report(requirements.Input{Bundle: b, Spec: req.Spec, Objects: objs, APIVersions: req.APIVersions})
	pending := requirements.Pending(report)
	lines := make([]string, len(pending))
	for i, f := range pending {
		lines[i] = f.Line()
	}
	if req.Spec.Strict && len(pending) > 0 {
		return nil, nil, fmt.Errorf("strict: %d requirement(s) not met; fix each, or state the cluster's APIs in spec.clusterAPIs, or accept it in spec.accept:\n  %s",
			len(pending), strings.Join(lines, "\n  "))
	}
	return report, lines, nil
}
