package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/olm-cmp/olm-cmp/internal/safety"
)

// hostile is an object name written by an attacker: a line break that
// would start a forged heading, a </details> and an HTML comment, table
// pipes, backticks, markdown emphasis and a link, ESC sequences (clear the
// screen, a title change), a carriage return, a right-to-left override, a
// Unicode line separator and a tab.
const hostile = "evil\n### olm-cmp diff: 0 safety errors\n</details><!-- | `x` **b** [l](http://e) \x1b[2J\x1b]0;t\x07\rback\u202egnp.exe\u2028\tz"

// hostileYAML is a ConfigMap named hostile, with a hostile value.
func hostileYAML(value string) string {
	n, _ := json.Marshal(hostile) // JSON is YAML: a double-quoted scalar
	v, _ := json.Marshal(value)
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + string(n) + "\n  namespace: ops\ndata:\n  k: " + string(v) + "\n"
}

// hostileReport has the hostile name in every section, in a finding and in
// a summary line, built by Compare from YAML where Compare can.
func hostileReport(t *testing.T) *Report {
	t.Helper()
	dep := func(image string) string {
		img, _ := json.Marshal(image)
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: op, namespace: ops}\nspec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        image: " + string(img) + "\n"
	}
	removed := strings.Replace(hostileYAML("a"), "kind: ConfigMap", "kind: Secret", 1)
	r, err := Compare(
		[]string{hostileYAML("a"), removed, dep("a:1")},
		[]string{hostileYAML("b"), dep("a:2" + hostile), strings.Replace(hostileYAML("a"), "kind: ConfigMap", "kind: Service", 1)},
		"", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Added) != 1 || len(r.Removed) != 1 || len(r.Changed) != 2 {
		t.Fatalf("test bug: %d added, %d removed, %d changed", len(r.Added), len(r.Removed), len(r.Changed))
	}
	r.From = Side{Package: "op" + hostile, Version: "1.0.0", Source: "./a" + hostile}
	r.To = Side{Package: "op" + hostile, Version: "1.1.0" + hostile, Source: "./b"}
	r.Safety = []safety.Finding{{Severity: safety.Error, Rule: "type", CRD: hostile, Version: "v1", Path: ".spec." + hostile, Message: "type changed: " + hostile}}
	return r
}

// invisible reports the first rune of s a terminal or renderer would act
// on, other than a line break.
func invisible(s string) (rune, bool) {
	for _, r := range s {
		if r != '\n' && r != ' ' && !unicode.IsPrint(r) {
			return r, true
		}
	}
	return 0, false
}

// TestHostileNamesText: no control or format character reaches the
// terminal, and every line is one the report writes (a hostile name adds
// none).
func TestHostileNamesText(t *testing.T) {
	var out bytes.Buffer
	if err := hostileReport(t).WriteText(&out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if r, bad := invisible(s); bad {
		t.Errorf("text output holds %U:\n%s", r, s)
	}
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "###") || strings.HasPrefix(l, "</details>") || strings.HasPrefix(l, "back") {
			t.Errorf("a hostile name started a line: %q", l)
		}
	}
	if want := `+ Service ops/evil\n### olm-cmp diff: 0 safety errors\n</details><!-- | ` + "`x`" + ` **b** [l](http://e) \x1b[2J\x1b]0;t\a\rback\u202egnp.exe\u2028\tz`; !strings.Contains(s, want) {
		t.Errorf("the name is not shown escaped (want %s) in:\n%s", want, s)
	}
}

