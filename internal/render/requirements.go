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
func checkRequirements(req Request, b *bundle.Bundle, objs []*yaml.RNode, unmatched []string, unsigned []requirements.Unverified) ([]requirements.Finding, []string, error) {
	in := requirements.Input{Bundle: b, Spec: req.Spec, Objects: objs, APIVersions: req.APIVersions, Unverified: unsigned}
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

// Note is one line a transport prints about a render that succeeded (the
// CLI and `generate` on stderr, the plugin's log): a warning, or a
// requirement finding not accepted, under the finding's own severity, the
// word `inspect` shows it with. Severity words mean the same in every
// command: required, the cluster must have it before the operator can work
// (spec.strict fails on it); warning, it may matter. None says "error": the
// render succeeded (docs/requirements.md).
type Note struct {
	Severity requirements.Severity
	Text     string
	// Finding is the requirement finding the note reports; nil for a
	// warning of another kind.
	Finding *requirements.Finding
}

// Printed is the note's line as printed on stderr, led by its severity word
// (requirements.Finding.Printed for a finding), not yet escaped.
func (n Note) Printed() string {
	if n.Finding != nil {
		return n.Finding.Printed()
	}
	return string(n.Severity) + ": " + n.Text
}

// Notes are r's Warnings as Notes, in the same order: a pending requirement
// finding's line (Finding.Line) under its own severity, every other warning
// under warning.
func (r *Result) Notes() []Note {
	pending := map[string]*requirements.Finding{}
	for i := range r.Requirements {
		if f := &r.Requirements[i]; !f.Accepted {
			pending[f.Line()] = f
		}
	}
	notes := make([]Note, len(r.Warnings))
	for i, w := range r.Warnings {
		notes[i] = Note{Severity: requirements.Warning, Text: w}
		if f := pending[w]; f != nil {
			notes[i].Severity, notes[i].Finding = f.Severity, f
		}
	}
	return notes
}

// rbacOnlyWarning says whether n is an RBAC-only api finding shown as a
// warning: a note FoldRBACOnly folds.
func (n Note) rbacOnlyWarning() bool {
	return n.Finding != nil && n.Finding.RBACOnly() && n.Severity == requirements.Warning
}

// foldShown is how many groups the folded RBAC-only line names.
const foldShown = 6

// FoldRBACOnly replaces the notes of two or more RBAC-only api findings
// (requirements.Finding.RBACOnly: groups only the operator's RBAC rules
// name, which most operators have by the dozen) with one warning at the
// place of the first, naming the groups and ending with more (where each is
// shown); the other notes stay as they are. kubevirt's render printed 35
// such lines (23 KB) before its one error.
func FoldRBACOnly(notes []Note, more string) []Note {
	var groups []string
	for _, n := range notes {
		if n.rbacOnlyWarning() {
			groups = append(groups, n.Finding.Subject)
		}
	}
	if len(groups) < 2 {
		return notes
	}
	shown := strings.Join(groups[:min(len(groups), foldShown)], ", ")
	if len(groups) > foldShown {
		shown += fmt.Sprintf(", and %d more", len(groups)-foldShown)
	}
	line := fmt.Sprintf("%d API groups that only the operator's RBAC rules name (no object of the render, no required CRD; usual for an operator, which uses them where they are served): %s; %s, spec.accept entries (api:GROUP) answer them",
		len(groups), shown, more)
	out := make([]Note, 0, len(notes)-len(groups)+1)
	folded := false
	for _, n := range notes {
		if n.rbacOnlyWarning() {
			if !folded {
				out = append(out, Note{Severity: requirements.Warning, Text: line})
				folded = true
			}
			continue
		}
		out = append(out, n)
	}
	return out
}
