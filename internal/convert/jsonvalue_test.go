package convert

import (
	"encoding/json"
	"testing"

	yamlv2 "go.yaml.in/yaml/v2"
	sigsyaml "sigs.k8s.io/yaml"
)

// jsonValue's value marshals to what sigs.k8s.io/yaml's JSONToYAML prints
// (toRNode used JSONToYAML; the output must not change by a byte).
var jsonValueSeeds = []string{
	`{"a":1,"b":-5,"c":0,"d":-0,"e":1.5,"f":1.0,"g":1e3,"h":1e+21,"i":-2.5e-7}`,
	`{"max":9223372036854775807,"over":9223372036854775808,"uover":18446744073709551616,"under":-9223372036854775809,"huge":1e400}`,
	`{"s":["true","false","null","1","1.5","0x10","0o7","0b1","~","","yes","no","on","2001-12-14","12:30:45","-","*a","&a","!t","a: b","#c"," lead","trail ","é","\u003c\u2028","a\nb\n","tab\there"]}`,
	`{"nested":{"a10":{"x":[1,{"y":null}]},"a9":true,"B":false,"_":{},"":[]},"empty":{},"list":[]}`,
	`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x","labels":{"app":"x"}},"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"m","image":"q.io/x@sha256:00","args":["--a=1","--b"],"resources":{"limits":{"cpu":"500m"}}}]}}}}`,
	`[1,"two",3.0,null]`, `"just a string"`, `42`, `null`, `true`,
}

func TestJSONValueMarshalsAsJSONToYAML(t *testing.T) {
	for _, j := range jsonValueSeeds {
		checkJSONValue(t, []byte(j))
	}
}

func FuzzJSONValue(f *testing.F) {
	for _, j := range jsonValueSeeds {
		f.Add([]byte(j))
	}
	f.Fuzz(func(t *testing.T, j []byte) {
		if !json.Valid(j) {
			return
		}
		checkJSONValue(t, j)
	})
}

func checkJSONValue(t *testing.T, j []byte) {
	t.Helper()
	want, werr := sigsyaml.JSONToYAML(j)
	v, err := jsonValue(j)
	if werr != nil {
		// YAML v2 refuses some JSON (keys repeated, say); toRNode's JSON
		// never holds them. Nothing to compare.
		return
	}
	if err != nil {
		t.Fatalf("%s: %v (JSONToYAML: %q)", j, err, want)
	}
	got, err := yamlv2.Marshal(v)
	if err != nil {
		t.Fatalf("%s: %v", j, err)
	}
	if string(got) != string(want) {
		t.Errorf("%s:\ngot:\n%s\nJSONToYAML:\n%s", j, got, want)
	}
}
