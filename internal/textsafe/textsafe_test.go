package textsafe

import "testing"

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"plain name-1.example.com": "plain name-1.example.com",
		"é ü 中":                    "é ü 中",
		"a\nb\r\tc":                `a\nb\r\tc`,
		"\x1b[2J":                  `\x1b[2J`,
		"\u202e\u2028\u200b\u0085": `\u202e\u2028\u200b\u0085`,
		"bad\xffutf8":              `bad\xffutf8`,
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLines(t *testing.T) {
	if got, want := Lines("a\x1b[2J\nb\r\n"), `a\x1b[2J`+"\n"+`b\r`+"\n"; got != want {
		t.Errorf("Lines = %q, want %q", got, want)
	}
}
