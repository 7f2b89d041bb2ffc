package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// TestArgoCDV2 is the optional suite on Argo CD 2.14.21 (E2E_SUITES=argocd-v2): the lws-operator
// Application from examples/ goes Synced + Healthy in our wave order, a version bump in Git
// re-syncs it, and a last change syncs through Argo CD's stock argocd-cmp-server running
// `olm-cmp generate` (classic mode).
func TestArgoCDV2(t *testing.T) {
	e := setup(t)
	bin := os.Getenv("ARGOCD_V2_BIN")
	if bin == "" {
		bin = filepath.Join(os.Getenv("HOME"), ".cache", "olm-cmp", "argocd", "bin")
	}
	bundleDir := filepath.Join(e.shared, "bundles", "leader-worker-set-1.0.0")
	if _, err := os.Stat(bundleDir); err != nil {
		t.Skipf("%s missing: the Argo CD suite uses the shared lws-operator bundle", bundleDir)
	}
	a := startArgoCD(t, e, bin, argoOptions{})
	w := e.work
	repo := a.reg + "/leader-worker-set/lws-operator-bundle"
	pushBundle(t, bundleDir, repo+":1.0", lwsAt("1.0.0"))
	pushBundle(t, bundleDir, repo+":1.0.1", lwsAt("1.0.1"))

	appDir := filepath.Join(a.git, "examples", "lws-operator")
	copyDir(t, filepath.Join(e.repo, "examples", "lws-operator"), appDir)
	specPath := filepath.Join(appDir, "olm-cmp.yaml")
	setSpec(t, specPath, map[string]string{"bundle": repo, "version": "1.0"})
	rev1 := a.commit("lws-operator 1.0")
	renderWaves := func() map[string]int { return a.renderWaves(appDir) }
	wantWave := renderWaves()

	start := time.Now()
	a.application("lws-operator", "lws-operator", "examples/lws-operator", "")
	st := waitApp(t, "lws-operator", rev1, 6*time.Minute)
	t.Logf("lws-operator 1.0: Synced + Healthy at %s in %v", rev1[:8], time.Since(start).Round(time.Second))
	checkSyncOrder(t, st, wantWave)

	// ---- version bump in Git -> re-sync to the new version
	setSpec(t, specPath, map[string]string{"version": "1.0.1"})
	rev2 := a.commit("lws-operator 1.0.1")
	start = time.Now()
	refresh(t, "lws-operator", "normal")
	st = waitApp(t, "lws-operator", rev2, 6*time.Minute)
	t.Logf("lws-operator 1.0.1: re-synced + Healthy at %s in %v", rev2[:8], time.Since(start).Round(time.Second))
	checkSyncOrder(t, st, renderWaves())
	img := strings.TrimSpace(string(mustKubectl(t, "-n", "openshift-lws-operator", "get", "deploy", "-o", "jsonpath={.items[*].spec.template.spec.containers[*].image}")))
	if !strings.Contains(img, ":1.0.1") {
		t.Errorf("after the bump the operator runs %q, want the 1.0.1 image", img)
	}

	// ---- classic mode, once: Argo CD's own argocd-cmp-server on the same socket name runs
	// plugin.yaml's `olm-cmp generate`; a Git change (back to 1.0) must sync through it.
	a.stop()
	if _, err := os.Stat(filepath.Join(a.sockDir, a.plugin+".sock")); err == nil {
		t.Fatalf("olm-cmp serve left its socket behind after SIGTERM")
	}
	cfgDir := filepath.Join(w, "cmp-config")
	must(t, os.MkdirAll(cfgDir, 0o755))
	// the repository's plugin.yaml, plus the opt-in for the plain-HTTP loopback registry
	pb, err := os.ReadFile(filepath.Join(e.repo, "plugin.yaml"))
	must(t, err)
	var pcfg map[string]any
	must(t, yaml.Unmarshal(pb, &pcfg))
	gen := pcfg["spec"].(map[string]any)["generate"].(map[string]any)
	args, _ := gen["args"].([]any)
	gen["args"] = append(args, "--insecure-registry", a.reg, "--cache-dir", filepath.Join(w, "classic-cache"))
	pb, err = yaml.Marshal(pcfg)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(cfgDir, "plugin.yaml"), pb, 0o644))
	cmpWork := filepath.Join(w, "cmp-work")
	must(t, os.MkdirAll(cmpWork, 0o755))
	startProc(t, a.runDir, "argocd-cmp-server", []string{"ARGOCD_PLUGINSOCKFILEPATH=" + a.sockDir, "ARGOCD_CMP_WORKDIR=" + cmpWork,
		"HOME=" + a.home, "PATH=" + filepath.Dir(e.olmCmp) + ":" + os.Getenv("PATH")},
		filepath.Join(bin, "argocd-cmp-server"), "--config-dir-path", cfgDir, "--loglevel", "info")
	if got := pluginName(t, a.sockDir); got != a.plugin {
		t.Fatalf("argocd-cmp-server listens as %q, olm-cmp serve as %q: plugin.yaml and serve disagree", got, a.plugin)
	}
	setSpec(t, specPath, map[string]string{"version": "1.0"})
	rev3 := a.commit("lws-operator back to 1.0 (classic mode)")
	start = time.Now()
	refresh(t, "lws-operator", "normal")
	st = waitApp(t, "lws-operator", rev3, 6*time.Minute)
	t.Logf("classic mode: synced + Healthy at %s in %v", rev3[:8], time.Since(start).Round(time.Second))
	img = strings.TrimSpace(string(mustKubectl(t, "-n", "openshift-lws-operator", "get", "deploy", "-o", "jsonpath={.items[*].spec.template.spec.containers[*].image}")))
	if !strings.Contains(img, ":1.0.0") {
		t.Errorf("classic mode: operator runs %q, want the 1.0.0 image", img)
	}
	checkSyncOrder(t, st, wantWave)
}
