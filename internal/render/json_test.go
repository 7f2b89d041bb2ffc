package render

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/transform/jsontest"
)

// TestJSONMatchesYAML renders real bundles and checks that every object of
// Result.JSON is JSON the repo-server reads as exactly the object it reads
// from Result.Manifests: the demo bundle always, sail-operator (2.9 MB of
// CRDs) and the other bundles of ../shared when present. None may fall back
// to YAML: JSON is what the plugin server sends.
func TestJSONMatchesYAML(t *testing.T) {
	cases := map[string]Request{"demo": demoRequest(t)}
	for _, b := range []struct{ dir, ns string }{
		{"sailoperator-1.30.3", "sail-operator"},
		{"leader-worker-set-1.0.0", "openshift-lws-operator"},
		{"cert-manager-operator-1.20.0", "cert-manager-operator"},
		{"eclipse-che-7.121.0", "eclipse-che"},
		{"dynatrace-operator-1.10.2", "dynatrace"},
	} {
		dir := filepath.Join(sharedDir, "bundles", b.dir)
		if _, err := os.Stat(dir); err != nil {
			t.Logf("skipping %s: %v", b.dir, err)
			continue
		}
		cases[b.dir] = dirRequest(t, dir, b.ns)
	}
	for name, req := range cases {
		t.Run(name, func(t *testing.T) {
			res := mustRender(t, req)
			if len(res.JSON) != len(res.Manifests) || res.KeptYAML != 0 {
				t.Fatalf("%d JSON objects for %d manifests, %d kept as YAML", len(res.JSON), len(res.Manifests), res.KeptYAML)
			}
			jSize := 0
			for i, js := range res.JSON {
				jSize += len(js)
				if !strings.HasPrefix(js, "{") || strings.Contains(js, "\n") {
					t.Errorf("object %d is not compact JSON:\n%s", i, js)
					continue
				}
				if a, b := jsontest.AsJSON(t, js), jsontest.AsRepoServerReads(t, res.Manifests[i]); !reflect.DeepEqual(a, b) {
					t.Errorf("object %d: the JSON reads differently from the YAML", i)
				}
				if a, b := jsontest.AsRepoServerReads(t, js), jsontest.AsRepoServerReads(t, res.Manifests[i]); !reflect.DeepEqual(a, b) {
					t.Errorf("object %d: the repo-server reads the JSON differently from the YAML", i)
				}
			}
			t.Logf("%d objects, YAML %d bytes, JSON %d bytes", len(res.JSON), len(res.YAML()), jSize)
		})
	}
}
