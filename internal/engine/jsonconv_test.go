package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/engine/enginetest"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

func TestManifestJSON(t *testing.T) {
	for _, c := range []struct {
		name, yaml, want string
	}{
		{"empty map and list", "a: {}\nb: []\nc: {d: []}\n", `{"a":{},"b":[],"c":{"d":[]}}`},
		{"quoted numbers stay strings", "port: \"8080\"\nv: '1.0'\nb: \"true\"\nnil: \"null\"\nanswer: \"yes\"\n", `{"port":"8080","v":"1.0","b":"true","nil":"null","answer":"yes"}`},
		{"plain scalars", "i: 42\nneg: -3\nf: 1.5\ne: 12e3\nt: true\nT: True\nnothing: null\ntilde: ~\nempty:\n", `{"i":42,"neg":-3,"f":1.5,"e":12e3,"t":true,"T":true,"nothing":null,"tilde":null,"empty":null}`},
		{"key order kept", "z: 1\na: 2\nm: 3\n", `{"z":1,"a":2,"m":3}`},
		{"date stays the text", "d: 2024-01-02\n", `{"d":"2024-01-02"}`},
		{"block scalars", "lit: |\n  line 1\n  line 2\nfold: >\n  a\n  b\n", `{"lit":"line 1\nline 2\n","fold":"a b\n"}`},
		{"escapes", "s: \"quote \\\" back \\\\ tab \\t nel \\N ls \\L del \\x7f bell \\a <&>\"\n", `{"s":"quote \" back \\ tab \t nel \u0085 ls \u2028 del \u007f bell \u0007 <&>"}`},
		{"unicode kept", "s: héllo 世界 🙂\n", `{"s":"héllo 世界 🙂"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ManifestJSON(c.yaml)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
			if a, b := enginetest.AsJSON(t, got), enginetest.AsRepoServerReads(t, c.yaml); !reflect.DeepEqual(a, b) {
				t.Errorf("JSON reads %#v, the YAML %#v", a, b)
			}
			// The repo-server reads JSON with the same YAML 1.1 reader too.
			if a, b := enginetest.AsRepoServerReads(t, got), enginetest.AsRepoServerReads(t, c.yaml); !reflect.DeepEqual(a, b) {
				t.Errorf("repo-server reads the JSON as %#v, the YAML as %#v", a, b)
			}
		})
	}
	// What YAML 1.1 and 1.2 read differently, or JSON cannot say, stays YAML.
	for _, y := range []string{
		"a: yes\n", "a: on\n", "a: off\n", "a: y\n", "a: 0o17\n", "a: 017\n", "a: 0x1F\n", "a: 1_000\n", "a: +1\n",
		"a: .5\n", "a: .inf\n", "a: 1.\n", "yes: 1\n", "1: a\n", "a: &x 1\nb: *x\n", "a: !!str 1\n", "a: !custom x\n",
		"<<: {a: 1}\n", "- a\n", "a: 1\n---\nb: 2\n", "a: !!binary aGVsbG8=\n",
	} {
		if js, err := ManifestJSON(y); !errors.Is(err, errKeepYAML) {
			t.Errorf("%q: converted to %s (%v), want it kept as YAML", y, js, err)
		}
	}
	out, kept := ManifestsJSON([]string{"a: 1\n", "a: yes\n"})
	if kept != 1 || out[0] != `{"a":1}` || out[1] != "a: yes\n" {
		t.Errorf("ManifestsJSON: %q, %d kept", out, kept)
	}
}

// TestManifestsJSONMatchYAML renders real bundles and checks that every
// manifest becomes JSON the repo-server reads as exactly the object it read
// from the YAML: the demo bundle always, sail-operator (2.9 MB of CRDs) and
// the other bundles of ../shared when present.
func TestManifestsJSONMatchYAML(t *testing.T) {
	demo, _ := filepath.Abs("../../examples/demo")
	cases := []struct{ name, dir, specYAML string }{
		{"demo", demo, ""},
	}
	shared, _ := filepath.Abs("../../../shared/bundles")
	for _, b := range []struct{ dir, ns string }{
		{"sailoperator-1.30.3", "sail-operator"},
		{"leader-worker-set-1.0.0", "openshift-lws-operator"},
		{"cert-manager-operator-1.20.0", "cert-manager-operator"},
		{"eclipse-che-7.121.0", "eclipse-che"},
		{"dynatrace-operator-1.10.2", "dynatrace"},
	} {
		if _, err := os.Stat(filepath.Join(shared, b.dir)); err == nil {
			cases = append(cases, struct{ name, dir, specYAML string }{b.dir, "", "bundle: " + filepath.Join(shared, b.dir) + "\n  namespace: " + b.ns})
		} else {
			t.Logf("skipping %s: %v", b.dir, err)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := c.dir
			if dir == "" {
				dir = t.TempDir()
				os.WriteFile(filepath.Join(dir, spec.FileName), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  "+c.specYAML+"\n"), 0o644)
			}
			f, err := spec.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			req := render.Request{Spec: f.Spec, Name: f.Metadata.Name, SourceDir: dir}
			res, err := (&render.Renderer{}).Render(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			js, kept := ManifestsJSON(res.Manifests)
			took := time.Since(start)
			ySize, jSize := 0, 0
			for i := range js {
				ySize += len(res.Manifests[i])
				jSize += len(js[i])
				if !strings.HasPrefix(js[i], "{") {
					_, err := ManifestJSON(res.Manifests[i])
					t.Errorf("manifest %d kept as YAML: %v", i, err)
					continue
				}
				if a, b := enginetest.AsJSON(t, js[i]), enginetest.AsRepoServerReads(t, res.Manifests[i]); !reflect.DeepEqual(a, b) {
					t.Errorf("manifest %d: the JSON reads differently from the YAML", i)
				}
				if a, b := enginetest.AsRepoServerReads(t, js[i]), enginetest.AsRepoServerReads(t, res.Manifests[i]); !reflect.DeepEqual(a, b) {
					t.Errorf("manifest %d: the repo-server reads the JSON differently from the YAML", i)
				}
			}
			t.Logf("%d objects, YAML %d bytes, JSON %d bytes, %d kept as YAML, converted in %v", len(js), ySize, jSize, kept, took)
		})
	}
}
