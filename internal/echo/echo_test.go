package echo

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuote(t *testing.T) {
	cases := []struct{ in, want string }{
		{"v1.2.3", `"v1.2.3"`},
		{"a\nb\x1b[2J", `"a\nb\x1b[2J"`},
		{"\u202egnp.exe", `"\u202egnp.exe"`},
		{strings.Repeat("x", MaxChars), `"` + strings.Repeat("x", MaxChars) + `"`},
		{strings.Repeat("x", 200000), `"` + strings.Repeat("x", MaxChars) + `"… (200000 bytes)`},
		// Cut on characters, not bytes.
		{strings.Repeat("é", 200), `"` + strings.Repeat("é", MaxChars) + `"… (400 bytes)`},
	}
	for _, c := range cases {
		if got := Quote(c.in); got != c.want {
			t.Errorf("Quote(%.40q) = %.200s, want %.200s", c.in, got, c.want)
		}
	}
}

func TestText(t *testing.T) {
	cases := []struct{ in, want string }{
		{`plain "quoted" text, é`, `plain "quoted" text, é`},
		{"line\nnext\r\tEND", `line\nnext\r\tEND`},
		{"\x1b]0;title\x07\x1b[2J", `\x1b]0;title\a\x1b[2J`},
		{"bad \xff byte", `bad \xff byte`},
		{"bidi \u202e and C1 \u009b", `bidi \u202e and C1 \u009b`},
	}
	for _, c := range cases {
		got := Text(c.in)
		if got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
		for _, r := range got {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Errorf("Text(%q) kept control %U", c.in, r)
			}
		}
	}
	if s := Short(strings.Repeat("\n", 500)); s != strings.Repeat(`\n`, MaxChars)+"… (500 bytes)" {
		t.Errorf("Short: %q", s)
	}
}

func TestMessage(t *testing.T) {
	if m := Message("short", 100); m != "short" {
		t.Errorf("%q", m)
	}
	var lines []string
	for i := range 5000 {
		lines = append(lines, fmt.Sprintf("spec.thing[%d]: problem", i))
	}
	m := Message(strings.Join(lines, "\n"), MaxMessage)
	if len(m) > MaxMessage || !strings.HasPrefix(m, lines[0]+"\n") {
		t.Fatalf("%d bytes: %.100q", len(m), m)
	}
	kept := strings.Count(m, "\n")
	if want := fmt.Sprintf("\n…and %d more problems", 5000-kept); !strings.HasSuffix(m, want) {
		t.Errorf("ends %q, want %q", m[len(m)-40:], want)
	}
	one := strings.Repeat("é", 10000)
	m = Message(one, MaxMessage)
	if len(m) > MaxMessage || !utf8.ValidString(m) || !strings.HasSuffix(m, "(the message is 20000 bytes; the first 4032 are shown)") {
		t.Errorf("%d bytes, valid %v: %q", len(m), utf8.ValidString(m), m[len(m)-80:])
	}
}

func TestErr(t *testing.T) {
	base := errors.New("could not parse reference: " + strings.Repeat("c", 1000))
	err := fmt.Errorf("spec.bundle: %w", Err(base))
	if !errors.Is(err, base) || len(err.Error()) > 200 || !strings.HasSuffix(err.Error(), "… (1027 bytes)") {
		t.Errorf("%v", err)
	}
	if Err(nil) != nil {
		t.Error("Err(nil) is not nil")
	}
}

func TestLines(t *testing.T) {
	if got := Lines("a\x1b[2J\nb\tc"); got != "a\\x1b[2J\nb\\tc" {
		t.Errorf("%q", got)
	}
}

// The characters a bundle's author could use to forge a line or drive a
// terminal in diff's outputs and safety findings (once internal/textsafe's
// cases) are escaped; printable text, non-ASCII letters included, is kept.
func TestTextHostile(t *testing.T) {
	for in, want := range map[string]string{
		"plain name-1.example.com": "plain name-1.example.com",
		"é ü 中":                    "é ü 中",
		"a\nb\r\tc":                `a\nb\r\tc`,
		"\x1b[2J":                  `\x1b[2J`,
		"\u202e\u2028\u200b\u0085": `\u202e\u2028\u200b\u0085`,
		"bad\xffutf8":              `bad\xffutf8`,
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := Lines("a\x1b[2J\nb\r\n"), `a\x1b[2J`+"\n"+`b\r`+"\n"; got != want {
		t.Errorf("Lines = %q, want %q", got, want)
	}
}
