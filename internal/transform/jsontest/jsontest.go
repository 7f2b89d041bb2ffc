// Package jsontest holds test helpers for the two forms a render is served
// in (YAML and JSON): how Argo CD's repo-server reads a manifest, and strict
// JSON decoding, so tests can check that both forms mean the same object.
package jsontest

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"
)

// AsRepoServerReads decodes a manifest the way Argo CD's repo-server does
// (kube.SplitYAML: sigs.k8s.io/yaml, a YAML 1.1 reader, for YAML and JSON
// alike), numbers kept as written.
func AsRepoServerReads(t testing.TB, doc string) any {
	t.Helper()
	js, err := sigsyaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatalf("YAMLToJSON: %v\n%s", err, doc)
	}
	var v any
	d := json.NewDecoder(strings.NewReader(string(js)))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return numbers(v)
}

// AsJSON decodes strict JSON (the repo-server's decoder refuses anything else).
func AsJSON(t testing.TB, doc string) any {
	t.Helper()
	var v any
	d := json.NewDecoder(strings.NewReader(doc))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	return numbers(v)
}

// numbers turns json.Numbers into int64 or float64, integral values into
// int64 (as sigs.k8s.io/yaml prints them): 12e3 and 12000 are one number.
func numbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = numbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = numbers(e)
		}
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f)
		}
		return f
	}
	return v
}
