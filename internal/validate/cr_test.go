package validate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/validate/apiop"
)

// typedStatus is the demo CRD with a status schema that types status.phase.
const typedStatus = "          status:\n            type: object\n            properties:\n              phase: {type: integer}\n"

const greeterWithStatus = "apiVersion: greeter.example.com/v1alpha1\nkind: Greeter\nmetadata: {name: g, namespace: ops}\nspec: {message: hi}\nstatus: {phase: Ready}"

// The API server drops the status of a custom resource it creates when the
// version enables the status subresource, before validating it: a status
// its schema would refuse is no reason to refuse the object. Without the
// subresource the status is validated as any other field.
func TestCustomResourceStatusDroppedWithTheStatusSubresource(t *testing.T) {
	crd := broken(t, "          status:\n            type: object\n            x-kubernetes-preserve-unknown-fields: true\n", typedStatus)
	if got := run(t, crd, greeterWithStatus); got != "" {
		t.Errorf("with the status subresource: %s", got)
	}
	noSubresource := strings.Replace(crd, "    subresources:\n      status: {}\n", "", 1)
	if got := run(t, noSubresource, greeterWithStatus); !strings.Contains(got, "Greeter ops/g: status.phase: ") {
		t.Errorf("without the status subresource the status was not validated: %q", got)
	}
}

// A CRD's x-kubernetes-validations rules run on its custom resources as the
// server's create strategy runs them: the field path and the rule (or its
// message), no oldSelf, and no rules at all on an object whose shape is
// already wrong (the server then says only that the rules were not
// checked, which the line leaves out: the object is refused already).
func TestCustomResourceCELRules(t *testing.T) {
	rules := "            x-kubernetes-validations:\n" +
		"            - rule: self.message.size() < 3\n" +
		"            - {rule: self.replicas <= 5, message: at most five replicas}\n" +
		"            - {rule: self.message == oldSelf.message, message: message is immutable}\n" +
		"            properties:\n              message:\n"
	crd := broken(t, "            properties:\n              message:\n", rules)
	cr := func(spec string) string {
		return "apiVersion: greeter.example.com/v1alpha1\nkind: Greeter\nmetadata: {name: g, namespace: ops}\nspec: " + spec
	}
	for _, c := range []struct{ spec, want string }{
		{"{message: hi}", ""}, // replicas defaulted to 1; the transition rule is not run on create
		{"{message: long}", "Greeter ops/g: spec: Invalid value: failed rule: self.message.size() < 3: "},
		{"{message: hi, replicas: 6}", "Greeter ops/g: spec: Invalid value: at most five replicas: "},
		{"{message: long, replicas: many}", "Greeter ops/g: spec.replicas: must be of type integer: \"string\": "},
	} {
		got := run(t, crd, cr(c.spec))
		if (c.want == "") != (got == "") || !strings.HasPrefix(got, c.want) {
			t.Errorf("spec %s:\n got %q\nwant %q…", c.spec, got, c.want)
		}
	}
}

// A verdict of more than apiop.MaxProblems problems is cut to them with
// "and N more", and the error line cuts it again counting those: one rule.
func TestManyProblemsCountedThroughBothCuts(t *testing.T) {
	cr := "apiVersion: greeter.example.com/v1alpha1\nkind: Greeter\nmetadata: {name: g, namespace: ops}\nspec:\n  message: hi\n"
	for i := range 70 {
		cr += fmt.Sprintf("  typo%02d: x\n", i)
	}
	got := run(t, demoCRD(t), cr)
	if !strings.Contains(got, "spec.typo02: unknown field: the CRD's schema does not define it, so the API server would prune it; and 67 more: ") {
		t.Errorf("got %q", got)
	}
}

