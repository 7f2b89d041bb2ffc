package specedit

import (
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/yamlsafe"
)

// TestReplace: scalars of any document, in block and flow context, each in
// its own style; every other byte kept.
func TestReplace(t *testing.T) {
	doc := "# one\r\na: {name: x, version: 1.0, digest: \"\"}   # flow\r\n---\r\nlist:\r\n- name: version\r\n  string: 'v1'  # block\r\n"
	docs, err := yamlsafe.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	flow := docs[0].Content[1]
	version, digest := flow.Content[3], flow.Content[5]
	str := docs[1].Content[1].Content[0].Content[3]
	out, err := Replace([]byte(doc), []Replacement{{version, "2.0,beta"}, {digest, "sha256:ab"}, {str, "it's"}})
	if err != nil {
		t.Fatal(err)
	}
	// A plain value in a flow mapping that would hold a comma is quoted; a
	// number-like plain value stays plain only when it reads back as the string.
	want := "# one\r\na: {name: x, version: \"2.0,beta\", digest: \"sha256:ab\"}   # flow\r\n---\r\nlist:\r\n- name: version\r\n  string: 'it''s'  # block\r\n"
	if string(out) != want {
		t.Errorf("got\n%q\nwant\n%q", out, want)
	}
	back, err := yamlsafe.Parse(out)
	if err != nil || back[0].Content[1].Content[3].Value != "2.0,beta" || back[1].Content[1].Content[0].Content[3].Value != "it's" {
		t.Errorf("read back: %v", err)
	}
	// Plain "1.0" would read as a number: a plain replacement is quoted.
	out, _ = Replace([]byte(doc), []Replacement{{version, "3.0"}})
	if !strings.Contains(string(out), `version: "3.0",`) {
		t.Errorf("got %q", out)
	}
}

func TestReplaceRefusesWhatItCannotEditAlone(t *testing.T) {
	doc := "a: |\n  block\nb: plain\n  continued\n"
	docs, err := yamlsafe.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range map[int]string{1: "line 1: is a block scalar", 3: "line 3: the value spans lines"} {
		if _, err := Replace([]byte(doc), []Replacement{{docs[0].Content[i], "x"}}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("node %d: err = %v, want %q", i, err, want)
		}
	}
	if _, err := Replace([]byte(doc), []Replacement{{docs[0].Content[3], "x"}, {docs[0].Content[3], "y"}}); err == nil {
		t.Error("two replacements of one value: no error")
	}
}
