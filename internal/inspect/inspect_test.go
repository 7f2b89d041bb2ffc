package inspect

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// The demo bundle's summary holds what its CSV and manifests declare, and
// the text names each part; a report that could not be made says why.
func TestSummarizeDemo(t *testing.T) {
	dir, err := filepath.Abs("../../examples/demo/bundle")
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Summarize(b)
	if err != nil {
		t.Fatal(err)
	}
	if s.Package != "greeter-operator" || len(s.CRDs) != 1 || s.CRDs[0].Name != "greeters.greeter.example.com" || s.CRDs[0].Bytes == 0 ||
		len(s.Webhooks) != 1 || s.Webhooks[0].Path != "/validate-greeter-example-com-v1alpha1-greeter" || len(s.Deployments) == 0 || len(s.Objects) != 1 ||
		!strings.HasPrefix(s.Objects[0], "Service/") || len(s.Examples) == 0 {
		t.Errorf("summary: %+v", s)
	}
	if req := DefaultRequest(b); req.Name != "greeter-operator" || req.Spec.Namespace == "" || req.Spec.Bundle != b.Origin.Ref {
		t.Errorf("default request: %+v", req)
	}
	s.RequirementsError = "the render failed"
	var text strings.Builder
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Package:          greeter-operator\n", "CRDs (1):\n  greeters.greeter.example.com  ", "Webhooks (1):\n", "Other objects (1):\n", "Requirements: not computed: the render failed\n"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}

// The text report escapes what the bundle wrote: a terminal escape in the
// package, CSV name, replaces or an image never reaches the terminal raw.
func TestWriteTextEscapesBundleText(t *testing.T) {
	s := &Summary{Package: "\x1b[31mpkg", CSV: "greeter\x1b[31m.v0.2.0", Replaces: "old\u202e",
		Deployments: []Deployment{{Name: "op", ServiceAccount: "sa\n", Images: []string{"img\x07"}}}}
	var text strings.Builder
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	got := text.String()
	if strings.ContainsAny(got, "\x1b\x07\u202e") {
		t.Errorf("raw control characters in the report:\n%q", got)
	}
	for _, want := range []string{`\x1b[31mpkg`, `greeter\x1b[31m.v0.2.0`, `old\u202e`, `serviceAccount=sa\n`, `img\a`} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %s:\n%s", want, got)
		}
	}
}
