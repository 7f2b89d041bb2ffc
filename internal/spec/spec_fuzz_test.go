package spec_test

// Fuzz targets for the two ways a hostile repository or Application reaches a
// Spec: the olm-cmp.yaml bytes and the plugin overrides (Argo CD parameters,
// plugin env). `make fuzz` runs each for FUZZTIME; the seed corpora in
// testdata/fuzz hold the hostile shapes found by hand and every crasher found
// since (alias bombs and cycles, deep nesting, duplicate keys, binary
// garbage), so plain `go test` replays them all.

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// seedSpecs are valid olm-cmp.yaml files shipped with the repository, so the
// fuzzer starts from documents that get past decoding into Validate.
var seedSpecs = []string{
	"../../examples/demo/olm-cmp.yaml",
	"../cmpserver/testdata/repo/apps/tiny/olm-cmp.yaml",
}

// FuzzParse: any bytes as olm-cmp.yaml. Parse, Validate and Normalized must
// not panic; an error names the file; a parsed spec normalizes the same way
// twice and its normalized form is a fixed point (it is a cache key: a key
// that changes on a round trip would split the cache).
func FuzzParse(f *testing.F) {
	for _, p := range seedSpecs {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const name = "apps/x/olm-cmp.yaml"
		file, err := spec.Parse(name, data)
		if err != nil {
			checkMessage(t, err.Error(), string(data))
			if !strings.HasPrefix(err.Error(), name+": ") {
				t.Fatalf("error does not name the file: %q", err)
			}
			return
		}
		s := file.Spec
		if err := s.Validate(); err != nil {
			checkMessage(t, err.Error(), string(data))
		}
		checkNormalized(t, &s)
	})
}

// FuzzApplyOverrides: one override of any name and value, in each of the
// three shapes Argo CD sends (string, array, map), on a valid spec. It must
// not panic; an error names the override's source; a result validates and
// normalizes without panicking.
func FuzzApplyOverrides(f *testing.F) {
	for _, p := range spec.Params() {
		f.Add(p.Name, uint8(0), "x")
	}
	f.Add("patches", uint8(0), "- patch: |\n    labels: &l {x: *l}\n")
	f.Add("config", uint8(0), "env: [{name: A, value: b}]\nresources: {limits: {cpu: 1e3}}")
	f.Add("syncWaves", uint8(0), `{"crds": -10, "crs": 99999999999999999999}`)
	f.Add("watchNamespaces", uint8(1), "a\nb\n\nc")
	f.Add("images", uint8(2), "quay.io/=mirror/\n=x")
	f.Add("createNamespace", uint8(0), "TRUE")
	f.Fuzz(func(t *testing.T, name string, shape uint8, value string) {
		base := spec.Spec{Bundle: "quay.io/org/bundle:1.0", Namespace: "ns", Exclude: []string{"ConsoleYAMLSample"}}
		o := spec.Override{Name: name, Source: "parameter under test"}
		switch shape % 3 {
		case 0:
			o.String = &value
		case 1:
			o.Array = strings.Split(value, "\n")
		case 2:
			o.Map = map[string]string{}
			for _, line := range strings.Split(value, "\n") {
				k, v, _ := strings.Cut(line, "=")
				o.Map[k] = v
			}
		}
		out, err := spec.ApplyOverrides(base, []spec.Override{o})
		if err != nil {
			checkMessage(t, err.Error(), name+value)
			if !strings.HasPrefix(err.Error(), o.Source) && !strings.HasPrefix(err.Error(), "applying "+o.Source) {
				t.Fatalf("error does not name the override: %q", err)
			}
			return
		}
		if err := out.Validate(); err != nil {
			checkMessage(t, err.Error(), name+value)
		}
		checkNormalized(t, &out)
	})
}

// checkMessage holds what every error shown to a user must: some text, no
// blank lines (errors.Join puts one problem per line), no panic text. It does
// not require a single line: the duplicate-key error of the YAML decoder and
// the joined problems of Validate span several today.
func checkMessage(t *testing.T, msg, input string) {
	t.Helper()
	if strings.TrimSpace(msg) == "" {
		t.Fatal("empty error message")
	}
	for _, bad := range []string{"panic", "runtime error", "goroutine "} {
		// A message may quote the input, which may hold anything.
		if strings.Contains(msg, bad) && !strings.Contains(input, bad) {
			t.Fatalf("error message holds %q: %q", bad, msg)
		}
	}
	for _, line := range strings.Split(msg, "\n") {
		if strings.TrimSpace(line) == "" {
			t.Fatalf("error message has a blank line: %q", msg)
		}
	}
}

// checkNormalized: Normalized is deterministic, is JSON, and decoding and
// normalizing it again gives the same bytes.
func checkNormalized(t *testing.T, s *spec.Spec) {
	t.Helper()
	n1, n2 := s.Normalized(), s.Normalized()
	if !bytes.Equal(n1, n2) {
		t.Fatalf("Normalized differs between calls:\n%s\n%s", n1, n2)
	}
	if !json.Valid(n1) {
		t.Fatalf("Normalized is not JSON: %q", n1)
	}
	var back spec.Spec
	if err := json.Unmarshal(n1, &back); err != nil {
		t.Fatalf("Normalized does not decode: %v\n%s", err, n1)
	}
	if n3 := back.Normalized(); !bytes.Equal(n1, n3) {
		t.Fatalf("Normalized is not a fixed point:\n%s\n%s", n1, n3)
	}
}
