package crdcheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/crdify/pkg/runner"
	"sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/safety/crdop"
)

// The CRD pairs in testdata are widgets.example.com as internal/safety's
// tests write it (spec with integer, string, enum, array, map, nullable and
// oneOf properties), with extra versions: <case>.old.yaml is the CRD the
// cluster runs, <case>.new.yaml the one that replaces it.

// crdFrom decodes a CRD written as YAML.
func crdFrom(t *testing.T, data []byte) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	c := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, c); err != nil {
		t.Fatal(err)
	}
	return c
}

func testdataCRD(t *testing.T, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return crdFrom(t, data)
}

// stored is what internal/safety sets as the old CRD's stored versions:
// every version it serves or stores.
func stored(c *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	c.Status.StoredVersions = nil
	for _, v := range c.Spec.Versions {
		if v.Served || v.Storage {
			c.Status.StoredVersions = append(c.Status.StoredVersions, v.Name)
		}
	}
	slices.Sort(c.Status.StoredVersions)
	return c
}

// TestHandler: the operation reads the two CRDs as JSON and answers the
// findings Compare makes; an input olm-cmp would not send is refused with
// one line, not judged.
func TestHandler(t *testing.T) {
	old, cur := stored(testdataCRD(t, "new-pair.old.yaml")), testdataCRD(t, "new-pair.new.yaml")
	o, _ := json.Marshal(testdataCRD(t, "new-pair.old.yaml")) // no status: the input carries the stored versions
	n, _ := json.Marshal(cur)
	in, _ := json.Marshal(crdop.Input{Old: o, New: n, StoredVersions: old.Status.StoredVersions})
	h := Handlers()[crdop.Upgrade]
	got, err := h(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Compare(t.Context(), old, cur)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("test bug: the pair has no findings")
	}
	v, ok := got.(crdop.Verdict)
	if !ok || !slices.Equal(v.Findings, want) {
		t.Errorf("handler answered %#v, want the findings %v", got, want)
	}
	// v2's maximum lowered from 10 to 5: served next to v1 (10), v3 (7).
	if !slices.ContainsFunc(want, func(f crdop.Finding) bool {
		return f.Severity == crdop.Error && f.Rule == "maximum" && f.Version == "v2" && f.Path == ".spec.size"
	}) {
		t.Errorf("no maximum error for v2 .spec.size in %v", want)
	}
	for _, bad := range []string{`{"old":"x","new":{}}`, `[]`, `{"old":{"spec":{"versions":7}},"new":{}}`} {
		_, err := h(t.Context(), json.RawMessage(bad))
		if err == nil || !strings.HasPrefix(err.Error(), checkproc.Executable+" got an input it cannot read") || strings.Contains(err.Error(), "\n") {
			t.Errorf("input %s: err = %v", bad, err)
		}
	}
}

