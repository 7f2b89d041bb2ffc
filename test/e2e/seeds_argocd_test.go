package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// seedsArgoCD starts Argo CD 3.6.1 with the plugin and deploy/argocd's health checks (its
// processes stop at cleanup), or skips as startArgoCD does.
func seedsArgoCD(t *testing.T, e env) *argoCD {
	t.Helper()
	bin := os.Getenv("ARGOCD_BIN")
	if bin == "" {
		bin = filepath.Join(os.Getenv("HOME"), ".cache", "olm-cmp", "argocd-v3", "bin")
	}
	return startArgoCD(t, e, bin, argoOptions{v3: true, cm: healthCustomizations(t, e.repo)})
}

// syncExample commits c's source (written by c.prepare), creates its Application, and runs the
// operator's Deployment depName with bins once Argo CD has applied it. It returns the revision,
// when the Application was created, the rendered Deployment and its running Pod.
func syncExample(t *testing.T, a *argoCD, c *syncCase, depName string, bins map[string]string) (string, time.Time, Doc, *runningPod) {
	t.Helper()
	rev := a.commit(c.name + " " + c.tag)
	c.docs = a.render(c.dir)
	c.want = wavesOf(c.docs)
	created := time.Now()
	a.application(c.name, c.example, relPath(a, c), "")
	dep := findDoc(t, c.docs, "Deployment", depName)
	waitFor(t, 6*time.Minute, "Argo CD to apply Deployment "+dep.Name, func() bool {
		return getJSON(t, "deployment", dep.Name, "-n", dep.Namespace) != nil
	})
	return rev, created, dep, runPod(t, dep, podOptions{Binaries: bins})
}

// TestOperatorsSeedsArgoCD installs lws-operator from examples/lws-operator through Argo CD 3.6.1
// and the plugin, with the real operator (build-seeds.sh) run by the pod runner once Argo CD has
// applied its Deployment, and its operand once the operator has applied that one: the Application
// goes Synced + Healthy on the real operator's status (deploy/argocd's health check of
// LeaderWorkerSetOperator reads the Available condition the operator writes once its operand
// runs), and stays so through a hard refresh. Its own control plane (a run.sh step of its own):
// cert-manager-operator's cert-manager, whose webhook does not run here, would refuse the Issuer
// lws-operator creates (TestOperatorsSeedsArgoCDBump has the other control plane).
func TestOperatorsSeedsArgoCD(t *testing.T) {
	e := setup(t)
	root := e.sharedBundles(t)
	lwsBin := seedBinary(t, e, "lws-operator")
	a := seedsArgoCD(t, e)
	// what a vanilla cluster must provide for lws-operator (docs/olm-parity.md)
	serveCertManagerAPI(t, root)
	newApplier(t, e.work).ensureServed(Doc{APIVersion: "monitoring.coreos.com/v1", Kind: "ServiceMonitor", Namespace: "default", Name: "stand-in"})

	lws := &syncCase{name: "lws-operator", example: "lws-operator", bundle: "leader-worker-set-1.0.0", tag: "1.0", rewrite: lwsAt("1.0.0")}
	lws.prepare(t, a, root)
	rev, start, dep, op := syncExample(t, a, lws, "openshift-lws-operator", map[string]string{"lws-operator": lwsBin})
	// the CR comes in the last wave, once the operator's Deployment is Healthy
	waitFor(t, 6*time.Minute, "Argo CD to apply LeaderWorkerSetOperator cluster", func() bool {
		return getJSON(t, "leaderworkersetoperators.operator.openshift.io", "cluster") != nil
	})
	mgr := runLWSOperand(t, e, dep.Namespace, op).mgr
	lws.synced = waitApp(t, lws.name, rev, 8*time.Minute)
	took := time.Since(start)
	t.Logf("%s: Synced + Healthy %v after the Application was created", lws.name, took.Round(time.Second))
	checkSyncOrder(t, lws.synced, lws.want)
	cr := getJSON(t, "leaderworkersetoperators.operator.openshift.io", "cluster", "--show-managed-fields")
	if s, _, _ := condition(cr, "Available"); s != "True" || statusManager(cr) == "" || strings.HasPrefix(statusManager(cr), "argocd") {
		t.Fatalf("lws-operator Healthy, but LeaderWorkerSetOperator cluster: Available=%q, status written by %q", s, statusManager(cr))
	}
	t.Logf("LeaderWorkerSetOperator cluster: %s (status written by %q)", conditions(cr), statusManager(cr))
	time.Sleep(5 * time.Second)
	base := map[string]appState{lws.name: appStatus(t, lws.name)}
	checkNoSyncSince(t, lws.name, lws.synced, base[lws.name], "right after its first sync")
	checkStable(t, []*syncCase{lws}, base, "after a hard refresh", "hard")
	checkStable(t, []*syncCase{lws}, base, "after a normal refresh", "normal")
	finish(t, "lws-operator through Argo CD 3.6.1", []*runningPod{op, mgr}, fmt.Sprintf(
		"2 Deployments run (operator, operand); Synced + Healthy on the operator's Available in %v, stable through a hard and a normal refresh", took.Round(time.Second)))
}

