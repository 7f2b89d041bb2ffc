package apicheck

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/internal/validate/apiop"
)

// demoCRD is the demo bundle's CRD as JSON, with old replaced by new.
func demoCRD(t *testing.T, old, new string) []byte {
	t.Helper()
	b, err := os.ReadFile("../../../examples/demo/bundle/manifests/greeter.example.com_greeters.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("the demo CRD no longer holds %q", old)
	}
	j, err := yaml.YAMLToJSON([]byte(strings.Replace(string(b), old, new, 1)))
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// call runs op through Handlers, as olm-cmp-check does, and returns its
// verdict's problems.
func call(t *testing.T, op string, in any) []string {
	t.Helper()
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Handlers()[op](context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	return out.(apiop.Verdict).Problems
}

// The server reports some problems in the order of a map's keys: the line
// is the same on every check.
func TestCRDProblemsInAStableOrder(t *testing.T) {
	crd := json.RawMessage(demoCRD(t, "              message:\n                type: string\n", "              message: {description: a}\n              b: {description: b}\n              c: {description: c}\n              d: {description: d}\n"))
	first := strings.Join(call(t, apiop.CRD, crd), "; ")
	for range 20 {
		if got := strings.Join(call(t, apiop.CRD, crd), "; "); got != first {
			t.Fatalf("two checks, two orders:\n%s\n%s", first, got)
		}
	}
	if !strings.HasPrefix(first, "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[b].type: ") {
		t.Errorf("not sorted: %s", first)
	}
	if got := call(t, apiop.CRD, json.RawMessage(demoCRD(t, "x", "x"))); len(got) != 0 {
		t.Errorf("the demo CRD: %q", got)
	}
}

// crs runs the custom-resources check of objects against schema through
// Handlers and returns each object's problems.
func crs(t *testing.T, in apiop.CustomResourcesInput, objects ...string) [][]string {
	t.Helper()
	for _, o := range objects {
		in.Objects = append(in.Objects, json.RawMessage(o))
	}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Handlers()[apiop.CustomResources](context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	var problems [][]string
	for _, v := range out.(apiop.Verdicts).Verdicts {
		problems = append(problems, v.Problems)
	}
	if len(problems) != len(objects) {
		t.Fatalf("%d verdicts for %d objects", len(problems), len(objects))
	}
	return problems
}

// A custom resource is pruned, defaulted and validated against the schema
// it is sent with; its metadata with a custom resource's name rule.
func TestCustomResource(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"spec":{"type":"object","required":["size"],"properties":{"size":{"type":"integer","maximum":3}}}}}`)
	in := apiop.CustomResourcesInput{Group: "greeter.example.com", Kind: "Greeter", Schema: schema}
	bad := `{"apiVersion":"greeter.example.com/v1","kind":"Greeter","metadata":{"name":"Bad_Name"},"spec":{"size":4,"extra":1}}`
	good := `{"apiVersion":"greeter.example.com/v1","kind":"Greeter","metadata":{"name":"good"},"spec":{"size":2}}`
	want := []string{
		`metadata.name: Invalid value "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')`,
		"spec.extra: unknown field: the CRD's schema does not define it, so the API server would prune it",
		"spec.size: should be less than or equal to 3",
	}
	// Each object its own verdict, in order.
	got := crs(t, in, good, bad, good)
	if strings.Join(got[1], "\n") != strings.Join(want, "\n") || len(got[0]) != 0 || len(got[2]) != 0 {
		t.Errorf("got\n%q\nwant\n%s", got, strings.Join(want, "\n"))
	}
	// preserveUnknownFields: nothing pruned.
	in.PreserveUnknownFields = true
	if got := crs(t, in, bad)[0]; len(got) != 2 || strings.Contains(strings.Join(got, " "), "extra") {
		t.Errorf("preserving unknown fields: %q", got)
	}
	// No schema: metadata only.
	in.Schema = json.RawMessage(`null`)
	if got := crs(t, in, bad)[0]; len(got) != 1 {
		t.Errorf("without a schema: %q", got)
	}
}

// A webhook's URL must be https; a service's path segments DNS subdomains.
func TestWebhookClientConfig(t *testing.T) {
	url, path := "http://example.com/hook", "/a/../b"
	for _, c := range []struct {
		in   apiop.WebhookInput
		want string
	}{
		{apiop.WebhookInput{Index: 1, URL: &url}, `webhooks[1].clientConfig.url: Invalid value "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`},
		{apiop.WebhookInput{Index: 0, Service: &apiop.WebhookService{Namespace: "ops", Name: "hook", Path: &path, Port: 443}}, `webhooks[0].clientConfig.service.path: Invalid value "/a/../b": segment[1]: a lowercase RFC 1123 subdomain`},
		{apiop.WebhookInput{Index: 0, Service: &apiop.WebhookService{Namespace: "ops", Name: "hook", Port: 443}}, ""},
	} {
		if got := strings.Join(call(t, apiop.WebhookClientConfig, c.in), "; "); !strings.HasPrefix(got, c.want) || (c.want == "") != (got == "") {
			t.Errorf("%+v: got %q, want %q", c.in, got, c.want)
		}
	}
}

// An input olm-cmp would not send (another build's) is an error, not a
// verdict.
func TestInputOfAnotherBuild(t *testing.T) {
	if _, err := Handlers()[apiop.CustomResources](context.Background(), json.RawMessage(`[1]`)); err == nil || !strings.Contains(err.Error(), "is it the same build as olm-cmp?") {
		t.Errorf("got %v", err)
	}
}
