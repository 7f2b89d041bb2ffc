package transform

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// jsonSize must agree with actually marshalling the object.
func TestJSONSizeMatchesMarshal(t *testing.T) {
	docs := []string{
		"a: 1\nb: 1.5\nc: true\nd: null\ne: ~\nf: 0x1F\ng: 1e3\nh: -0\n",
		"s: \"<tag> & \\\"quotes\\\" \\\\ \\n\\t\\r\\b\\f \\x01 \\u2028 é 日本\"\n",
		"t: 2024-01-02T03:04:05Z\nu: '2024-01-02'\nv: !!str 12\nw: [1, \"2\", {x: []}, {}]\n",
		"empty: {}\nlist: []\nnested: {a: {b: {c: [null, false]}}}\n",
		"anchor: &a {k: v}\nref: *a\n",
		"folded: >-\n  a\n    b\n  c\nliteral: |\n  x\n  \ty\n",
	}
	for _, d := range docs {
		assertJSONSize(t, yaml.MustParse(d))
	}
}

func assertJSONSize(t *testing.T, n *yaml.RNode) {
	t.Helper()
	var v any
	if err := n.YNode().Decode(&v); err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := jsonSize(n.YNode())
	if err != nil {
		t.Fatal(err)
	}
	if got != len(want) {
		t.Errorf("jsonSize = %d, json.Marshal gives %d bytes: %s", got, len(want), want)
	}
}

// On every real bundle manifest (when ../shared is there).
func TestJSONSizeOnCorpus(t *testing.T) {
	files, _ := filepath.Glob("../../../shared/bundles/*/manifests/*")
	if len(files) == 0 {
		t.Skip("../shared/bundles not available: runs in CI where ../shared sits beside the repository")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}).Read()
		if err != nil {
			continue // JSON streams and odd files are the loader's business
		}
		for _, n := range nodes {
			assertJSONSize(t, n)
		}
	}
}
