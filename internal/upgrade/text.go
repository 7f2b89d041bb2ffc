package upgrade

import (
	"fmt"
	"io"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// WriteText writes the report for people (olm-cmp upgrade's text output):
// one block per application; wrote says whether --write wrote the files
// each names.
func (rep *Report) WriteText(w io.Writer, wrote bool) {
	for i, a := range rep.Applications {
		if i > 0 {
			fmt.Fprintln(w)
		}
		head := a.Dir
		if a.Package != "" {
			head += " (" + a.Package + ")"
		}
		fmt.Fprintln(w, echo.Text(head))
		line := func(k, v string) {
			if v != "" {
				fmt.Fprintf(w, "  %-11s %s\n", k, echo.Text(v))
			}
		}
		line("current", a.Current)
		line("where", a.Where)
		for j, c := range a.Candidates {
			k := ""
			if j == 0 {
				k = "candidates"
			}
			v := c.Version
			if len(c.Edges) > 0 {
				v += " (" + strings.Join(c.Edges, "; ") + ")"
			} else {
				v += " (no edge from " + a.Current + ")"
			}
			if c.Deprecated {
				v += " deprecated"
			}
			fmt.Fprintf(w, "  %-11s %s\n", k, echo.Text(v))
		}
		if a.Chosen != "" {
			line("chosen", a.Chosen+" ("+a.Digest+")")
		}
		if a.Safety != nil {
			line("safety", a.Safety.Verdict+" (upgradeConstraintPolicy "+a.Safety.UpgradeConstraintPolicy+")")
			for _, f := range a.Safety.Findings {
				fmt.Fprintf(w, "  %-11s %s\n", "", echo.Text(f.String()))
			}
		}
		status := string(a.Status)
		if len(a.Files) > 0 {
			verb := "would write"
			if wrote {
				verb = "wrote"
			}
			status += " (" + verb + " " + strings.Join(a.Files, ", ") + ")"
		}
		line("status", status)
		line("reason", a.Reason)
		for _, o := range a.OtherRepos {
			line("skipped", o.Application+": its repoURL "+o.RepoURL+" is another repository (not one of this checkout's Git remotes nor --repo-url)")
		}
		for _, b := range a.ByPath {
			line("by path", b)
		}
	}
}