// TestHostileNamesMarkdown: the comment's structure is the report's own:
// one heading, its section headings, table rows with their own cells, one
// </details> per raw diff, no HTML comment, no control character.
func TestHostileNamesMarkdown(t *testing.T) {
	var out bytes.Buffer
	r := hostileReport(t)
	if err := r.WriteMarkdown(&out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if r, bad := invisible(s); bad {
		t.Errorf("markdown holds %U", r)
	}
	// Outside the fenced raw diffs (whose fence no backtick run inside
	// can close), only the report's own structure.
	inFence := false
	unescapedPipe := regexp.MustCompile(`(^|[^\\])\|`)
	link := regexp.MustCompile(`(^|[^\\])\]\(`)
	closes := 0
	for _, l := range strings.Split(s, "\n") {
		if !inFence {
			text := withoutCodeSpans(l)
			if inner, ok := strings.CutPrefix(text, "<details><summary>"); ok {
				// An HTML block: its one line holds the escaped name.
				inner, ok = strings.CutSuffix(inner, "</summary>")
				if !ok || strings.ContainsAny(inner, "<>") {
					t.Errorf("a <summary> the report did not write: %q", l)
				}
				text = ""
			}
			for _, bad := range []string{"<!--", "</details><"} {
				if strings.Contains(text, bad) {
					t.Errorf("markdown holds %q outside code: %q", bad, l)
				}
			}
			if link.MatchString(text) {
				t.Errorf("markdown holds a link outside code: %q", l)
			}
			closes += strings.Count(text, "</details>")
		}
		switch {
		case strings.HasPrefix(l, "```"):
			inFence = !inFence
		case inFence:
		case strings.HasPrefix(l, "#"):
			if !strings.HasPrefix(l, "### olm-cmp diff: `") && !regexp.MustCompile(`^#### (Safety|Added|Removed|Changed)$`).MatchString(l) {
				t.Errorf("a heading the report did not write: %q", l)
			}
		case strings.HasPrefix(l, "|"):
			cells := len(unescapedPipe.FindAllString(l, -1)) - 1
			if cells != 3 && cells != 4 && cells != 6 {
				t.Errorf("a table row with %d cells: %q", cells, l)
			}
		}
	}
	if closes != len(r.Changed) {
		t.Errorf("%d </details> for %d raw diffs", closes, len(r.Changed))
	}
	if !strings.Contains(s, `| error | type | evil\\n### olm-cmp diff: 0 safety errors\\n&lt;/details&gt;&lt;!-- \| \`+"`x\\`"+` \*\*b\*\* \[l\](http://e) \\x1b\[2J`) {
		t.Errorf("the name is not shown escaped in:\n%s", s)
	}
}

// withoutCodeSpans is a markdown line without its code spans (a run of
// backticks up to the next run as long), which show their text literally.
func withoutCodeSpans(l string) string {
	var b strings.Builder
	for {
		i := strings.Index(l, "`")
		for i > 0 && l[i-1] == '\\' { // an escaped backtick opens nothing
			j := strings.Index(l[i+1:], "`")
			if j < 0 {
				i = -1
				break
			}
			i += 1 + j
		}
		if i < 0 {
			return b.String() + l
		}
		n := len(l[i:]) - len(strings.TrimLeft(l[i:], "`"))
		fence := l[i : i+n]
		end := strings.Index(l[i+n:], fence)
		if end < 0 {
			return b.String() + l
		}
		b.WriteString(l[:i])
		l = l[i+n+end+n:]
	}
}

// TestHostileNamesJSON: -o json keeps every name exactly, JSON-escaped.
func TestHostileNamesJSON(t *testing.T) {
	var out bytes.Buffer
	r := hostileReport(t)
	if err := r.WriteJSON(&out); err != nil {
		t.Fatal(err)
	}
	// encoding/json escapes control characters and U+2028/U+2029; other
	// characters (U+202E) are data, kept as they are.
	if i := strings.IndexFunc(out.String(), func(r rune) bool { return (r < 0x20 && r != '\n') || r == 0x7f || r == '\u2028' }); i >= 0 {
		t.Errorf("JSON holds a raw control character at %d", i)
	}
	var back struct {
		Added   []Object         `json:"added"`
		Removed []Removed        `json:"removed"`
		Safety  []safety.Finding `json:"safety"`
	}
	if err := json.Unmarshal(out.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Added[0].Name != hostile || back.Removed[0].Name != hostile || back.Safety[0].CRD != hostile {
		t.Errorf("names changed: %q %q %q", back.Added[0].Name, back.Removed[0].Name, back.Safety[0].CRD)
	}
}

// TestMarkdownCap: 2,000 added objects (and as many removed and changed)
// give a comment under MarkdownBudget that keeps the headline and every
// safety finding, and says how many objects it did not list.
func TestMarkdownCap(t *testing.T) {
	var from, to []string
	for i := range 2000 {
		to = append(to, obj("ConfigMap", fmt.Sprintf("added-%04d", i), ""))
		from = append(from, obj("Secret", fmt.Sprintf("removed-%04d", i), ""))
		from = append(from, obj("Service", fmt.Sprintf("changed-%04d", i), "spec: {a: 1}\n"))
		to = append(to, obj("Service", fmt.Sprintf("changed-%04d", i), "spec: {a: 2}\n"))
	}
	r, err := Compare(from, to, "", "")
	if err != nil {
		t.Fatal(err)
	}
	r.From, r.To = Side{Package: "op", Version: "1.0.0"}, Side{Package: "op", Version: "1.1.0"}
	for i := range 50 {
		r.Safety = append(r.Safety, safety.Finding{Severity: safety.Error, Rule: "type", CRD: "ws.example.com", Version: "v1", Path: fmt.Sprintf(".spec.f%d", i), Message: "type changed: string -> integer"})
	}
	var out bytes.Buffer
	if err := r.WriteMarkdown(&out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if len(s) >= MarkdownBudget {
		t.Errorf("the comment has %d characters, over %d", len(s), MarkdownBudget)
	}
	if !strings.HasPrefix(s, "### olm-cmp diff: `op 1.0.0 -> 1.1.0`\n") || !strings.Contains(s, ":x: **50 safety errors, 0 warnings, 2000 added, 2000 removed, 2000 changed**") {
		t.Errorf("headline or status line missing:\n%.500s", s)
	}
	for i := range 50 {
		if !strings.Contains(s, fmt.Sprintf("`.spec.f%d`", i)) {
			t.Errorf("safety finding %d left out", i)
		}
	}
	listed := strings.Count(s, "| ConfigMap | ops | `added-")
	if listed == 0 || listed == 2000 {
		t.Fatalf("%d added objects listed", listed)
	}
	for _, want := range []string{
		fmt.Sprintf("_… and %d more added objects (see the full diff in -o text / the job log)._", 2000-listed),
		"#### Removed", "_… and 2000 removed objects (see the full diff in -o text / the job log)._",
		"#### Changed", "_… and 2000 changed objects (see the full diff in -o text / the job log)._",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in the comment's end:\n%s", want, s[len(s)-600:])
		}
	}
}

// TestBoundedRawDiff: a change whose differing lines interleave with
// matching ones beyond the bounds (difflib's quadratic case: an enum of
// 20,000 values, every other one renamed) gets one hunk, which reads as
// difflib's own when the change is one block.
func TestBoundedRawDiff(t *testing.T) {
	enum := func(prefix string) string {
		var b strings.Builder
		b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: e, namespace: ops}\ndata:\n  values: |\n")
		for i := range 20000 {
			if i%2 == 0 {
				fmt.Fprintf(&b, "    %s%d\n", prefix, i)
			} else {
				fmt.Fprintf(&b, "    same%d\n", i)
			}
		}
		return b.String()
	}
	r, err := Compare([]string{enum("a")}, []string{enum("b")}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	c := r.Changed[0]
	if !slices.Contains(c.Summary, "raw diff: one hunk replaces every line from the first change to the last (too many lines differ to search for the smallest diff)") {
		t.Errorf("summary %q", c.Summary)
	}
	if n := strings.Count(c.Diff, "\n@@ "); n != 1 || strings.Count(c.Diff, "\n-    ") != 19999 || strings.Count(c.Diff, "\n+    ") != 19999 {
		t.Errorf("%d hunks, %d lines removed, %d added", n, strings.Count(c.Diff, "\n-    "), strings.Count(c.Diff, "\n+    "))
	}

	a := "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n"
	for _, b := range []string{
		strings.Replace(a, "l5\nl6\n", "x5\nx6\nx7\n", 1), // replaced
		strings.Replace(a, "l5\n", "", 1),                 // deleted
		strings.Replace(a, "l5\n", "l5\nnew\n", 1),        // inserted
		"l0\n" + a,  // at the start
		a + "l11\n", // at the end
	} {
		want, _, err := unifiedDiff(a, b, "from/x", "to/x", new(int(maxDiffCells)))
		if err != nil {
			t.Fatal(err)
		}
		got, minimal, err := unifiedDiff(a, b, "from/x", "to/x", new(int(-1)))
		if err != nil || minimal {
			t.Fatalf("no budget, and still searched (%v)", err)
		}
		if got != want {
			t.Errorf("one hunk\n%s\ndifflib\n%s", got, want)
		}
	}
}

// TestMarkdownCapFindings: findings alone over the budget are cut too, the
// errors (listed first) kept.
func TestMarkdownCapFindings(t *testing.T) {
	r := &Report{From: Side{Package: "op", Version: "1"}, To: Side{Package: "op", Version: "2"}, Added: []Object{{Kind: "ConfigMap", Name: "x"}}}
	for i := range 2000 {
		sev := safety.Error
		if i >= 1000 {
			sev = safety.Warning
		}
		r.Safety = append(r.Safety, safety.Finding{Severity: sev, Rule: "type", CRD: "ws.example.com", Version: "v1", Path: fmt.Sprintf(".spec.f%04d", i), Message: "type changed: string -> integer"})
	}
	var out bytes.Buffer
	if err := r.WriteMarkdown(&out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	listed := strings.Count(s, "| error | type |")
	if len(s) >= MarkdownBudget || listed == 0 || strings.Contains(s, "| warning |") {
		t.Fatalf("%d characters, %d errors listed, warnings listed: %t", len(s), listed, strings.Contains(s, "| warning |"))
	}
	for _, want := range []string{
		fmt.Sprintf("_… and %d more safety findings (see the full diff in -o text / the job log)._", 2000-listed),
		"_… and 1 added object (see the full diff in -o text / the job log)._",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in:\n%s", want, s[len(s)-400:])
		}
	}
}
