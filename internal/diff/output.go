package diff

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/requirements"
	"github.com/olm-cmp/olm-cmp/internal/safety"
)

// jsonReport is the -o json form; docs/diff.md documents it and a test
// holds the two together. Every key is always present.
type jsonReport struct {
	From         Side          `json:"from"`
	To           Side          `json:"to"`
	Safety       []jsonFinding `json:"safety"`
	Requirements Requirements  `json:"requirements"`
	Added        []Object      `json:"added"`
	Removed      []Removed     `json:"removed"`
	Changed      []Change      `json:"changed"`
}

// jsonFinding is safety.Finding with every key present, so a consumer need
// not tell a missing key from an empty one.
type jsonFinding struct {
	Severity safety.Severity `json:"severity"`
	Rule     string          `json:"rule"`
	CRD      string          `json:"crd"`
	Version  string          `json:"version"`
	Path     string          `json:"path"`
	Message  string          `json:"message"`
	// Acknowledged is the spec.acknowledge entry's reason, "" when none
	// names the finding.
	Acknowledged string `json:"acknowledged"`
}

// WriteJSON writes the report as one indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	out := jsonReport{From: r.From, To: r.To, Safety: []jsonFinding{},
		Requirements: Requirements{Added: nonNil(r.Requirements.Added), Removed: nonNil(r.Requirements.Removed)},
		Added:        nonNil(r.Added), Removed: nonNil(r.Removed), Changed: nonNil(r.Changed)}
	for _, f := range sortFindings(r.Safety) {
		out.Safety = append(out.Safety, jsonFinding{Severity: f.Severity, Rule: f.Rule, CRD: f.CRD, Version: f.Version, Path: f.Path, Message: f.Message, Acknowledged: f.Acknowledged})
	}
	for i := range out.Changed {
		out.Changed[i].Summary = nonNil(out.Changed[i].Summary)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// headline is "package 1.0.0 -> 1.1.0", or the CSV names when the packages
// differ.
func (r *Report) headline() string {
	name := func(s Side) string {
		if s.Package == "" && s.CSV == "" {
			return "(nothing)"
		}
		return strings.TrimSpace(s.Package + " " + s.Version)
	}
	if r.From.Package == r.To.Package && r.From.Package != "" {
		return fmt.Sprintf("%s %s -> %s", r.To.Package, r.From.Version, r.To.Version)
	}
	return name(r.From) + " -> " + name(r.To)
}

// counts is "2 safety errors, 1 warning, 3 added, 1 removed, 10 changed",
// with "1 acknowledged" after the warnings and "2 requirements added, 1
// removed" at the end when there are any.
func (r *Report) counts() string {
	plural := func(n int, one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %s", n, many)
	}
	parts := []string{
		plural(r.Count(safety.Error), "safety error", "safety errors"),
		plural(r.Count(safety.Warning), "warning", "warnings"),
	}
	if n := r.Acknowledged(); n > 0 {
		parts = append(parts, fmt.Sprintf("%d acknowledged", n))
	}
	parts = append(parts,
		fmt.Sprintf("%d added", len(r.Added)),
		fmt.Sprintf("%d removed", len(r.Removed)),
		fmt.Sprintf("%d changed", len(r.Changed)))
	if q := r.Requirements; q.changes() > 0 {
		parts = append(parts, fmt.Sprintf("%s added, %d removed", plural(len(q.Added), "requirement", "requirements"), len(q.Removed)))
	}
	return strings.Join(parts, ", ")
}

// WriteText writes the report for a terminal: safety findings, then added
// (+), removed (-) and changed (~) objects, each change's summary before its
// unified diff. Every value from the bundles passes through echo.Text: no
// control character reaches the terminal.
func (r *Report) WriteText(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "# %s\n", echo.Text(r.headline()))
	fmt.Fprintf(w, "# from: %s\n# to:   %s\n", echo.Text(r.From.Source), echo.Text(r.To.Source))
	if !r.HasChanges() && len(r.Safety) == 0 {
		fmt.Fprintln(w, "# no changes")
		return w.Flush()
	}
	fmt.Fprintf(w, "# %s\n", r.counts())
	if len(r.Safety) > 0 {
		fmt.Fprintf(w, "\nSafety (%d):\n", len(r.Safety))
		for _, f := range sortFindings(r.Safety) {
			fmt.Fprintf(w, "  %s\t%s\t%s\n", echo.Text(strings.ToUpper(string(f.Severity))), echo.Text(f.Rule), echo.Text(findingWhere(f)+f.Message+acknowledgedNote(f)))
		}
	}
	if q := r.Requirements; q.changes() > 0 {
		fmt.Fprintf(w, "\nRequirements (%d added, %d removed):\n", len(q.Added), len(q.Removed))
		for _, f := range q.Added {
			fmt.Fprintf(w, "+ %s\t%s\t%s\n", echo.Text(requirementSeverity(f)), echo.Text(f.Key()), echo.Text("(from "+f.Source+"): "+f.Message+"; fix: "+f.Fix))
		}
		for _, f := range q.Removed {
			fmt.Fprintf(w, "- %s\t%s\t%s\n", echo.Text(requirementSeverity(f)), echo.Text(f.Key()), "no longer required")
		}
	}
	if len(r.Added) > 0 {
		fmt.Fprintf(w, "\nAdded (%d):\n", len(r.Added))
		for _, o := range r.Added {
			fmt.Fprintf(w, "+ %s\n", echo.Text(o.String()))
		}
	}
	if len(r.Removed) > 0 {
		fmt.Fprintf(w, "\nRemoved (%d):\n", len(r.Removed))
		for _, o := range r.Removed {
			fmt.Fprintf(w, "- %s%s\n", echo.Text(o.Object.String()), keptNote(o))
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(r.Changed) > 0 {
		fmt.Fprintf(out, "\nChanged (%d):\n", len(r.Changed))
		for _, c := range r.Changed {
			fmt.Fprintf(out, "~ %s\n", echo.Text(c.Object.String()))
			for _, s := range c.Summary {
				fmt.Fprintf(out, "  * %s\n", echo.Text(s))
			}
			fmt.Fprint(out, indent(echo.Lines(c.Diff), "    "))
		}
	}
	return nil
}

// acknowledgedNote is " (acknowledged: reason)" for a finding
// spec.acknowledge names.
func acknowledgedNote(f safety.Finding) string {
	if f.Acknowledged == "" {
		return ""
	}
	return " (acknowledged: " + f.Acknowledged + ")"
}

// requirementSeverity is "WARNING", or "ACCEPTED" for a finding spec.accept
// matches.
func requirementSeverity(f requirements.Finding) string {
	if f.Accepted {
		return "ACCEPTED"
	}
	return strings.ToUpper(string(f.Severity))
}

// findingWhere is "crd version path: " for the parts a finding has.
func findingWhere(f safety.Finding) string {
	var parts []string
	for _, p := range []string{f.CRD, f.Version, f.Path} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, " ") + ": "
}

func keptNote(o Removed) string {
	if o.Pruned {
		return ""
	}
	return " (kept on the cluster: Prune=false, keepCRDs)"
}

func indent(s, prefix string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	return b.String()
}