// TestPlainMessage: crdify's Go formatting is rewritten in plain words.
func TestPlainMessage(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`type changed : "string" -> "integer"`, "type changed: string -> integer"},
		{`type changed : "" -> "string"`, "type changed: none -> string"},
		{`default value changed : "\"a\"" -> "\"b\""`, `default value changed: "a" -> "b"`},
		{`default value removed : "1"`, "default value removed: 1"},
		{`pattern changed : "^[a-z]+$" -> "^[a-z]{2,}$"`, "pattern changed: ^[a-z]+$ -> ^[a-z]{2,}$"},
		{`allowed enum values removed : ["b" "c"]`, `allowed enum values removed: "b", "c"`},
		{`new required fields: [name size]`, "new required fields: name, size"},
		{`maximum decreased : 10 -> 9`, "maximum decreased: 10 -> 9"},
		{`nullable removed : true -> false`, "nullable removed: true -> false"},
		{`scope changed : "Namespaced" -> "Cluster"`, "scope changed: Namespaced -> Cluster"},
		{`something else`, "something else"},
	} {
		if got := plainMessage(tc.in); got != tc.want {
			t.Errorf("plainMessage(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestRunRecovers: a panic inside crdify becomes an error (internal/safety
// refuses a version without a schema before asking, so the known one does
// not happen; this is for the next), answered as one line, not a crash of
// olm-cmp-check.
func TestRunRecovers(t *testing.T) {
	c := stored(testdataCRD(t, "new-pair.old.yaml"))
	broken := c.DeepCopy()
	broken.Spec.Versions[0].Schema = nil
	_, err := Compare(t.Context(), c, broken)
	if err == nil || err.Error() != "crdify failed on it: check that each of its versions has a valid schema; if they do, please report it" {
		t.Errorf("err = %v", err)
	}
}

// TestRunnerMatchesCrdify: running crdify a version and a pair at a time
// gives the findings of crdify's own runner, on multi-version CRDs and on
// the real bundles' CRDs.
func TestRunnerMatchesCrdify(t *testing.T) {
	type pair struct {
		name     string
		old, cur *apiextensionsv1.CustomResourceDefinition
	}
	var pairs []pair
	for _, name := range []string{"new-pair", "old-issue-kept", "versions-removed"} {
		pairs = append(pairs, pair{name, testdataCRD(t, name+".old.yaml"), testdataCRD(t, name+".new.yaml")})
	}
	shared := []string{"cert-manager-operator-1.20.0", "loki-operator-0.11.0", "percona-server-mongodb-operator-1.23.0"}
	if testing.Short() {
		shared = shared[:1] // percona's 4 served versions take seconds in crdify's runner
	}
	for _, dir := range shared {
		path := filepath.Join("../../../../shared/bundles", dir)
		if _, err := os.Stat(path); err != nil {
			t.Logf("../shared/bundles/%s is absent (reference data outside the repository): only the synthetic cases run", dir)
			continue
		}
		b, err := bundle.LoadDir(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range b.CRDs {
			c := crdFrom(t, []byte(o.MustString()))
			// Against itself with its last version's schema loosened, so
			// that the served pairs have findings to subtract.
			cur := c.DeepCopy()
			last := cur.Spec.Versions[len(cur.Spec.Versions)-1].Schema.OpenAPIV3Schema
			last.Description += " changed"
			last.Required = append(last.Required, "x")
			pairs = append(pairs, pair{dir + " " + c.Name, c, cur})
		}
	}
	r, err := newCrdifyRunner(crdifyConfig())
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := runner.New(crdifyConfig(), runner.DefaultRegistry())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pairs {
		stored(p.old)
		res, err := r.run(t.Context(), p.old, p.cur)
		if err != nil {
			t.Fatal(err)
		}
		mine, theirs := flatResults(res), flatResults(theirs.Run(p.old, p.cur))
		if len(theirs) == 0 {
			t.Errorf("%s: test bug: crdify finds nothing to compare", p.name)
		}
		// crdify subtracts the old CRD's issues by exact message, and
		// lists sets in random order: it may keep an issue the old CRD
		// had (in another order). Those are the only differences allowed.
		oldSelf := p.old.DeepCopy()
		oldSelf.Spec.Conversion = nil
		known := flatResults(&runner.Results{ServedVersionValidation: r.served.Validate(withVersions(p.old), oldSelf)})
		for k := range mine {
			if !theirs[k] {
				t.Errorf("%s: %q not in crdify's results", p.name, k)
			}
		}
		for k := range theirs {
			if !mine[k] && !known[k] {
				t.Errorf("%s: crdify's %q is missing", p.name, k)
			}
		}
	}
}

// flatResults is every error and warning of res as "version property rule:
// message" (the message as plainMessage writes it).
func flatResults(res *runner.Results) map[string]bool {
	out := map[string]bool{}
	add := func(v, p, rule string, msgs []string) {
		for _, m := range msgs {
			out[v+" "+p+" "+rule+": "+plainMessage(m)] = true
		}
	}
	for _, r := range res.CRDValidation {
		add("", "", r.Name, slices.Concat(r.Errors, r.Warnings))
	}
	for _, v := range slices.Concat(res.SameVersionValidation, res.ServedVersionValidation) {
		for _, p := range v.PropertyComparisons {
			for _, r := range p.ComparisonResults {
				add(v.Version, p.Property, r.Name, r.Errors)
				add(v.Version, p.Property, r.Name+" (warning)", r.Warnings)
			}
		}
	}
	return out
}
