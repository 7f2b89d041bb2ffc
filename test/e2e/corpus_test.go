package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestCorpus renders every bundle of ../shared/bundles and the repository's own fixtures with
// olm-cmp, applies each stream wave by wave with server-side apply (waiting for CRDs to be
// Established and Deployments Available between waves, as Argo CD does) and checks every
// object was accepted. Specs are generated per bundle: own namespace, the CSV's alm-examples as
// CRs, and webhooks patched to failurePolicy: Ignore through spec.patches (kwok pods serve
// nothing).
//
// The corpus suite runs TestCorpusOracle (oracle_test.go) first, on a control plane of its own.
func TestCorpus(t *testing.T) {
	e := setup(t)
	t.Run("fixtures", func(t *testing.T) {
		for _, fx := range []string{"examples/demo"} {
			t.Run(filepath.Base(fx), func(t *testing.T) {
				src := filepath.Join(e.repo, fx)
				if _, err := os.Stat(filepath.Join(src, "olm-cmp.yaml")); err != nil {
					t.Skipf("%s: no olm-cmp.yaml", fx)
				}
				dir := filepath.Join(e.work, "fixture-"+filepath.Base(fx))
				if out, err := exec.Command("cp", "-r", src, dir).CombinedOutput(); err != nil {
					t.Fatalf("copy %s: %v %s", src, err, out)
				}
				f := readSpecFile(t, dir)
				e.renderAndApply(t, dir, f)
			})
		}
	})
	t.Run("shared", func(t *testing.T) {
		root := e.sharedBundles(t)
		ents, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ent := range ents {
			if !ent.IsDir() {
				continue
			}
			n++
			name := ent.Name()
			t.Run(name, func(t *testing.T) {
				bdir := filepath.Join(root, name)
				spec := map[string]any{
					"bundle":    bdir,
					"namespace": nsName("e2e", name),
				}
				if kinds := almExampleKinds(t, bdir); len(kinds) > 0 {
					spec["examples"] = kinds
				}
				dir := filepath.Join(e.work, name)
				f := map[string]any{"apiVersion": "olm-cmp.dev/v1alpha1", "kind": "OperatorBundle",
					"metadata": map[string]any{"name": name}, "spec": spec}
				e.renderAndApply(t, dir, f)
			})
		}
		if n == 0 {
			t.Fatalf("no bundles in %s", root)
		}
	})
}

// bundleDirOf resolves spec.bundle (a directory here) against the spec's directory.
func bundleDirOf(dir string, f map[string]any) string {
	b, _ := f["spec"].(map[string]any)["bundle"].(string)
	if filepath.IsAbs(b) {
		return b
	}
	return filepath.Join(dir, b)
}

func readSpecFile(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "olm-cmp.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

func writeSpecFile(t *testing.T, dir string, f map[string]any) {
	t.Helper()
	b, err := yaml.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// withIgnoreWebhooks renders once and, if the output has webhook configurations, adds
// failurePolicy: Ignore patches to the spec and renders again.
func (e env) withIgnoreWebhooks(t *testing.T, dir string, f map[string]any) []Doc {
	t.Helper()
	docs := e.renderFollowingRefusals(t, dir, f)
	patches := ignoreWebhookPatches(docs)
	if len(patches) == 0 {
		return docs
	}
	spec := f["spec"].(map[string]any)
	var all []any
	if old, ok := spec["patches"].([]any); ok {
		all = append(all, old...)
	}
	for _, p := range patches {
		all = append(all, p)
	}
	spec["patches"] = all
	writeSpecFile(t, dir, f)
	docs = e.render(t, dir)
	for _, d := range docs {
		if d.Kind != "ValidatingWebhookConfiguration" && d.Kind != "MutatingWebhookConfiguration" {
			continue
		}
		for _, h := range d.Obj["webhooks"].([]any) {
			if fp := h.(map[string]any)["failurePolicy"]; fp != "Ignore" {
				t.Fatalf("spec.patches did not reach %s: failurePolicy %v", d.Key(), fp)
			}
		}
	}
	t.Logf("%d webhook configuration(s) patched to failurePolicy: Ignore via spec.patches", len(patches))
	return docs
}

func (e env) renderAndApply(t *testing.T, dir string, f map[string]any) {
	t.Helper()
	docs := e.withIgnoreWebhooks(t, dir, f)
	if len(docs) == 0 {
		t.Fatal("empty render")
	}
	checkWaveOrder(t, docs)
	a := newApplier(t, e.work)
	a.examples = almExamples(t, bundleDirOf(dir, f))
	applied := a.apply(filepath.Base(dir), docs)
	kinds := map[string]int{}
	for _, d := range applied {
		kinds[d.Kind]++
	}
	var parts []string
	for k, n := range kinds {
		parts = append(parts, k+"="+itoa(n))
	}
	t.Logf("accepted %d/%d objects (%s)", len(applied), len(docs), strings.Join(sortStrings(parts), " "))
}

// checkWaveOrder asserts the documented default group order: Namespace and CRDs before RBAC
// before the operator's Deployments before webhook configurations before custom resources.
func checkWaveOrder(t *testing.T, docs []Doc) {
	t.Helper()
	rank := func(d Doc) int {
		switch d.Kind {
		case "Namespace", "CustomResourceDefinition":
			return 0
		case "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding":
			return 1
		case "Deployment":
			return 2
		case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "APIService":
			return 3
		}
		return -1
	}
	maxWave := map[int]int{}
	minWave := map[int]int{}
	for _, d := range docs {
		r := rank(d)
		if r < 0 {
			continue
		}
		if w, ok := maxWave[r]; !ok || d.Wave > w {
			maxWave[r] = d.Wave
		}
		if w, ok := minWave[r]; !ok || d.Wave < w {
			minWave[r] = d.Wave
		}
	}
	for lo := 0; lo < 4; lo++ {
		for hi := lo + 1; hi < 4; hi++ {
			l, ok1 := maxWave[lo]
			h, ok2 := minWave[hi]
			if ok1 && ok2 && l >= h {
				t.Errorf("sync waves out of order: group %d reaches wave %d but group %d starts at wave %d", lo, l, hi, h)
			}
		}
	}
}
