package diff

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/requirements"
	"github.com/olm-cmp/olm-cmp/internal/safety"
)

// sample is a report with one of everything, findings out of order.
func sample() *Report {
	return &Report{
		From: Side{Package: "op", Version: "1.0.0", CSV: "op.v1.0.0", Source: "./a (sha256:1)"},
		To:   Side{Package: "op", Version: "1.1.0", CSV: "op.v1.1.0", Source: "./b (sha256:2)"},
		Safety: []safety.Finding{
			{Severity: safety.Warning, Rule: "upgradeEdge", Message: "op.v1.1.0 does not replace op.v1.0.0"},
			{Severity: safety.Error, Rule: "existingFieldRemoval", CRD: "ws.example.com", Version: "v1", Path: ".spec.a|b", Message: "field removed"},
		},
		Requirements: Requirements{
			Added:   []requirements.Finding{{Category: "api", Subject: "route.openshift.io", Source: "ClusterRole/op rules", Severity: requirements.Required, Message: "OpenShift-only API", Fix: "accept it"}},
			Removed: []requirements.Finding{{Category: "image", Subject: "quay.io/x/op:latest", Source: "Deployment/op", Severity: requirements.Warning, Message: "tag latest", Fix: "pin it", Accepted: true}},
		},
		Added:   []Object{{Kind: "ConfigMap", Namespace: "ops", Name: "new"}},
		Removed: []Removed{{Object: Object{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "old.example.com"}, Pruned: false}},
		Changed: []Change{{Object: Object{Group: "apps", Kind: "Deployment", Namespace: "ops", Name: "op"},
			Summary: []string{"container manager: image a:1 -> a:2"}, Diff: "--- from/x\n+++ to/x\n@@ -1 +1 @@\n-a\n+b\n"}},
	}
}

// keys collects the key paths of a JSON value: "from.package",
// "safety[].rule"…
func keys(v any, prefix string, out map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			p := strings.TrimPrefix(prefix+"."+k, ".")
			out[p] = true
			keys(child, p, out)
		}
	case []any:
		for _, child := range v {
			keys(child, prefix+"[]", out)
		}
	}
}

