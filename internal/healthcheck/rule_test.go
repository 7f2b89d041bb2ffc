package healthcheck

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// crd builds a CRD of example.com/Widget whose storage version (v1) has status as its status
// schema (YAML; empty for no status property). A served, non-storage v0 with a conditions list
// checks that only the storage version is read.
func crd(t *testing.T, status string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	props := map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object"}}
	if status != "" {
		var s apiextensionsv1.JSONSchemaProps
		if err := yaml.Unmarshal([]byte(status), &s); err != nil {
			t.Fatal(err)
		}
		props["status"] = s
	}
	old := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"conditions": conditionList(false)}},
	}}
	return &apiextensionsv1.CustomResourceDefinition{
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget", Plural: "widgets"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v0", Served: true, Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &old}},
				{Name: "v1", Served: true, Storage: true, Schema: &apiextensionsv1.CustomResourceValidation{
					OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props}}},
			},
		},
	}
}

func conditionList(withGeneration bool) apiextensionsv1.JSONSchemaProps {
	p := map[string]apiextensionsv1.JSONSchemaProps{"type": {Type: "string"}, "status": {Type: "string"}, "message": {Type: "string"}}
	if withGeneration {
		p["observedGeneration"] = apiextensionsv1.JSONSchemaProps{Type: "integer"}
	}
	return apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{
		Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: p}}}
}

const metaConditions = `
      type: array
      items:
        type: object
        properties:
          type: {type: string}
          status: {type: string}
          reason: {type: string}
          message: {type: string}
          observedGeneration: {type: integer}`

