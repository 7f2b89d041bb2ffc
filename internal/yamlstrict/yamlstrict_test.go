package yamlstrict

import (
	"strings"
	"testing"
)

// TestDocument: one document within the bound, each other case one line
// naming the file as the caller does.
func TestDocument(t *testing.T) {
	for text, want := range map[string]string{
		"a: 1\n---\nb: 2\n":      "policy p.yaml: line 3: a second YAML document: the policy is one document",
		"# nothing\n":            "policy p.yaml: the file is empty: write a: 1",
		"a: [\n":                 "policy p.yaml: ",
		strings.Repeat("x", 101): "policy p.yaml: larger than 100 bytes",
	} {
		_, err := Document([]byte(text), "policy p.yaml", 100, "write a: 1")
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%.20q: %v, want %s", text, err, want)
		}
	}
	if doc, err := Document([]byte("a: 1\n"), "p", 100, ""); err != nil || doc == nil {
		t.Errorf("good document: %v", err)
	}
}

// TestFields: unknown keys with the nearest known one, repeats, types, and
// every problem listed in one error, capped.
func TestFields(t *testing.T) {
	doc, err := Document([]byte("naem: x\nlist: 1\nflag: maybe\nname: [a]\nname: b\n"), "p", 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	var d Decoder
	f := d.Fields(doc, "", "name", "list", "flag")
	d.List(f["list"], "list")
	d.Bool(f["flag"], "flag")
	d.Str(f["name"], "name")
	want := `p: line 1: unknown field "naem": did you mean "name"?; line 5: name: set twice: remove one; line 2: list: expected a list, got "1"; line 3: flag: expected true or false, got "maybe"; line 4: name: expected a string, got a list`
	if err := d.Err("p"); err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	for range 20 {
		d.Fail(nil, "x", "again")
	}
	if err := d.Err("p"); !strings.HasSuffix(err.Error(), "; and 15 more problems") {
		t.Errorf("cap: %v", err)
	}
}