// TestOperatorsSeedsArgoCDBump installs cert-manager-operator 1.19.1 from
// examples/cert-manager-operator (one line back from its 1.20.0) through Argo CD 3.6.1, the real
// operator run once Argo CD has applied its Deployment; then bumps it to 1.20.0 with a one-line
// change of its olm-cmp.yaml in Git: one more sync, in wave order; the Deployment rolls, the
// 1.20.0 binary runs in the new Pod, and the CertManager is reconciled again with cert-manager at
// 1.20.0's images (the example pins them to registry.redhat.io digests), the operator running.
func TestOperatorsSeedsArgoCDBump(t *testing.T) {
	e := setup(t)
	root := e.sharedBundles(t)
	bin119 := seedBinary(t, e, "cert-manager-operator-1.19.1")
	bin120 := seedBinary(t, e, "cert-manager-operator-1.20.0")
	a := seedsArgoCD(t, e)
	cm := &syncCase{name: "cert-manager-operator", example: "cert-manager-operator", bundle: "cert-manager-operator-1.19.1", tag: "v1.19.1"}
	cm.prepare(t, a, root)
	pushBundle(t, filepath.Join(root, "cert-manager-operator-1.20.0"), a.reg+"/cert-manager-operator-bundle:v1.20.0", nil)
	rev1, start, dep, old := syncExample(t, a, cm, "cert-manager-operator-controller-manager", map[string]string{"cert-manager-operator": bin119})
	cm.synced = waitApp(t, cm.name, rev1, 8*time.Minute)
	t.Logf("%s 1.19.1: Synced + Healthy %v after the Application was created", cm.name, time.Since(start).Round(time.Second))
	checkSyncOrder(t, cm.synced, cm.want)
	crDoc := Doc{APIVersion: "operator.openshift.io/v1alpha1", Kind: "CertManager", Name: "cluster"}
	img119 := relatedImage(t, dep, "RELATED_IMAGE_CERT_MANAGER_CONTROLLER")
	certManagerReconciled(t, crDoc, img119, reconcileTimeout)
	time.Sleep(5 * time.Second)
	base := map[string]appState{cm.name: appStatus(t, cm.name)}
	checkStable(t, []*syncCase{cm}, base, "with 1.19.1 reconciling, hard refresh", "hard")

	// ---- the bump: one line of the spec
	spec := filepath.Join(cm.dir, "olm-cmp.yaml")
	b, err := os.ReadFile(spec)
	must(t, err)
	if n := strings.Count(string(b), "version: v1.19.1\n"); n != 1 {
		t.Fatalf("%s: %d lines `version: v1.19.1`, want one", spec, n)
	}
	must(t, os.WriteFile(spec, []byte(strings.Replace(string(b), "version: v1.19.1\n", "version: v1.20.0\n", 1)), 0o644))
	if d := gitRun(t, a.git, "diff", "--numstat"); !strings.HasPrefix(d, "1\t1\t") {
		t.Fatalf("the bump is not a one-line change: %s", d)
	}
	rev2 := a.commit("cert-manager-operator v1.20.0")
	cm.docs = a.render(cm.dir)
	cm.want = wavesOf(cm.docs)
	newDep := findDoc(t, cm.docs, "Deployment", dep.Name)
	img120 := relatedImage(t, newDep, "RELATED_IMAGE_CERT_MANAGER_CONTROLLER")
	start = time.Now()
	refresh(t, cm.name, "normal")
	// the kubelet's part while Argo CD syncs: the rolled-out Pod runs the 1.20.0 binary
	waitFor(t, 6*time.Minute, "Argo CD to apply the 1.20.0 Deployment", func() bool {
		d := getJSON(t, "deployment", dep.Name, "-n", dep.Namespace)
		return d != nil && relatedImage(t, docOf(d), "RELATED_IMAGE_CERT_MANAGER_CONTROLLER") == img120
	})
	np := rollPod(t, old, newDep, map[string]string{"cert-manager-operator": bin120})
	cm.synced = waitApp(t, cm.name, rev2, 8*time.Minute)
	t.Logf("%s bumped: re-synced + Healthy %v after the refresh", cm.name, time.Since(start).Round(time.Second))
	checkSyncOrder(t, cm.synced, cm.want)
	checkBumpApplied(t, cm.synced)
	if n, was := len(cm.synced.Status.History), len(base[cm.name].Status.History); n != was+1 {
		t.Errorf("%s: %d syncs in its history after the bump, want %d (one more)", cm.name, n, was+1)
	}
	o, deps := certManagerReconciled(t, crDoc, img120, 5*time.Minute)
	tookBump := time.Since(start)
	t.Logf("CertManager cluster reconciled by the 1.20.0 operator (Pod %s) %v after the refresh: %s; %s", np.Pod, tookBump.Round(time.Second), conditions(o), strings.Join(deps, "; "))
	time.Sleep(5 * time.Second)
	base[cm.name] = appStatus(t, cm.name)
	checkNoSyncSince(t, cm.name, cm.synced, base[cm.name], "right after the bump's sync")
	checkStable(t, []*syncCase{cm}, base, "after the bump, hard refresh", "hard")
	checkDenials(t, []*runningPod{old})
	finish(t, "cert-manager-operator bump through Argo CD 3.6.1", []*runningPod{np}, fmt.Sprintf(
		"v1.19.1 -> v1.20.0 in one Git line: one more sync, in wave order; the 1.20.0 operator runs in the rolled Pod, cert-manager at %s, reconciled %v after the refresh; stable through a hard refresh", img120, tookBump.Round(time.Second)))
}