func TestDecide(t *testing.T) {
	words := casings(healthyWords)
	bad := casings(degradedWords)
	cases := []struct {
		name, status string
		want         Rule
		cannot       string // the CannotJudge reason, when the kind cannot be judged
	}{{
		name: "metav1 conditions and observedGeneration",
		status: `type: object
properties:
  observedGeneration: {type: integer, format: int64}
  conditions:` + metaConditions,
		want: Rule{Conditions: true, ConditionGeneration: true, ObservedGeneration: true},
	}, {
		name: "phase without enum: the words in three casings",
		status: `type: object
properties:
  phase: {type: string}`,
		want: Rule{PhaseField: "phase", Healthy: words, Degraded: bad},
	}, {
		name: "state with an enum: its own values sorted into healthy and degraded",
		status: `type: object
properties:
  state: {type: string, enum: [valid, ready, pending, processing, invalid, expired, errored]}`,
		want: Rule{PhaseField: "state", PhaseEnum: []string{"valid", "ready", "pending", "processing", "invalid", "expired", "errored"},
			Healthy: []string{"ready"}, Degraded: []string{"errored"}},
	}, {
		name: "phase preferred to state",
		status: `type: object
properties:
  state: {type: string, enum: [Up]}
  phase: {type: string, enum: [Pending, Running, Failed]}`,
		want: Rule{PhaseField: "phase", PhaseEnum: []string{"Pending", "Running", "Failed"}, Healthy: []string{"Running"}, Degraded: []string{"Failed"}},
	}, {
		name: "a phase enum with no healthy value is dropped when conditions remain",
		status: `type: object
properties:
  phase: {type: string, enum: [Active, Completed2]}
  conditions:` + metaConditions,
		want: Rule{Conditions: true, ConditionGeneration: true},
	}, {
		name: "a phase enum with no healthy value and nothing else",
		status: `type: object
properties:
  phase: {type: string, enum: [Active, Inactive]}`,
		cannot: "status.phase's enum Active, Inactive has no Running, Ready or Succeeded-like value, and there is no status.conditions",
	}, {
		name: "an enum of non-strings is read as no enum",
		status: `type: object
properties:
  phase: {type: string, enum: [1, Running]}`,
		want: Rule{PhaseField: "phase", Healthy: words, Degraded: bad},
	}, {
		name: "an enum longer than maxEnum is read as no enum",
		status: `type: object
properties:
  phase: {type: string, enum: [` + strings.Repeat("x,", maxEnum) + `Running]}`,
		want: Rule{PhaseField: "phase", Healthy: words, Degraded: bad},
	}, {
		name:   "no status",
		cannot: "no status in its schema",
	}, {
		name: "status without conditions or phase (CheCluster's chePhase is not read)",
		status: `type: object
properties:
  chePhase: {type: string}
  observedGeneration: {type: integer}`,
		cannot: "no status.conditions or status.phase in its schema",
	}, {
		name: "conditions that are not a list of type/status objects",
		status: `type: object
properties:
  conditions: {type: object}
  phase: {type: integer}`,
		cannot: "no status.conditions or status.phase in its schema",
	}, {
		name: "observedGeneration that is not an integer is not compared",
		status: `type: object
properties:
  observedGeneration: {x-kubernetes-int-or-string: true}
  conditions:` + metaConditions,
		want: Rule{Conditions: true, ConditionGeneration: true},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decide(crd(t, tc.status))
			if tc.cannot != "" {
				var cj *CannotJudge
				if !errors.As(err, &cj) || cj.Why != tc.cannot {
					t.Fatalf("got %v, want cannot judge %q", err, tc.cannot)
				}
				if want := "cannot judge: Widget.example.com (" + tc.cannot + ")"; err.Error() != want {
					t.Errorf("message %q, want %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Group, tc.want.Kind, tc.want.Version = "example.com", "Widget", "v1"
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestScriptJudgeTable: the script's judge table says what Decide found, and hostile enum
// values (quotes, newlines, a Lua comment end) stay inside their string literals.
func TestScriptJudgeTable(t *testing.T) {
	r := Rule{Group: "example.com", Kind: "Widget", Version: "v1", CRD: "widgets.example.com",
		Conditions: true, PhaseField: "phase",
		PhaseEnum: []string{"Running", "x\"]=nil}\nos.exit()--", "Failed"},
		Healthy:   []string{"Running", "x\"]=nil}\nos.exit()--"}, Degraded: []string{"Failed"}}
	s := r.Script()
	for _, want := range []string{
		"-- Health of Widget (example.com/v1), generated by olm-cmp health-checks",
		"  conditions = true,\n",
		"  conditionGeneration = false,\n",
		"  observedGeneration = false,\n",
		`  phaseField = "phase",`,
		`  healthyPhases = {["Running"] = true, ["x\034]=nil}\010os.exit()--"] = true},`,
		`  degradedPhases = {["Failed"] = true},`,
		"(enum: Running, x\"]=nil}?os.exit()--, Failed)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s[:strings.Index(s, "-- The shared body")])
		}
	}
	if strings.Contains(s, "\nos.exit()") {
		t.Error("an enum value started a line of code")
	}
	if strings.ContainsAny(s, "\t\r") || !strings.HasSuffix(s, "\n") || strings.HasSuffix(s, "\n\n") {
		t.Error("a script must have no tabs or CRs and end with exactly one newline (argocd-cm literal blocks)")
	}
	none := Rule{Group: "example.com", Kind: "Widget", Version: "v1", Conditions: true}.Script()
	if !strings.Contains(none, "  phaseField = nil,\n  healthyPhases = {},\n  degradedPhases = {},\n") {
		t.Errorf("a rule without a phase must say so in its table")
	}
}

func TestLuaString(t *testing.T) {
	for in, want := range map[string]string{
		"Running":   `"Running"`,
		`a"b\c`:     `"a\034b\092c"`,
		"é\n":       `"\195\169\010"`,
		"]]--[[x":   `"]]--[[x"`,
		"":          `""`,
		"tab\there": `"tab\009here"`,
	} {
		if got := luaString(in); got != want {
			t.Errorf("luaString(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestRenderForms: each output form reads back (as YAML or JSON) as exactly the checks' scripts
// under their keys.
func TestRenderForms(t *testing.T) {
	var checks []Check
	for _, r := range []Rule{
		{Group: "example.com", Kind: "Widget", Version: "v1", Conditions: true},
		{Group: "example.com", Kind: "Gadget", Version: "v1", PhaseField: "phase", Healthy: []string{"Running"}},
	} {
		checks = append(checks, Check{Rule: r, Key: r.Key(), Script: r.Script()})
	}
	want := map[string]string{}
	for _, c := range checks {
		want[c.Key] = c.Script
	}
	for _, format := range []string{FormatYAML, FormatJSON, FormatHelm} {
		b, err := Render(checks, format)
		if err != nil {
			t.Fatal(err)
		}
		var cm struct {
			Kind     string
			Metadata struct{ Name string }
			Data     map[string]string
			Configs  struct {
				CM map[string]string `json:"cm"`
			} `json:"configs"`
		}
		if format == FormatJSON {
			err = json.Unmarshal(b, &cm)
		} else {
			err = yaml.Unmarshal(b, &cm)
		}
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		got := cm.Data
		if format == FormatHelm {
			got = cm.Configs.CM
		} else if cm.Kind != "ConfigMap" || cm.Metadata.Name != "argocd-cm" {
			t.Errorf("%s: %s %s, want ConfigMap argocd-cm", format, cm.Kind, cm.Metadata.Name)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: does not read back as the scripts", format)
		}
	}
	if _, err := Render(checks, "xml"); err == nil || !strings.Contains(err.Error(), "use yaml") {
		t.Errorf("-o xml: got %v", err)
	}
}
