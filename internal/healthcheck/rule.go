// Package healthcheck writes Argo CD health checks (Lua, for argocd-cm's
// resource.customizations.health.<group>_<Kind> keys) for the custom resources of an operator,
// from what each CRD's storage-version status schema offers: a conditions list, a phase (or
// state) string, status.observedGeneration. The rule the scripts apply is one shared Lua body
// (lua/_generic.lua); the schema decides only which signals a kind's script reads (Decide), so
// every generated check judges alike and the rule is documented once (docs/plugin.md,
// "Generated health checks").
//
// It reads CRDs, never bundles or specs: the caller (cmd/olm-cmp health-checks) renders the
// specs and hands over each bundle's CSV and CRDs (Plan).
package healthcheck

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Phase words, matched whole (Argo CD's scripts have no string library). A phase's own values
// come from its schema enum when it has one; otherwise the script knows these words in three
// casings (Running, running, RUNNING).
var (
	healthyWords  = []string{"Running", "Ready", "Succeeded", "Healthy", "Available", "Deployed", "Complete", "Completed"}
	degradedWords = []string{"Failed", "Failure", "Error", "Errored", "Degraded"}
)

// maxEnum bounds the phase values copied into a script: a longer enum is read as no enum (the
// words above in their usual casings).
const maxEnum = 64

// Rule is what a kind's script reads, decided from its CRD's status schema.
type Rule struct {
	Group, Kind, Version string // the storage version's group, kind and name
	CRD                  string // the CRD's metadata.name

	// Conditions: status.conditions is a list of objects with type and status.
	Conditions bool
	// ConditionGeneration: those conditions carry observedGeneration.
	ConditionGeneration bool
	// ObservedGeneration: status.observedGeneration is an integer.
	ObservedGeneration bool
	// PhaseField is "phase" or "state" (status.<field>, a string), empty without one.
	PhaseField string
	// PhaseEnum is the field's enum, when its schema lists one.
	PhaseEnum []string
	// Healthy and Degraded are the phase values the script matches (from PhaseEnum, or the
	// words above in three casings); any other value is Progressing.
	Healthy, Degraded []string
}

// Key is the argocd-cm data key of the rule's kind.
func (r Rule) Key() string { return Key(r.Group, r.Kind) }

// Key is Argo CD's per-kind health key: resource.customizations.health.<group>_<Kind>.
func Key(group, kind string) string { return "resource.customizations.health." + group + "_" + kind }

// CannotJudge says why a kind gets no check: its status schema offers nothing the rule reads.
type CannotJudge struct {
	Group, Kind string
	Why         string
}

func (e *CannotJudge) Error() string {
	return fmt.Sprintf("cannot judge: %s.%s (%s)", e.Kind, e.Group, e.Why)
}

// Decide reads crd's storage version's status schema. It returns a *CannotJudge error when
// the schema has neither a conditions list nor a phase/state string with a healthy value.
func Decide(crd *apiextensionsv1.CustomResourceDefinition) (Rule, error) {
	r := Rule{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind, CRD: crd.Name}
	cannot := func(why string) (Rule, error) {
		return Rule{}, &CannotJudge{Group: r.Group, Kind: r.Kind, Why: why}
	}
	var v *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Storage {
			v = &crd.Spec.Versions[i]
		}
	}
	if v == nil {
		return cannot("no storage version")
	}
	r.Version = v.Name
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return cannot("version " + v.Name + " has no schema")
	}
	status, ok := v.Schema.OpenAPIV3Schema.Properties["status"]
	if !ok {
		return cannot("no status in its schema")
	}
	if c, ok := status.Properties["conditions"]; ok && isConditionList(c) {
		r.Conditions = true
		_, r.ConditionGeneration = c.Items.Schema.Properties["observedGeneration"]
	}
	if g, ok := status.Properties["observedGeneration"]; ok && g.Type == "integer" {
		r.ObservedGeneration = true
	}
	for _, f := range []string{"phase", "state"} {
		p, ok := status.Properties[f]
		if !ok || p.Type != "string" {
			continue
		}
		r.PhaseField = f
		r.PhaseEnum, r.Healthy, r.Degraded = phaseValues(p.Enum)
		break
	}
	if r.PhaseField != "" && len(r.Healthy) == 0 {
		// A phase that can never be healthy would hold every CR at Progressing.
		if !r.Conditions {
			return cannot(fmt.Sprintf("status.%s's enum %s has no Running, Ready or Succeeded-like value, and there is no status.conditions", r.PhaseField, strings.Join(r.PhaseEnum, ", ")))
		}
		r.PhaseField, r.PhaseEnum, r.Degraded = "", nil, nil
	}
	if !r.Conditions && r.PhaseField == "" {
		return cannot("no status.conditions or status.phase in its schema")
	}
	return r, nil
}

// isConditionList: an array of objects with string type and status (metav1.Condition, and the
// older shapes that kept those two fields).
func isConditionList(s apiextensionsv1.JSONSchemaProps) bool {
	if s.Type != "array" || s.Items == nil || s.Items.Schema == nil {
		return false
	}
	p := s.Items.Schema.Properties
	return p["type"].Type == "string" && p["status"].Type == "string"
}

// phaseValues sorts a phase enum into the values the script matches. Without a usable enum
// (none, too long, not strings) the words are matched in three casings.
func phaseValues(enum []apiextensionsv1.JSON) (values, healthy, degraded []string) {
	for _, e := range enum {
		s, ok := jsonString(e.Raw)
		if !ok {
			values = nil
			break
		}
		values = append(values, s)
	}
	if len(values) == 0 || len(values) > maxEnum {
		return nil, casings(healthyWords), casings(degradedWords)
	}
	for _, v := range values {
		switch {
		case hasFold(healthyWords, v):
			healthy = append(healthy, v)
		case hasFold(degradedWords, v):
			degraded = append(degraded, v)
		}
	}
	return values, healthy, degraded
}

func hasFold(words []string, v string) bool {
	for _, w := range words {
		if strings.EqualFold(w, v) {
			return true
		}
	}
	return false
}

func casings(words []string) []string {
	var out []string
	for _, w := range words {
		out = append(out, w, strings.ToLower(w), strings.ToUpper(w))
	}
	sort.Strings(out)
	return out
}

// jsonString reads a JSON string value (an enum entry).
func jsonString(raw []byte) (string, bool) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}
