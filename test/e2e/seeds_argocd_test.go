package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOperatorsSeedsArgoCD runs two seed operators through Argo CD 3.6.1 and the plugin, from
// their examples/ specs, with the real operators (build-seeds.sh) run by the pod runner once Argo
// CD has applied their Deployments (its own control plane: run.sh runs it as a step of its own):
//   - lws-operator: the Application goes Synced + Healthy on the real operator's status (Argo CD's
//     health check of LeaderWorkerSetOperator, deploy/argocd, reads the Available condition the
//     operator writes once its operand runs), and stays so through a hard refresh;
//   - cert-manager-operator 1.19.1, then the bump to 1.20.0 as a one-line change of its
//     olm-cmp.yaml in Git: one more sync, in wave order; the Deployment rolls, the 1.20.0 binary
//     runs in the new Pod and the CertManager is reconciled again with cert-manager at 1.20.0's
//     images (the example pins them to registry.redhat.io digests), the operator still running.
func TestOperatorsSeedsArgoCD(t *testing.T) {
	e := setup(t)
	root := e.sharedBundles(t)
	lwsBin := seedBinary(t, e, "lws-operator")
	seedBinary(t, e, "lws-manager")
	bin119 := seedBinary(t, e, "cert-manager-operator-1.19.1")
	bin120 := seedBinary(t, e, "cert-manager-operator-1.20.0")
	bin := os.Getenv("ARGOCD_BIN")
	if bin == "" {
		bin = filepath.Join(os.Getenv("HOME"), ".cache", "olm-cmp", "argocd-v3", "bin")
	}
	a := startArgoCD(t, e, bin, argoOptions{v3: true, cm: healthCustomizations(t, e.repo)})
	// what a vanilla cluster must provide for lws-operator (docs/olm-parity.md)
	serveCertManagerAPI(t, root)
	newApplier(t, e.work).ensureServed(Doc{APIVersion: "monitoring.coreos.com/v1", Kind: "ServiceMonitor", Namespace: "default", Name: "stand-in"})

	// ---- lws-operator
	lws := &syncCase{name: "lws-operator", example: "lws-operator", bundle: "leader-worker-set-1.0.0", tag: "1.0", rewrite: lwsAt("1.0.0")}
	lws.prepare(t, a, root)
	// ---- cert-manager-operator at 1.19.1: the example (at 1.20.0) one line back
	cm := &syncCase{name: "cert-manager-operator", example: "cert-manager-operator", bundle: "cert-manager-operator-1.19.1", tag: "v1.19.1"}
	cm.prepare(t, a, root)
	pushBundle(t, filepath.Join(root, "cert-manager-operator-1.20.0"), a.reg+"/cert-manager-operator-bundle:v1.20.0", nil)
	rev1 := a.commit("lws-operator 1.0, cert-manager-operator v1.19.1")
	for _, c := range []*syncCase{lws, cm} {
		c.docs = a.render(c.dir)
		c.want = wavesOf(c.docs)
	}

	start := time.Now()
	a.application(lws.name, lws.example, relPath(a, lws), "")
	a.application(cm.name, cm.example, relPath(a, cm), "")
	lwsDep := findDoc(t, lws.docs, "Deployment", "openshift-lws-operator")
	cmDep := findDoc(t, cm.docs, "Deployment", "cert-manager-operator-controller-manager")
	waitFor(t, 6*time.Minute, "Argo CD to apply the operators' Deployments", func() bool {
		return getJSON(t, "deployment", lwsDep.Name, "-n", lwsDep.Namespace) != nil && getJSON(t, "deployment", cmDep.Name, "-n", cmDep.Namespace) != nil
	})
	op := runPod(t, lwsDep, podOptions{Binaries: map[string]string{"lws-operator": lwsBin}})
	old := runPod(t, cmDep, podOptions{Binaries: map[string]string{"cert-manager-operator": bin119}})
	// the CR comes in the last wave, once the operator's Deployment is Healthy
	waitFor(t, 6*time.Minute, "Argo CD to apply LeaderWorkerSetOperator cluster", func() bool {
		return getJSON(t, "leaderworkersetoperators.operator.openshift.io", "cluster") != nil
	})
	mgr := runLWSOperand(t, e, lwsDep.Namespace, op).mgr
	for _, c := range []*syncCase{lws, cm} {
		c.synced = waitApp(t, c.name, rev1, 8*time.Minute)
		t.Logf("%s: Synced + Healthy %v after the Applications were created", c.name, time.Since(start).Round(time.Second))
		checkSyncOrder(t, c.synced, c.want)
	}
	cr := getJSON(t, "leaderworkersetoperators.operator.openshift.io", "cluster")
	if s, _, _ := condition(cr, "Available"); s != "True" || statusManager(cr) == "argocd-controller" {
		t.Fatalf("lws-operator Healthy, but LeaderWorkerSetOperator cluster: Available=%q, status written by %q", s, statusManager(cr))
	}
	t.Logf("LeaderWorkerSetOperator cluster: %s (status by %q)", conditions(cr), statusManager(cr))
	time.Sleep(5 * time.Second)
	base := map[string]appState{lws.name: appStatus(t, lws.name), cm.name: appStatus(t, cm.name)}
	checkStable(t, []*syncCase{lws, cm}, base, "after a hard refresh", "hard")

	// ---- the bump: one line of cert-manager-operator's olm-cmp.yaml
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
	newDep := findDoc(t, cm.docs, "Deployment", cmDep.Name)
	img120 := relatedImage(t, newDep, "RELATED_IMAGE_CERT_MANAGER_CONTROLLER")
	start = time.Now()
	refresh(t, cm.name, "normal")
	// the kubelet's part while Argo CD syncs: the rolled-out Pod runs the 1.20.0 binary, the old
	// Pod's process stops when its Pod goes
	waitFor(t, 6*time.Minute, "the operator's Deployment rolled to 1.20.0's template", func() bool {
		d := getJSON(t, "deployment", cmDep.Name, "-n", cmDep.Namespace)
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
	crDoc := Doc{APIVersion: "operator.openshift.io/v1alpha1", Kind: "CertManager", Name: "cluster"}
	o, deps := certManagerReconciled(t, crDoc, img120, 5*time.Minute)
	t.Logf("CertManager cluster reconciled by the 1.20.0 operator (Pod %s): %s; %s", np.Pod, conditions(o), strings.Join(deps, "; "))
	base[cm.name] = appStatus(t, cm.name)
	checkStable(t, []*syncCase{cm, lws}, base, "after the bump, hard refresh", "hard")
	checkDenials(t, []*runningPod{op, mgr, old, np})
	for _, p := range []*runningPod{op, mgr, np} {
		if ex := p.Exited(); len(ex) > 0 {
			t.Errorf("pod %s/%s stopped: %v", p.Namespace, p.Pod, ex)
		}
	}
	if !t.Failed() {
		t.Logf("RESULT through Argo CD 3.6.1: lws-operator Synced + Healthy on the operator's status (2 Deployments run: operator, operand), stable through hard refreshes; cert-manager-operator v1.19.1 -> v1.20.0 in one Git line: one more sync in wave order, the 1.20.0 operator running and cert-manager at %s; no RBAC denial", img120)
	}
}
