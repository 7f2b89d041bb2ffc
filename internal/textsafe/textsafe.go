// Package textsafe makes text from bundles safe to print: names, paths and
// values a bundle's author chose reach terminals, logs, Argo CD's UI and
// pull-request comments, where a line break forges a line and an ESC
// drives the terminal.
package textsafe

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Visible replaces each rune a terminal or a markdown renderer would act
// on instead of showing: control characters (newline, carriage return,
// tab, ESC, C1), Unicode line and paragraph separators, bidirectional
// overrides and other invisible format characters, by its Go escape (\n,
// \x1b, \u202e); invalid UTF-8 by \x.. too. Text without any is returned
// as it is.
func Visible(s string) string {
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

// Lines is Visible for each line of s, keeping its line breaks (for text
// printed as lines, such as a raw diff).
func Lines(s string) string {
	if isVisible(strings.ReplaceAll(s, "\n", "")) {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Visible(l)
	}
	return strings.Join(lines, "\n")
}
