package diff

import (
	"strings"
	"unicode/utf8"

	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// Everything diff writes about the objects (names, kinds, namespaces,
// summaries, findings, sources, raw diffs) comes from bundle content, i.e.
// from whoever wrote the bundle or the pull request: a newline in a name
// would end a markdown table row and let it forge a heading ("0 safety
// errors") or close <details>; an ESC would drive the reviewer's terminal.
// Every output form passes such text through echo.Text (echo.Lines for
// raw diffs) and, for markdown, markdownText; -o json
// is escaped by encoding/json.

// markdownEscaper escapes the characters that start inline markdown
// (emphasis, code spans, links and images, strikethrough, table cells) and
// HTML (tags, comments, entities). Line-start syntax (#, >, -, 1.) cannot
// arise: echo.Text leaves no line break.
var markdownEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `~`, `\~`, `[`, `\[`, `]`, `\]`, `|`, `\|`,
	`&`, `&amp;`, `<`, `&lt;`, `>`, `&gt;`,
)

// markdownText is s as literal text in a markdown line or table cell.
func markdownText(s string) string {
	return markdownEscaper.Replace(echo.Text(s))
}

// maxMarkdownValue bounds one value (a name, a message) in the markdown
// comment, so that no single value can use up its budget.
const maxMarkdownValue = 1000

// clip cuts s to at most n bytes, at a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
