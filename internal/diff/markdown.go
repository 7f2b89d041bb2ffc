package diff

import (
	"fmt"
	"io"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/safety"
)

// Markdown limits. A GitHub comment holds 65,536 characters (a GitLab note
// about a million): the whole comment stays under MarkdownBudget. The
// headline, the status line and the safety findings come first and are
// kept whole (unless the findings alone exceed the budget); the tables of
// added, removed and changed objects are cut with "… and N more" once the
// comment reaches the budget; raw diffs are added, collapsed, only while it
// stays under, each cut at MarkdownDiffLines.
const (
	MarkdownBudget    = 60000
	MarkdownDiffLines = 300
	// markdownReserve is kept free for the notes that say what was cut.
	markdownReserve = 2000
)

// WriteMarkdown writes the report as a pull-request comment: a headline, the
// safety findings, tables of added, removed and changed objects with their
// summaries, then each raw diff collapsed in <details>. Every value from the
// bundles is escaped (see echo.Text and markdownText).
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### olm-cmp diff: %s\n\n", code(r.headline()))
	fmt.Fprintf(&b, "From %s to %s\n\n", code(r.From.Source), code(r.To.Source))
	switch {
	case r.Count(safety.Error) > 0:
		fmt.Fprintf(&b, ":x: **%s**\n\n", r.counts())
	case r.Count(safety.Warning) > 0:
		fmt.Fprintf(&b, ":warning: **%s**\n\n", r.counts())
	case r.HasChanges():
		fmt.Fprintf(&b, "**%s**\n\n", r.counts())
	default:
		b.WriteString("No changes to the rendered manifests.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	limit := MarkdownBudget - markdownReserve
	if len(r.Safety) > 0 {
		var rows []string
		for _, f := range sortFindings(r.Safety) {
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s |\n", cell(string(f.Severity)), cell(f.Rule), cell(f.CRD), cell(f.Version), codeCell(f.Path), cell(f.Message+acknowledgedNote(f))))
		}
		table(&b, "Safety", "| Severity | Rule | CRD | Version | Path | Message |\n|---|---|---|---|---|---|\n", rows, "safety findings", limit)
	}
	if q := r.Requirements; q.changes() > 0 {
		var rows []string
		for _, f := range q.Added {
			rows = append(rows, fmt.Sprintf("| added | %s | %s | %s |\n", cell(strings.ToLower(requirementSeverity(f))), codeCell(f.Key()), cell("(from "+f.Source+"): "+f.Message+"; fix: "+f.Fix)))
		}
		for _, f := range q.Removed {
			rows = append(rows, fmt.Sprintf("| removed | %s | %s | no longer required |\n", cell(strings.ToLower(requirementSeverity(f))), codeCell(f.Key())))
		}
		table(&b, "Requirements", "| Change | Severity | Requirement | Details |\n|---|---|---|---|\n", rows, "requirement changes", limit)
	}
	if len(r.Added) > 0 {
		var rows []string
		for _, o := range r.Added {
			rows = append(rows, fmt.Sprintf("| %s | %s | %s |\n", cell(kindGroup(o)), cell(o.Namespace), codeCell(o.Name)))
		}
		table(&b, "Added", "| Kind | Namespace | Name |\n|---|---|---|\n", rows, "added objects", limit)
	}
	if len(r.Removed) > 0 {
		var rows []string
		for _, o := range r.Removed {
			what := "prunes it"
			if !o.Pruned {
				what = "keeps it (Prune=false: keepCRDs)"
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s |\n", cell(kindGroup(o.Object)), cell(o.Namespace), codeCell(o.Name), what))
		}
		table(&b, "Removed", "| Kind | Namespace | Name | Argo CD |\n|---|---|---|---|\n", rows, "removed objects", limit)
	}
	if len(r.Changed) > 0 {
		var rows []string
		for _, c := range r.Changed {
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s |\n", cell(kindGroup(c.Object)), cell(c.Namespace), codeCell(c.Name), summaryCell(c.Summary)))
		}
		table(&b, "Changed", "| Kind | Namespace | Name | Summary |\n|---|---|---|---|\n", rows, "changed objects", limit)
		omitted := 0
		for _, c := range r.Changed {
			block := details(c)
			if b.Len()+len(block) > limit {
				omitted++
				continue
			}
			b.WriteString(block)
		}
		if omitted > 0 {
			fmt.Fprintf(&b, "\n_%d raw diffs left out to keep this comment under %d characters: run `olm-cmp diff` locally for all of them._\n", omitted, MarkdownBudget)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// table writes a section's table, its rows while the comment stays under
// limit, then how many more there are.
func table(b *strings.Builder, title, header string, rows []string, what string, limit int) {
	fmt.Fprintf(b, "#### %s\n\n", title)
	n := 0
	if b.Len()+len(header)+len(rows[0]) <= limit {
		b.WriteString(header)
		for _, row := range rows {
			if b.Len()+len(row) > limit {
				break
			}
			b.WriteString(row)
			n++
		}
		b.WriteString("\n")
	}
	if left := len(rows) - n; left > 0 {
		if left == 1 {
			what = strings.TrimSuffix(what, "s")
		}
		if n > 0 {
			what = "more " + what
		}
		fmt.Fprintf(b, "_… and %d %s (see the full diff in -o text / the job log)._\n\n", left, what)
	}
}

// details is one change's raw diff, collapsed.
func details(c Change) string {
	lines := strings.SplitAfter(echo.Lines(c.Diff), "\n")
	text := strings.Join(lines, "")
	if len(lines) > MarkdownDiffLines {
		text = strings.Join(lines[:MarkdownDiffLines], "") + fmt.Sprintf("... %d more lines\n", len(lines)-MarkdownDiffLines)
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	// A fence longer than any backtick run inside cannot be closed early.
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	return fmt.Sprintf("<details><summary>%s</summary>\n\n%sdiff\n%s%s\n\n</details>\n", htmlEscape(echo.Text(clip(c.Object.String(), maxMarkdownValue))), fence, text, fence)
}

func kindGroup(o Object) string {
	if o.Group == "" {
		return o.Kind
	}
	return o.Kind + "." + o.Group
}

// cell is s as literal text inside a table cell (see markdownText).
func cell(s string) string {
	return markdownText(clip(s, maxMarkdownValue))
}

// summaryCell is a change's summary lines in one cell, joined with <br>.
func summaryCell(lines []string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = cell(l)
	}
	return strings.Join(out, "<br>")
}

// codeCell is a code span inside a table cell; "" stays empty.
func codeCell(s string) string {
	if s == "" {
		return ""
	}
	return strings.ReplaceAll(code(s), "|", `\|`)
}

// code is a code span that holds any backticks s has. A code span shows
// its text literally (no markdown, no HTML), but a line break would still
// end the line, hence echo.Text.
func code(s string) string {
	s = echo.Text(clip(s, maxMarkdownValue))
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
