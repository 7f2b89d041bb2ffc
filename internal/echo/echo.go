// Package echo repeats untrusted values in messages, bounded and escaped.
// An error that quotes what the user wrote travels far: Argo CD stores the
// plugin's message in the Application's status, CI prints it in a log, a
// terminal interprets its escape sequences. So a value is quoted at most
// MaxChars characters long (with its size when cut), control and invisible
// characters are escaped, and a whole message sent over the network is
// capped at MaxMessage bytes.
package echo

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxChars is how many characters of a value a message repeats.
const MaxChars = 120

// MaxMessage is the most bytes of an error message the plugin (a gRPC
// status) or the HTTP render endpoint sends.
const MaxMessage = 4096

// Quote returns s double-quoted, as %q does (control characters, invalid
// UTF-8 and invisible format characters such as bidi overrides escaped), cut
// after MaxChars characters: "aaaa"… (200000 bytes).
func Quote(s string) string {
	head, cut := prefix(s, MaxChars)
	q := strconv.Quote(head)
	if cut {
		q += fmt.Sprintf("… (%d bytes)", len(s))
	}
	return q
}

// Short returns s escaped (see Text) and cut after MaxChars characters,
// without quotes: for a value that reads as words (a panic's message).
func Short(s string) string {
	head, cut := prefix(s, MaxChars)
	t := Text(head)
	if cut {
		t += fmt.Sprintf("… (%d bytes)", len(s))
	}
	return t
}

// Text returns s with every character a terminal, a log line or an HTTP
// header could act on escaped as Go writes it in a string literal (\n,
// \x1b, \u202e, \xff for a byte that is not UTF-8), and everything else,
// quotes included, as is: for warnings built from bundle content, escaped
// where they are printed.
func Text(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || !strconv.IsPrint(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !strconv.IsPrint(r):
			q := strconv.QuoteRune(r) // '\n', '\x1b', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Lines is Text for a message of several lines (every problem of a spec):
// each line is escaped, the line breaks between them kept.
func Lines(s string) string {
	if !strings.Contains(s, "\n") {
		return Text(s)
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Text(l)
	}
	return strings.Join(lines, "\n")
}

// Message caps msg, an error with one problem per line, at max bytes:
// whole lines while they fit, then "…and N more problems"; a first line
// longer than max is cut, with the message's size.
func Message(msg string, max int) string {
	if len(msg) <= max {
		return msg
	}
	lines := strings.Split(msg, "\n")
	var b strings.Builder
	for i, l := range lines {
		rest := len(lines) - i
		more := fmt.Sprintf("\n…and %d more problems", rest)
		if rest == 1 {
			more = "\n…and 1 more problem"
		}
		if b.Len()+len(l)+1+len(more) > max {
			if i == 0 {
				head, _ := prefixBytes(msg, max-64)
				return fmt.Sprintf("%s… (the message is %d bytes; the first %d are shown)", head, len(msg), len(head))
			}
			b.WriteString(more)
			return b.String()
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	return b.String()
}

// prefix returns the first n characters of s, and whether that cut s.
func prefix(s string, n int) (string, bool) {
	i := 0
	for j := range s {
		if i == n {
			return s[:j], true
		}
		i++
	}
	return s, false
}

// prefixBytes returns the longest prefix of s of at most n bytes that ends
// on a character boundary.
func prefixBytes(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	if n < 0 {
		n = 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// Err is err with its message cut and escaped as Short does, for a
// library's error that repeats the value it refused; errors.Is and
// errors.As still see err.
func Err(err error) error {
	if err == nil {
		return nil
	}
	return &capped{err}
}

type capped struct{ err error }

func (c *capped) Error() string { return Short(c.err.Error()) }
func (c *capped) Unwrap() error { return c.err }
