package diff

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Everything diff writes about the objects (names, kinds, namespaces,
// summaries, findings, sources, raw diffs) comes from bundle content, i.e.
// from whoever wrote the bundle or the pull request: a newline in a name
// would end a markdown table row and let it forge a heading ("0 safety
// errors") or close <details>; an ESC would drive the reviewer's terminal.
// Every output form passes such text through the functions below; -o json
// is escaped by encoding/json.

// visible replaces each rune a terminal or a markdown renderer would act
// on instead of showing: control characters (newline, carriage return,
// tab, ESC, C1), Unicode line and paragraph separators, bidirectional
// overrides and other invisible format characters, by its Go escape (\n,
// \x1b, \u202e); invalid UTF-8 by \x.. too.
func visible(s string) string {
	if isVisible(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == ' ' || unicode.IsPrint(r):
			b.WriteRune(r)
		default:
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

func isVisible(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || (r != ' ' && !unicode.IsPrint(r)) {
			return false
		}
	}
	return true
}

// visibleLines is visible for each line of s, keeping the line breaks:
// for raw diffs, printed as lines.
func visibleLines(s string) string {
	if isVisible(strings.ReplaceAll(s, "\n", "")) {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = visible(l)
	}
	return strings.Join(lines, "\n")
}

// markdownEscaper escapes the characters that start inline markdown
// (emphasis, code spans, links and images, strikethrough, table cells) and
// HTML (tags, comments, entities). Line-start syntax (#, >, -, 1.) cannot
// arise: visible leaves no line break.
var markdownEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `~`, `\~`, `[`, `\[`, `]`, `\]`, `|`, `\|`,
	`&`, `&amp;`, `<`, `&lt;`, `>`, `&gt;`,
)

// markdownText is s as literal text in a markdown line or table cell.
func markdownText(s string) string {
	return markdownEscaper.Replace(visible(s))
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
