package transform

import (
	"math/rand/v2"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// parse reads a multi-document YAML string.
func parse(t testing.TB, docs string) []*yaml.RNode {
	t.Helper()
	nodes, err := kio.FromBytes([]byte(docs))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return nodes
}

// render serializes nodes as one "---"-separated string.
func render(t testing.TB, nodes []*yaml.RNode) string {
	t.Helper()
	docs, err := Serialize(nodes)
	if err != nil {
		t.Fatalf("serialize: %v", err)
	}
	return strings.Join(docs, "---\n")
}

// run applies f to the parsed input and returns the rendered output.
func run(t testing.TB, f kio.Filter, in string) string {
	t.Helper()
	out, err := f.Filter(parse(t, in))
	if err != nil {
		t.Fatalf("filter: %v", err)
	}
	return render(t, out)
}

// runErr applies f and returns its error message ("" for none).
func runErr(t testing.TB, f kio.Filter, in string) string {
	t.Helper()
	_, err := f.Filter(parse(t, in))
	if err == nil {
		return ""
	}
	return err.Error()
}

// diff fails with both texts when they differ.
func diff(t testing.TB, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// warnings collects warnings.
type warnings []string

func (w *warnings) add(s string) { *w = append(*w, s) }

// shuffled returns a shuffled copy of docs ("---"-separated), seeded.
func shuffled(docs string, seed uint64) string {
	parts := strings.Split(docs, "---\n")
	r := rand.New(rand.NewPCG(seed, seed))
	r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	return strings.Join(parts, "---\n")
}
