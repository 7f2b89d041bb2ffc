package render

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// TestPipelineDocMatchesSteps: docs/spec.md lists the pipeline's steps in the
// order the code runs them (every step a spec can switch on).
func TestPipelineDocMatchesSteps(t *testing.T) {
	req := demoRequest(t)
	p, err := newPipeline(req, loadDemo(t))
	if err != nil {
		t.Fatal(err)
	}
	var code []string
	for _, s := range p.steps(context.Background()) {
		if len(code) == 0 || code[len(code)-1] != s.name { // one entry per annotation key
			code = append(code, s.name)
		}
	}
	doc, err := os.ReadFile("../../docs/spec.md")
	if err != nil {
		t.Fatal(err)
	}
	sec := string(doc)[strings.Index(string(doc), "## Pipeline"):]
	sec = sec[:strings.Index(sec[3:], "\n## ")+3]
	var documented []string
	for _, m := range regexp.MustCompile(`(?m)^\d+\. \*\*([^*]+)\*\*`).FindAllStringSubmatch(sec, -1) {
		documented = append(documented, m[1])
	}
	if strings.Join(code, ",") != strings.Join(documented, ",") {
		t.Errorf("steps in code:\n  %v\nin docs/spec.md:\n  %v", code, documented)
	}
}

// TestRenderStopsWhenCancelled: a render whose caller has gone stops at the
// next step with the caller's cause and returns nothing.
func TestRenderStopsWhenCancelled(t *testing.T) {
	req := demoRequest(t)
	p, err := newPipeline(req, loadDemo(t))
	if err != nil {
		t.Fatal(err)
	}
	cause := errors.New("the client went away")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var ran []string
	steps := p.steps(context.Background())
	for i := range steps {
		s := steps[i]
		steps[i].run = func(objs []*yaml.RNode) ([]*yaml.RNode, error) {
			ran = append(ran, s.name)
			if s.name == "patches" {
				cancel(cause) // the caller goes away during this step
			}
			return s.run(objs)
		}
	}
	objs, manifests, err := p.runSteps(ctx, steps)
	if !errors.Is(err, cause) || objs != nil || manifests != nil {
		t.Fatalf("got %v, %d objects, %d manifests", err, len(objs), len(manifests))
	}
	if ran[len(ran)-1] != "patches" {
		t.Errorf("steps ran after the cancel: %v", ran)
	}
	if !strings.Contains(err.Error(), `before step "API versions"`) {
		t.Errorf("error does not say where it stopped: %v", err)
	}
}

func loadDemo(t testing.TB) *bundle.Bundle {
	t.Helper()
	b, err := bundle.LoadDir(demoDir + "/bundle")
	if err != nil {
		t.Fatal(err)
	}
	return b
}
