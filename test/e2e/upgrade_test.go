package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpgrade installs an old bundle version, then upgrades in place to the new one the way an
// Argo CD sync with pruning does: apply the new stream wave by wave, then delete the objects of
// the old stream that the new one no longer has (set difference of group/kind/namespace/name
// between the two renders) — except CRDs, which are kept (keepCRDs, the default: deleting a CRD
// deletes every user's custom resource).
func TestUpgrade(t *testing.T) {
	e := setup(t)
	root := e.sharedBundles(t)
	for _, pair := range [][3]string{
		{"cert-manager-operator", "cert-manager-operator-1.19.1", "cert-manager-operator-1.20.0"},
		{"loki-operator", "loki-operator-0.10.2", "loki-operator-0.11.0"},
	} {
		t.Run(pair[0], func(t *testing.T) {
			oldDir, newDir := filepath.Join(root, pair[1]), filepath.Join(root, pair[2])
			for _, d := range []string{oldDir, newDir} {
				if _, err := os.Stat(d); err != nil {
					t.Skipf("%s missing", d)
				}
			}
			dir := filepath.Join(e.work, "upgrade-"+pair[0])
			spec := func(bdir string) map[string]any {
				s := map[string]any{"bundle": bdir, "namespace": nsName("upgrade", pair[0])}
				if kinds := almExampleKinds(t, bdir); len(kinds) > 0 {
					s["examples"] = kinds
				}
				return map[string]any{"apiVersion": "olm-cmp.dev/v1alpha1", "kind": "OperatorBundle",
					"metadata": map[string]any{"name": pair[0]}, "spec": s}
			}
			a := newApplier(t, e.work)

			oldDocs := e.withIgnoreWebhooks(t, dir, spec(oldDir))
			a.examples = almExamples(t, oldDir)
			a.apply(pair[1], oldDocs)

			newDocs := e.withIgnoreWebhooks(t, dir, spec(newDir))
			a.examples = almExamples(t, newDir)
			applied := a.apply(pair[2], newDocs)

			inNew := map[string]bool{}
			for _, d := range newDocs {
				inNew[d.Key()] = true
			}
			var pruned, kept []Doc
			for _, d := range oldDocs {
				if inNew[d.Key()] {
					continue
				}
				if d.Kind == "CustomResourceDefinition" {
					kept = append(kept, d)
					continue
				}
				pruned = append(pruned, d)
			}
			for _, d := range pruned {
				args := []string{"delete", resourceArg(d), d.Name, "--wait=true", "--timeout=120s", "--ignore-not-found"}
				if d.Namespace != "" {
					args = append(args, "-n", d.Namespace)
				}
				mustKubectl(t, args...)
			}
			for _, d := range pruned {
				if exists(t, d) {
					t.Errorf("pruned object still present: %s", d.Key())
				}
			}
			for _, d := range kept {
				if !exists(t, d) {
					t.Errorf("CRD dropped by the new version was deleted, must be kept: %s", d.Name)
				}
			}
			t.Logf("%s -> %s: %d objects in old, %d in new, pruned %d, CRDs kept %d", pair[1], pair[2], len(oldDocs), len(newDocs), len(pruned), len(kept))
			for _, d := range pruned {
				t.Logf("  pruned %s", d.Key())
			}
			// every new object is there (apply checked) and live state is the new version's
			for _, d := range applied {
				if d.Kind == "Deployment" {
					checkDeploymentUpgraded(t, d)
				}
				checkOlmCmpAnnotations(t, d)
			}
		})
	}
}

// checkDeploymentUpgraded compares the live pod template images with the rendered ones and
// waits for the rollout of the new template to finish.
func checkDeploymentUpgraded(t *testing.T, d Doc) {
	t.Helper()
	mustKubectl(t, "rollout", "status", "--timeout=180s", "-n", d.Namespace, "deployment/"+d.Name)
	want := images(d.Obj)
	out := mustKubectl(t, "get", "deployment", d.Name, "-n", d.Namespace, "-o", "json")
	var live map[string]any
	if err := json.Unmarshal(out, &live); err != nil {
		t.Fatal(err)
	}
	if got := images(live); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Deployment %s/%s runs %v after the upgrade, want %v", d.Namespace, d.Name, got, want)
	}
}

func images(obj map[string]any) []string {
	spec, _ := obj["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	ps, _ := tmpl["spec"].(map[string]any)
	var out []string
	for _, key := range []string{"initContainers", "containers"} {
		cs, _ := ps[key].([]any)
		for _, c := range cs {
			img, _ := c.(map[string]any)["image"].(string)
			out = append(out, img)
		}
	}
	return out
}

// checkOlmCmpAnnotations: olm-cmp's own annotations (source bundle and version) on the live
// object equal the new render's.
func checkOlmCmpAnnotations(t *testing.T, d Doc) {
	t.Helper()
	want, _ := d.Obj["metadata"].(map[string]any)["annotations"].(map[string]any)
	var keys []string
	for k := range want {
		if strings.Contains(k, "olm-cmp") {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return
	}
	args := []string{"get", resourceArg(d), d.Name, "-o", "json"}
	if d.Namespace != "" {
		args = append(args, "-n", d.Namespace)
	}
	var live map[string]any
	if err := json.Unmarshal(mustKubectl(t, args...), &live); err != nil {
		t.Fatal(err)
	}
	got, _ := live["metadata"].(map[string]any)["annotations"].(map[string]any)
	for _, k := range keys {
		if got[k] != want[k] {
			t.Errorf("%s: annotation %s = %v on the cluster, want %v", d.Key(), k, got[k], want[k])
		}
	}
}