// Custom resources of one CRD version go to olm-cmp-check in one job that
// carries the schema once; each gets its own verdict, kept by its own key,
// so a later render with one more custom resource checks only that one.
func TestCustomResourcesOfAVersionInOneJob(t *testing.T) {
	greeter := func(name, message string) string {
		return "apiVersion: greeter.example.com/v1alpha1\nkind: Greeter\nmetadata: {name: " + name + ", namespace: ops}\nspec: {message: " + message + "}"
	}
	crd := broken(t, "              message:\n                type: string\n", "              message:\n                type: string\n                maxLength: 3\n")
	before := checkproc.Spawns()
	got := run(t, crd, greeter("a", "hi"), greeter("b", "toolong"), greeter("c", "yo"))
	if !strings.HasPrefix(got, "Greeter ops/b: spec.message: ") || strings.Contains(got, "Greeter ops/a") || strings.Contains(got, "Greeter ops/c") {
		t.Errorf("got %q", got)
	}
	if n := checkproc.Spawns() - before; n != 1 {
		t.Errorf("%d batches for one render", n)
	}
	// Warm: the CRD's verdict and the three custom resources' are kept;
	// only d is sent (to a helper that keeps the request and fails).
	dir := t.TempDir()
	request := filepath.Join(dir, "request")
	helper := filepath.Join(dir, checkproc.Executable)
	if err := os.WriteFile(helper, []byte("#!/bin/sh\n/bin/cat > "+request+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	defer checkproc.UseExecutable(helper)()
	if got := run(t, crd, greeter("a", "hi"), greeter("b", "toolong"), greeter("c", "yo"), greeter("d", "hi")); !strings.HasPrefix(got, "Greeter ops/d could not be checked") {
		t.Errorf("got %q", got)
	}
	sent, err := os.ReadFile(request)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(sent); strings.Count(s, `"metadata":{"name"`) != 1 || !strings.Contains(s, `"name":"d"`) || strings.Contains(s, `"op":"crd"`) {
		t.Errorf("sent %s", s)
	}
}

// A batch whose inputs are over the bound of one olm-cmp-check request is
// refused before it is written, by its size and with a fix about the
// input, not about olm-cmp-check.
func TestBatchOverTheRequestBoundNamesTheInput(t *testing.T) {
	big := make([]byte, checkproc.MaxRequestBytes/2)
	cv := &crVersion{input: apiop.CustomResourcesInput{Schema: []byte("null")}}
	todo := []pending{
		{op: apiop.CustomResources, what: "Greeter ops/a", version: cv, load: func() ([]byte, error) { return big, nil }},
		{op: apiop.CustomResources, what: "Greeter ops/b", version: cv, load: func() ([]byte, error) { return big, nil }},
	}
	_, _, err := batch(todo)
	want := "Greeter ops/a and 1 more objects could not be checked as the API server would check them, so nothing is rendered: the CustomResourceDefinitions, custom resources and webhook configurations to check are "
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "; fix: ship fewer or smaller custom resources (spec.examples, spec.exclude, the extra manifests) or CustomResourceDefinitions") {
		t.Errorf("got %v", err)
	}
	if errors.Is(err, checkproc.ErrMissing) {
		t.Error("blamed on olm-cmp-check")
	}
}

// A version's custom resources go in one job until their bytes reach the
// schema's size (at least minChunkBytes), then in the next: the schema is
// never most of a request, and a job is never a whole version of slow
// objects.
func TestCustomResourcesChunkedByTheirSchemasSize(t *testing.T) {
	jsonOf := func(n int) []byte { return []byte(`"` + strings.Repeat("a", n-2) + `"`) }
	object := func(n int) func() ([]byte, error) {
		return func() ([]byte, error) { return jsonOf(n), nil }
	}
	small := &crVersion{input: apiop.CustomResourcesInput{Schema: []byte("null")}}
	big := &crVersion{input: apiop.CustomResourcesInput{Schema: jsonOf(4 * minChunkBytes)}}
	var todo []pending
	for range 4 {
		todo = append(todo, pending{op: apiop.CustomResources, version: small, load: object(minChunkBytes / 2)})
		todo = append(todo, pending{op: apiop.CustomResources, version: big, load: object(minChunkBytes)})
	}
	_, units, err := batch(todo)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range units {
		got = append(got, fmt.Sprintf("%d×%d", len(u), len(u[0].version.input.Schema)))
	}
	if want := fmt.Sprintf("2×4 4×%d 2×4", 4*minChunkBytes); strings.Join(got, " ") != want {
		t.Errorf("jobs (objects×schema bytes): %s, want %s", strings.Join(got, " "), want)
	}
}

// A version whose schema holds CEL rules (and is small enough to send once
// a job) gives each custom resource a job of its own: a rule's cost does
// not follow an object's size, and a job's verdict is kept as soon as it
// is answered, so a render its deadline stops goes on from there the next
// time. A schema over maxSoloSchemaBytes keeps the size rule.
func TestCustomResourcesWithCELRulesOneAJob(t *testing.T) {
	object := func() ([]byte, error) { return []byte(`{"spec":{}}`), nil }
	rules := &crVersion{input: apiop.CustomResourcesInput{Schema: []byte(`{"type":"object","x-kubernetes-validations":[{"rule":"true"}]}`)}}
	plain := &crVersion{input: apiop.CustomResourcesInput{Schema: []byte(`{"type":"object"}`)}}
	bigRules := &crVersion{input: apiop.CustomResourcesInput{Schema: []byte(`{"x-kubernetes-validations":[{"rule":"true"}],"description":"` + strings.Repeat("a", maxSoloSchemaBytes) + `"}`)}}
	var todo []pending
	for range 3 {
		for _, cv := range []*crVersion{rules, plain, bigRules} {
			todo = append(todo, pending{op: apiop.CustomResources, version: cv, load: object})
		}
	}
	_, units, err := batch(todo)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range units {
		name := map[*crVersion]string{rules: "rules", plain: "plain", bigRules: "bigRules"}[u[0].version]
		got = append(got, fmt.Sprintf("%s×%d", name, len(u)))
	}
	if want := "rules×1 plain×3 bigRules×3 rules×1 rules×1"; strings.Join(got, " ") != want {
		t.Errorf("jobs: %s, want %s", strings.Join(got, " "), want)
	}
}
