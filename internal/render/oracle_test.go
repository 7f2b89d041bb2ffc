package render

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/badinput"
	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/convert"
	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/transform"
	"github.com/olm-cmp/olm-cmp/internal/validate"
)

// The API-server oracle (test/e2e/oracle_test.go, the e2e corpus suite)
// needs what olm-cmp would send a cluster object by object, and olm-cmp's
// verdict on each: a render the validate step refuses returns one error and
// no objects. This test is its first half. It runs the render's own steps up
// to the validate step (pipeline.steps, cut there), so the objects are
// exactly those the validate step judges, serialized as the render serializes
// them, and asks the validate step about each object alone (a custom resource
// together with the CRD of its kind the render ships, whose own line is not
// the resource's). It checks that those verdicts are the render's: the
// validate step over the whole render fails exactly when some object's
// verdict is not empty, with the same lines, and Render fails with them.
//
// Only run.sh runs it (OLM_CMP_ORACLE_OUT names the output directory): one
// JSON file per case, then index.json listing them, written last, so a run
// that stops half-way leaves no index and the oracle refuses to start.
func TestOracleCandidates(t *testing.T) {
	out := os.Getenv("OLM_CMP_ORACLE_OUT")
	if out == "" {
		t.Skip("OLM_CMP_ORACLE_OUT not set: test/e2e/run.sh (the corpus suite) sets it")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(filepath.Join(out, "index.json"))
	var index []string
	for _, c := range oracleCases(t) {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			oc := oracleRender(ctx, t, c)
			b, err := json.Marshal(oc)
			if err != nil {
				t.Fatal(err)
			}
			file := fmt.Sprintf("%03d.json", len(index))
			if err := os.WriteFile(filepath.Join(out, file), b, 0o644); err != nil {
				t.Fatal(err)
			}
			index = append(index, file)
			invalid := 0
			for _, o := range oc.Objects {
				if o.Verdict != "" {
					invalid++
				}
			}
			if oc.Refused != "" {
				t.Logf("refused before the validate step: %s", oc.Refused)
				return
			}
			t.Logf("%d objects, %d refused by the validate step; render: %s", len(oc.Objects), invalid, cmp.Or(oc.Render, "ok"))
		})
	}
	if t.Failed() {
		return
	}
	b, _ := json.Marshal(index)
	if err := os.WriteFile(filepath.Join(out, "index.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// oracleCase is one render the oracle judges.
type oracleCase struct {
	name string
	req  Request
	// allExamples asks for every kind of the CSV's alm-examples (a generated
	// spec for a corpus bundle, as the e2e corpus suite writes one).
	allExamples bool
	// refused is why the case has no request: its spec is refused before
	// anything is rendered.
	refused error
}

// oracleCandidates is what the oracle reads for one case (the JSON of its
// file; test/e2e/oracle_test.go decodes the same fields).
type oracleCandidates struct {
	Name string `json:"name"`
	// Refused is the error that stopped olm-cmp before the validate step
	// (a spec, a bundle or a conversion problem): the case has no objects.
	Refused string `json:"refused,omitempty"`
	// Render is olm-cmp's whole render: "" when it succeeded, else its error.
	Render string `json:"render,omitempty"`
	// Objects are the validate step's input, in the render's order.
	Objects []oracleObject `json:"objects"`
}

type oracleObject struct {
	// YAML is the object as the render serializes it.
	YAML string `json:"yaml"`
	// Verdict is the validate step's line about it, "" when it passes.
	Verdict string `json:"verdict,omitempty"`
}

// oracleCases: every corpus bundle (a generated spec: own namespace, every
// alm-example kind), every example of the repository with olm-cmp.yaml (its
// registry bundle replaced by the same bundle from ../shared), and every
// case of the bad-input corpus laid over examples/demo.
func oracleCases(t *testing.T) []oracleCase {
	t.Helper()
	var cases []oracleCase
	shared := cmp.Or(os.Getenv("OLM_CMP_SHARED"), sharedDir)
	if _, err := os.Stat(filepath.Join(shared, "bundles")); err != nil {
		t.Logf("%s: no shared bundles (skipped): %v", shared, err)
	} else {
		bundles := corpusBundlesIn(t, shared)
		for _, rel := range slices.Sorted(maps.Keys(bundles)) {
			cases = append(cases, oracleCase{name: "shared/" + rel, req: dirRequest(t, bundles[rel], corpusNamespace(rel)), allExamples: true})
		}
	}
	examples, err := filepath.Glob(filepath.Join("..", "..", "examples", "*", spec.FileName))
	if err != nil || len(examples) == 0 {
		t.Fatalf("no examples/*/%s (%v)", spec.FileName, err)
	}
	for _, f := range examples {
		src := filepath.Dir(f)
		c := oracleCase{name: "examples/" + filepath.Base(src)}
		file, err := spec.Load(src)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		c.req = Request{Spec: file.Spec, Name: file.Metadata.Name, SourceDir: src}
		if b, ok := seedExampleBundles[filepath.Base(src)]; ok {
			abs, err := filepath.Abs(filepath.Join(shared, "bundles", b))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(abs); err != nil {
				t.Logf("%s: its bundle %s is not in ../shared (skipped)", c.name, b)
				continue
			}
			c.req.Spec.Bundle, c.req.Spec.Version = abs, ""
		}
		cases = append(cases, c)
	}
	base := filepath.Join("..", "..", "examples", "demo")
	for _, bc := range badinput.Cases(t, filepath.Join("..", "..", "test", "testdata", "bad")) {
		c := oracleCase{name: "bad/" + bc.Name}
		dir := filepath.Join(t.TempDir(), bc.Name)
		bc.Prepare(t, base, dir)
		file, err := spec.Load(dir)
		if err != nil {
			c.refused = err
		} else {
			c.req = Request{Spec: file.Spec, Name: file.Metadata.Name, SourceDir: dir}
		}
		cases = append(cases, c)
	}
	return cases
}

// seedExampleBundles maps each seed operator of examples/ to its bundle in
// ../shared/bundles, the same bundle as the registry image its spec names.
var seedExampleBundles = map[string]string{
	"lws-operator":          "leader-worker-set-1.0.0",
	"cert-manager-operator": "cert-manager-operator-1.20.0",
	"sail-operator":         "sailoperator-1.30.3",
}

// oracleRender renders c up to the validate step and judges each object.
func oracleRender(ctx context.Context, t *testing.T, c oracleCase) oracleCandidates {
	t.Helper()
	oc := oracleCandidates{Name: c.name, Objects: []oracleObject{}}
	if c.refused != nil {
		oc.Refused = c.refused.Error()
		return oc
	}
	r := &Renderer{}
	rv, err := r.Resolve(ctx, c.req)
	if err != nil {
		oc.Refused = err.Error()
		return oc
	}
	b, err := r.Load(ctx, rv)
	if err != nil {
		oc.Refused = err.Error()
		return oc
	}
	if c.allExamples {
		rv.Request.Spec.Examples = almExampleKinds(b.CSV.Annotations["alm-examples"])
	}
	p, objs, err := untilValidate(ctx, rv, b)
	var tne *convert.TargetNamespacesError
	if errors.As(err, &tne) && c.allExamples {
		// A bundle that cannot watch all namespaces (OLM asks for a watch
		// namespace): its own, else another one.
		for _, watch := range []string{rv.Request.Spec.Namespace, rv.Request.Spec.Namespace + "-watched"} {
			rv.Request.Spec.WatchNamespaces = []string{watch}
			if p, objs, err = untilValidate(ctx, rv, b); err == nil {
				break
			}
		}
	}
	if err != nil {
		oc.Refused = err.Error()
		return oc
	}
	yamls, err := transform.Serialize(objs)
	if err != nil {
		t.Fatalf("serialize: %v", err)
	}
	verdicts := objectVerdicts(t, objs, p.originOf)
	for i := range objs {
		oc.Objects = append(oc.Objects, oracleObject{YAML: yamls[i], Verdict: verdicts[i]})
	}

	// The verdicts are the validate step's: over the whole render it fails
	// with the same lines (in order, up to its maximum), and so does Render.
	var want []string
	for _, v := range verdicts {
		if v != "" {
			want = append(want, v)
		}
	}
	_, whole := validate.Objects(context.Background(), p.originOf).Filter(objs)
	switch {
	case len(want) == 0 && whole != nil:
		t.Errorf("every object passes alone, but the validate step refuses the render:\n%v", whole)
	case len(want) > 0 && whole == nil:
		t.Errorf("the validate step passes the render, but refuses alone:\n%s", strings.Join(want, "\n"))
	case len(want) > 0:
		got := strings.Split(whole.Error(), "\n")
		for i, w := range want {
			if i < len(got) && got[i] != w && !strings.HasPrefix(got[i], "and ") {
				t.Errorf("line %d of the validate step's error:\n%s\nthe object's own verdict:\n%s", i+1, got[i], w)
			}
		}
	}
	_, rerr := r.RenderLoaded(ctx, rv, b)
	if rerr != nil {
		oc.Render = rerr.Error()
	}
	if whole != nil && (rerr == nil || !strings.Contains(rerr.Error(), whole.Error())) {
		t.Errorf("the validate step refuses the render, but Render says %v", rerr)
	}
	return oc
}

// untilValidate runs RenderBundle's pipeline up to, not including, the
// validate step.
func untilValidate(ctx context.Context, rv Resolved, b *bundle.Bundle) (*pipeline, []*yaml.RNode, error) {
	p, err := newPipeline(rv.Request, b)
	if err != nil {
		return nil, nil, err
	}
	p.signatures = rv.Signatures
	if err := checkExcludeFiles(p, rv.Request.Spec, b); err != nil {
		return nil, nil, err
	}
	all := p.steps(context.Background())
	i := slices.IndexFunc(all, func(s step) bool { return s.name == "validate" })
	if i < 0 {
		return nil, nil, errors.New("the render has no validate step")
	}
	objs, _, err := p.runSteps(ctx, all[:i])
	return p, objs, err
}

// objectVerdicts asks the validate step about each object alone; a custom
// resource goes with the CRD of its kind when the render ships one (its
// schema), and the CRD's own line, if any, is not the resource's.
func objectVerdicts(t *testing.T, objs []*yaml.RNode, origin func(*yaml.RNode) validate.Origin) []string {
	t.Helper()
	crds := map[string]*yaml.RNode{}
	for _, n := range objs {
		if n.GetKind() == "CustomResourceDefinition" && strings.HasPrefix(n.GetApiVersion(), "apiextensions.k8s.io/") {
			g, _ := n.GetString("spec.group")
			k, _ := n.GetString("spec.names.kind")
			crds[g+"/"+k] = n
		}
	}
	alone := func(nodes ...*yaml.RNode) []string {
		_, err := validate.Objects(context.Background(), origin).Filter(nodes)
		if err == nil {
			return nil
		}
		return strings.Split(err.Error(), "\n")
	}
	own := map[*yaml.RNode][]string{} // a CRD's lines, judged alone
	out := make([]string, len(objs))
	for i, n := range objs {
		g, _ := resid.ParseGroupVersion(n.GetApiVersion())
		crd := crds[g+"/"+n.GetKind()]
		if crd == nil {
			out[i] = strings.Join(alone(n), "\n")
			continue
		}
		if _, ok := own[crd]; !ok {
			own[crd] = alone(crd)
		}
		var lines []string
		for _, l := range alone(crd, n) {
			if !slices.Contains(own[crd], l) {
				lines = append(lines, l)
			}
		}
		if len(lines) > 1 {
			t.Fatalf("%s/%s: more than one line for one object: %q", n.GetKind(), n.GetName(), lines)
		}
		out[i] = strings.Join(lines, "\n")
	}
	return out
}

// almExampleKinds lists the kinds of a CSV's alm-examples, sorted, each
// once; none when the annotation does not parse (the render says so).
func almExampleKinds(annotation string) []string {
	var objs []struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal([]byte(annotation), &objs) != nil {
		return nil
	}
	var kinds []string
	for _, o := range objs {
		if o.Kind != "" && !slices.Contains(kinds, o.Kind) {
			kinds = append(kinds, o.Kind)
		}
	}
	slices.Sort(kinds)
	return kinds
}
