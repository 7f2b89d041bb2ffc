package diff

import (
	"fmt"
	"io"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/safety"
)

// Markdown limits. A GitHub comment holds 65,536 characters (a GitLab note
// about a million); raw diffs are added, collapsed, only while the comment
// stays under MarkdownBudget, and each is cut at MarkdownDiffLines.
const (
	MarkdownBudget    = 60000
	MarkdownDiffLines = 300
)

// WriteMarkdown writes the report as a pull-request comment: a headline, the
// safety findings, tables of added, removed and changed objects with their
// summaries, then each raw diff collapsed in <details>.
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
	if len(r.Safety) > 0 {
		b.WriteString("#### Safety\n\n| Severity | Rule | CRD | Version | Path | Message |\n|---|---|---|---|---|---|\n")
		for _, f := range sortFindings(r.Safety) {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", f.Severity, cell(f.Rule), cell(f.CRD), cell(f.Version), codeCell(f.Path), cell(f.Message))
		}
		b.WriteString("\n")
	}
	if len(r.Added) > 0 {
		b.WriteString("#### Added\n\n| Kind | Namespace | Name |\n|---|---|---|\n")
		for _, o := range r.Added {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(kindGroup(o)), cell(o.Namespace), codeCell(o.Name))
		}
		b.WriteString("\n")
	}
	if len(r.Removed) > 0 {
		b.WriteString("#### Removed\n\n| Kind | Namespace | Name | Argo CD |\n|---|---|---|---|\n")
		for _, o := range r.Removed {
			what := "prunes it"
			if !o.Pruned {
				what = "keeps it (Prune=false: keepCRDs)"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(kindGroup(o.Object)), cell(o.Namespace), codeCell(o.Name), what)
		}
		b.WriteString("\n")
	}
	if len(r.Changed) > 0 {
		b.WriteString("#### Changed\n\n| Kind | Namespace | Name | Summary |\n|---|---|---|---|\n")
		for _, c := range r.Changed {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(kindGroup(c.Object)), cell(c.Namespace), codeCell(c.Name), cell(strings.Join(c.Summary, "\n")))
		}
		b.WriteString("\n")
		omitted := 0
		for _, c := range r.Changed {
			block := details(c)
			if b.Len()+len(block) > MarkdownBudget {
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

// details is one change's raw diff, collapsed.
func details(c Change) string {
	lines := strings.SplitAfter(c.Diff, "\n")
	text := c.Diff
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
	return fmt.Sprintf("<details><summary>%s</summary>\n\n%sdiff\n%s%s\n\n</details>\n", htmlEscape(c.Object.String()), fence, text, fence)
}

func kindGroup(o Object) string {
	if o.Group == "" {
		return o.Kind
	}
	return o.Kind + "." + o.Group
}

// cell makes text safe inside a table cell: pipes escaped, lines joined
// with <br>, HTML neutralised.
func cell(s string) string {
	s = htmlEscape(s)
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", "<br>")
}

// codeCell is a code span inside a table cell; "" stays empty.
func codeCell(s string) string {
	if s == "" {
		return ""
	}
	return strings.ReplaceAll(code(s), "|", `\|`)
}

// code is a code span that holds any backticks s has.
func code(s string) string {
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