func keyList(doc []byte, t *testing.T) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	m := map[string]bool{}
	keys(v, "", m)
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestJSONMatchesDocs holds the -o json schema and docs/diff.md together:
// the example there has exactly the keys the output has.
func TestJSONMatchesDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/diff.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```json\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/diff.md has no ```json example")
	}
	want := keyList(m[1], t)
	var buf bytes.Buffer
	if err := sample().WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if got := keyList(buf.Bytes(), t); !slices.Equal(got, want) {
		t.Errorf("-o json keys:\n%s\ndocs/diff.md:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Empty sections are lists, not null, and findings keep empty keys.
	buf.Reset()
	r := &Report{Safety: []safety.Finding{{Severity: safety.Warning, Rule: "upgradeEdge", Message: "m"}}}
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"added": []`, `"removed": []`, `"changed": []`, `"crd": ""`, `"path": ""`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("json lacks %s:\n%s", want, buf.String())
		}
	}
}

func TestFindingsRendering(t *testing.T) {
	var text, md bytes.Buffer
	if err := sample().WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := sample().WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	// Sections in review order, errors before warnings.
	order := []string{"# 1 safety error, 1 warning, 1 added, 1 removed, 1 changed, 1 requirement added, 1 removed\n",
		"Safety (2):", "ERROR", "existingFieldRemoval", "ws.example.com v1 .spec.a|b: field removed", "WARNING", "upgradeEdge",
		"\nRequirements (1 added, 1 removed):\n+ REQUIRED  api:route.openshift.io     (from ClusterRole/op rules): OpenShift-only API; fix: accept it\n- ACCEPTED  image:quay.io/x/op:latest  no longer required\n",
		"Added (1):", "+ ConfigMap ops/new", "Removed (1):", "- CustomResourceDefinition.apiextensions.k8s.io old.example.com (kept on the cluster",
		"Changed (1):", "~ Deployment.apps ops/op", "  * container manager: image a:1 -> a:2", "    -a"}
	assertOrder(t, "text", text.String(), order)
	order = []string{":x: **1 safety error, 1 warning, 1 added, 1 removed, 1 changed, 1 requirement added, 1 removed**", "#### Safety",
		"| error | existingFieldRemoval | ws.example.com | v1 | `.spec.a\\|b` | field removed |",
		"| warning | upgradeEdge |",
		"#### Requirements\n\n| Change | Severity | Requirement | Details |\n|---|---|---|---|\n| added | required | `api:route.openshift.io` | (from ClusterRole/op rules): OpenShift-only API; fix: accept it |\n| removed | accepted | `image:quay.io/x/op:latest` | no longer required |\n",
		"#### Added", "| ConfigMap | ops | `new` |",
		"#### Removed", "keeps it (Prune=false: keepCRDs)", "#### Changed", "image a:1 -&gt; a:2",
		"<details><summary>Deployment.apps ops/op</summary>", "```diff\n--- from/x", "</details>"}
	assertOrder(t, "markdown", md.String(), order)
}

func assertOrder(t *testing.T, what, s string, parts []string) {
	t.Helper()
	at := 0
	for _, p := range parts {
		i := strings.Index(s[at:], p)
		if i < 0 {
			t.Errorf("%s: %q missing or out of order in:\n%s", what, p, s)
			return
		}
		at += i + len(p)
	}
}

func TestMarkdownBudget(t *testing.T) {
	r := sample()
	r.Safety = nil
	big := strings.Repeat("+line\n", 2*MarkdownDiffLines)
	for i := 0; i < 200; i++ {
		r.Changed = append(r.Changed, Change{Object: Object{Kind: "ConfigMap", Name: strings.Repeat("x", i%5+1)}, Diff: big})
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if md.Len() > MarkdownBudget {
		t.Errorf("comment is %d characters, over %d", md.Len(), MarkdownBudget)
	}
	if !strings.Contains(md.String(), "raw diffs left out") || !strings.Contains(md.String(), "more lines") {
		t.Error("the comment does not say what it left out")
	}
	var none bytes.Buffer
	if err := (&Report{}).WriteMarkdown(&none); err != nil || !strings.Contains(none.String(), "No changes") {
		t.Errorf("no changes: %v %q", err, none.String())
	}
}

// TestAcknowledgedRendering: an acknowledged error is shown with its reason
// in every form, counted apart, and no longer makes the comment an :x:.
func TestAcknowledgedRendering(t *testing.T) {
	r := sample()
	r.Safety[1].Acknowledged = "status only"
	var text, md, js bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	assertOrder(t, "text", text.String(), []string{"# 0 safety errors, 1 warning, 1 acknowledged, 1 added",
		"  ERROR    existingFieldRemoval  ws.example.com v1 .spec.a|b: field removed (acknowledged: status only)\n"})
	assertOrder(t, "markdown", md.String(), []string{":warning: **0 safety errors, 1 warning, 1 acknowledged, 1 added",
		"| error | existingFieldRemoval | ws.example.com | v1 | `.spec.a\\|b` | field removed (acknowledged: status only) |\n"})
	assertOrder(t, "json", js.String(), []string{`"path": ".spec.a|b",`, `"acknowledged": "status only"`, `"acknowledged": ""`})
}

func TestCompareRequirements(t *testing.T) {
	f := func(key string) requirements.Finding {
		c, s, _ := strings.Cut(key, ":")
		return requirements.Finding{Category: requirements.Category(c), Subject: s, Source: "from " + key}
	}
	from := []requirements.Finding{f("api:b.io"), f("image:x:latest"), f("api:a.io")}
	to := []requirements.Finding{f("api:c.io"), f("api:a.io"), {Category: "image", Subject: "x:latest", Source: "elsewhere"}, f("api:c.io")}
	got := CompareRequirements(from, to)
	keysOf := func(fs []requirements.Finding) (out []string) {
		for _, f := range fs {
			out = append(out, f.Key())
		}
		return out
	}
	// By key: a finding whose source changed is neither; one per key.
	if a, r := keysOf(got.Added), keysOf(got.Removed); !slices.Equal(a, []string{"api:c.io"}) || !slices.Equal(r, []string{"api:b.io"}) {
		t.Errorf("added %q, removed %q", a, r)
	}
	if none := CompareRequirements(nil, nil); none.Added == nil || none.Removed == nil || none.changes() != 0 {
		t.Errorf("no findings: %+v (lists must be empty, not nil)", none)
	}
}
