package spec

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// The YAML parser describes a syntax error in its grammar's words ("mapping
// values are not allowed in this context"); the common mistakes of a
// hand-written spec have a plainer description and a fix, found by looking
// at the lines themselves.

var parserLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+): (.*)$`) })

// plainSyntax rewrites the parser's message msg ("line 5: found a tab
// character ...") about data in plain words with the fix, or returns msg.
func plainSyntax(data []byte, msg string) string {
	lines := strings.Split(string(data), "\n")
	m := parserLine().FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	n, _ := strconv.Atoi(m[1])
	if n < 1 || n > len(lines) {
		return msg
	}
	// A tab in a line's indentation: YAML forbids it, and the parser
	// reports it at that line or as a mapping error there.
	if strings.Contains(m[2], "tab") || strings.ContainsRune(lines[n-1][:len(lines[n-1])-len(strings.TrimLeft(lines[n-1], " \t"))], '\t') {
		for i := n - 1; i >= 0 && i >= n-2; i-- {
			l := lines[i]
			if indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]; strings.Contains(indent, "\t") && strings.TrimSpace(l) != "" {
				return fmt.Sprintf("line %d: the line is indented with a tab: YAML indents with spaces only; replace the tab with spaces", i+1)
			}
		}
	}
	switch words := m[2]; {
	case strings.HasPrefix(words, "mapping values are not allowed"):
		// "  bundle: x\n    namespace: y": a key indented deeper than the
		// key above it, which already has a value.
		if prev, ok := previousLine(lines, n-1); ok {
			cur := lines[n-1]
			ci, pi := indentOf(cur), indentOf(lines[prev])
			key, _, _ := strings.Cut(strings.TrimSpace(cur), ":")
			pkey, pval, found := strings.Cut(strings.TrimSpace(lines[prev]), ":")
			if ci > pi && found && strings.TrimSpace(pval) != "" {
				return fmt.Sprintf("line %d: %s is indented deeper (%d spaces) than %s on line %d (%d spaces), which already has a value: indent %s by %d spaces, as %s", n, echo.Quote(key), ci, echo.Quote(pkey), prev+1, pi, echo.Quote(key), pi, echo.Quote(pkey))
			}
			if strings.Count(strings.TrimSpace(cur), ": ") > 1 {
				return fmt.Sprintf("line %d: the value holds \": \", which YAML reads as another key: put the value in quotes", n)
			}
		}
		return fmt.Sprintf("line %d: a key where YAML expects none (%s): check the indentation of this line against the lines above, or quote a value that holds \": \"", n, words)
	case strings.HasPrefix(words, "did not find expected key"):
		return fmt.Sprintf("line %d: the indentation does not match the lines above (%s): indent each key of a map by the same number of spaces", n, words)
	case strings.HasPrefix(words, "could not find expected ':'"):
		return fmt.Sprintf("line %d: a line without \"key: value\" (%s): add the ':' after the key, or indent the line as a continuation", n, words)
	case strings.HasPrefix(words, "found unexpected end of stream"),
		strings.HasPrefix(words, "did not find expected ',' or ']'"),
		strings.HasPrefix(words, "did not find expected ',' or '}'"):
		// The file ends inside a quoted value or a [ ] / { } that a line
		// above opened: name that line.
		if i, open, ok := unclosed(lines, n); ok {
			switch open {
			case '"', '\'':
				return fmt.Sprintf("line %d: the quoted value that starts here has no closing %s: add it at the end of the value", i+1, map[byte]string{'"': `'"'`, '\'': `"'"`}[open])
			case '[':
				return fmt.Sprintf("line %d: the list that starts with '[' here has no closing ']': add it after the last item", i+1)
			case '{':
				return fmt.Sprintf("line %d: the map that starts with '{' here has no closing '}': add it after the last entry", i+1)
			}
		}
	case strings.HasPrefix(words, "found character that cannot start any token"):
		return fmt.Sprintf("line %d: a value starts with a character YAML reserves (%s): put the value in quotes", n, words)
	}
	return msg
}

// unclosed finds the last line up to n (1-based) whose value opens a quote,
// a [ or a { that the line does not close, and what it opens.
func unclosed(lines []string, n int) (int, byte, bool) {
	for i := min(n, len(lines)) - 1; i >= 0; i-- {
		t := strings.TrimSpace(lines[i])
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		v := strings.TrimPrefix(t, "- ")
		if _, after, found := strings.Cut(v, ": "); found {
			v = strings.TrimSpace(after)
		}
		if v == "" {
			continue
		}
		switch open := v[0]; open {
		case '"':
			if !closedQuote(v[1:], '"') {
				return i, open, true
			}
		case '\'':
			if !strings.Contains(v[1:], "'") {
				return i, open, true
			}
		case '[', '{':
			closer := map[byte]string{'[': "]", '{': "}"}[open]
			if strings.Count(v, string(open)) > strings.Count(v, closer) {
				return i, open, true
			}
		}
	}
	return 0, 0, false
}

// closedQuote reports whether s holds an unescaped q.
func closedQuote(s string, q byte) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			return true
		}
	}
	return false
}

// previousLine returns the index of the last line before i that holds
// YAML (not blank, not a comment).
func previousLine(lines []string, i int) (int, bool) {
	for j := i - 1; j >= 0; j-- {
		if t := strings.TrimSpace(lines[j]); t != "" && !strings.HasPrefix(t, "#") {
			return j, true
		}
	}
	return 0, false
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
