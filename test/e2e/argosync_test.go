package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// syncCase is one Application of the real-sync suite.
type syncCase struct {
	name    string              // Application name; its source is apps/<name> in the Git repository
	example string              // examples/<example> is the source (olm-cmp.yaml + extra manifests); "" = a generated spec
	bundle  string              // ../shared/bundles/<bundle>, pushed as <registry>/<name>-bundle:<tag>
	tag     string              // the image tag, spec.version
	rewrite func(string) string // the CSV as its published image has it, if Git's differs

	namespace string // generated specs: the install namespace

	dir    string         // the source directory in the Git work tree
	docs   []Doc          // the render, as the plugin makes it
	want   map[string]int // group/kind/namespace/name -> wave, from docs
	synced appState       // the Application when its last sync had succeeded
}

// TestArgoCD is the real-sync suite on Argo CD 3.6.1 (test/argocd-v3's module version, built by
// test/argocd/build-argocd.sh): application-controller, repo-server, redis and `olm-cmp serve`,
// one Application per operator, each bundle served as an image by the in-process registry:
// the three seed operators from examples/ and five bundles of ../shared of different shapes.
// Argo CD's argocd-cm carries the health checks of deploy/argocd. Other controllers' writes
// (cert-manager's status and CA injection, the operators' status on their CRs, the token
// controller) are simulated with their own field managers while Argo CD watches.
//
// Each Application must go Synced + Healthy in our wave order, stay Synced with no second sync
// through those writes, a hard refresh, a wait past --app-resync and another refresh; a CR whose
// status says not ready must hold the next wave; and the bumps of cert-manager-operator
// (1.19.1 -> 1.20.0) and lws-operator (1.0 -> 1.0.1) must each re-sync once, in wave order, and
// stay Synced.
func TestArgoCD(t *testing.T) {
	e := setup(t)
	shared := e.sharedBundles(t)
	bin := os.Getenv("ARGOCD_BIN")
	if bin == "" {
		bin = filepath.Join(os.Getenv("HOME"), ".cache", "olm-cmp", "argocd-v3", "bin")
	}
	a := startArgoCD(t, e, bin, argoOptions{v3: true, cm: healthCustomizations(t, e.repo)})

	cases := []*syncCase{
		{name: "cert-manager-operator", example: "cert-manager-operator", bundle: "cert-manager-operator-1.19.1", tag: "v1.19.1"},
		{name: "lws-operator", example: "lws-operator", bundle: "leader-worker-set-1.0.0", tag: "1.0", rewrite: lwsAt("1.0.0")},
		{name: "sail-operator", example: "sail-operator", bundle: "sailoperator-1.30.3", tag: "1.30.3"},
		// 12 Deployments, validating and mutating webhooks, a CRD that spells out
		// preserveUnknownFields: false
		{name: "kubevirt", bundle: "community-kubevirt-hyperconverged-1.18.1", tag: "1.18.1"},
		// conversion webhooks on 4 CRDs, a ServiceAccount token Secret, a ServiceMonitor
		{name: "loki", bundle: "loki-operator-0.11.0", tag: "0.11.0"},
		// the corpus' largest CRD (2 MiB, converted by a webhook)
		{name: "eclipse-che", bundle: "eclipse-che-7.121.0", tag: "7.121.0"},
		// OwnNamespace only, with a validating webhook
		{name: "gitlab", bundle: "gitlab-operator-kubernetes-3.3.0", tag: "3.3.0"},
		// every webhook type: validating, mutating, conversion
		{name: "dynatrace", bundle: "dynatrace-operator-1.10.2", tag: "1.10.2"},
	}
	byName := map[string]*syncCase{}
	for _, c := range cases {
		byName[c.name] = c
		c.prepare(t, a, shared)
	}
	// the bump's target, pushed up front
	certMgr := byName["cert-manager-operator"]
	pushBundle(t, filepath.Join(shared, "cert-manager-operator-1.20.0"), a.reg+"/cert-manager-operator-bundle:v1.20.0", nil)

	// lws-operator's gate: a ConfigMap one wave after the LeaderWorkerSetOperator CR. While the
	// CR's status says it is not ready, Argo CD must not apply it.
	lws := byName["lws-operator"]
	crWave := waveOfKind(t, a.render(lws.dir), "LeaderWorkerSetOperator")
	gate := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: after-operand\n  annotations:\n    %s: %q\ndata:\n  why: applied only once LeaderWorkerSetOperator/cluster is Healthy\n", waveAnnotation, fmt.Sprint(crWave+1))
	must(t, os.WriteFile(filepath.Join(lws.dir, "after-operand.yaml"), []byte(gate), 0o644))
	rev1 := a.commit("operators")
	for _, c := range cases {
		c.docs = a.render(c.dir)
		c.want = wavesOf(c.docs)
	}
	standIns(t, e.work, cases)

	ctl := startFakeControllers(t, e, cases)
	ctl.hold("LeaderWorkerSetOperator")

	// cert-manager first: the other operators' Certificates and Issuers need its CRDs
	start := time.Now()
	a.application(certMgr.name, certMgr.example, relPath(a, certMgr), "")
	certMgr.synced = waitApp(t, certMgr.name, rev1, 8*time.Minute)
	t.Logf("%s: Synced + Healthy in %v", certMgr.name, time.Since(start).Round(time.Second))
	checkSyncOrder(t, certMgr.synced, certMgr.want)
	checkSettleHookRan(t, certMgr.name, certMgr.synced)

	start = time.Now()
	for _, c := range cases[1:] {
		a.application(c.name, c.example, relPath(a, c), c.namespace)
	}

	// ---- the health gate: LeaderWorkerSetOperator reports Progressing, the next wave waits
	waitFor(t, 6*time.Minute, "LeaderWorkerSetOperator/cluster applied by Argo CD", func() bool {
		out, _ := kubectl(t, "get", "leaderworkersetoperators.operator.openshift.io", "cluster", "-o", "name", "--ignore-not-found")
		return strings.TrimSpace(string(out)) != ""
	})
	waitFor(t, time.Minute, "the held status written", func() bool { return ctl.written("LeaderWorkerSetOperator") })
	for i := 0; i < 3; i++ {
		time.Sleep(5 * time.Second)
		s := appStatus(t, lws.name)
		if s.Status.Health.Status == "Healthy" || s.Status.OperationState.Phase != "Running" {
			t.Fatalf("lws-operator with its CR not ready: health %s, operation %s (%s); want Progressing and a running sync",
				s.Status.Health.Status, s.Status.OperationState.Phase, s.Status.OperationState.Message)
		}
		if out, _ := kubectl(t, "-n", "openshift-lws-operator", "get", "configmap", "after-operand", "-o", "name", "--ignore-not-found"); strings.TrimSpace(string(out)) != "" {
			t.Fatalf("wave %d (ConfigMap after-operand) was applied while LeaderWorkerSetOperator (wave %d) was not ready", crWave+1, crWave)
		}
		t.Logf("  gate holds: lws-operator health %s, operation %s: %s", s.Status.Health.Status, s.Status.OperationState.Phase, s.Status.OperationState.Message)
	}
	ctl.release("LeaderWorkerSetOperator")

	for _, c := range cases[1:] {
		c.synced = waitApp(t, c.name, rev1, 10*time.Minute)
		t.Logf("%s: Synced + Healthy %v after the Applications were created", c.name, time.Since(start).Round(time.Second))
		checkSyncOrder(t, c.synced, c.want)
		checkSettleHookRan(t, c.name, c.synced)
	}

	// ---- stays Synced: no sync right after the first one (Argo CD 3.x self-heals at once when
	// its first comparison after a sync misses the last wave's writes), then other controllers
	// write and Argo CD looks again (hard refresh, its own resync, a normal refresh): no resource
	// goes OutOfSync and no second sync happens
	time.Sleep(5 * time.Second)
	base := map[string]appState{}
	for _, c := range cases {
		base[c.name] = appStatus(t, c.name)
		checkNoSyncSince(t, c.name, c.synced, base[c.name], "right after its first sync")
	}
	ctl.rotate() // cainjector with a new CA, operators rewriting status, token controller
	checkStable(t, cases, base, "after the simulated controller writes, hard refresh", "hard")
	t.Logf("waiting %ds, past --app-resync=%d", appResync+15, appResync)
	time.Sleep(time.Duration(appResync+15) * time.Second)
	checkStable(t, cases, base, "past --app-resync", "")
	checkStable(t, cases, base, "after a normal refresh", "normal")

	// ---- the bumps, in one commit: cert-manager-operator 1.19.1 -> 1.20.0 (the shared pair),
	// and lws-operator 1.0 -> 1.0.1 (a synthetic bump: the version, the CSV name and the image
	// tags change)
	pushBundle(t, filepath.Join(shared, lws.bundle), a.reg+"/lws-operator-bundle:1.0.1", lwsAt("1.0.1"))
	setSpec(t, filepath.Join(certMgr.dir, "olm-cmp.yaml"), map[string]string{"version": "v1.20.0"})
	setSpec(t, filepath.Join(lws.dir, "olm-cmp.yaml"), map[string]string{"version": "1.0.1"})
	rev2 := a.commit("cert-manager-operator v1.20.0, lws-operator 1.0.1")
	bumped := []*syncCase{certMgr, lws}
	for _, c := range bumped {
		c.want = wavesOf(a.render(c.dir))
	}
	start = time.Now()
	for _, c := range bumped {
		refresh(t, c.name, "normal")
	}
	for _, c := range bumped {
		c.synced = waitApp(t, c.name, rev2, 8*time.Minute)
		t.Logf("%s bumped: re-synced + Healthy %v after the refresh", c.name, time.Since(start).Round(time.Second))
		checkSyncOrder(t, c.synced, c.want)
		checkSettleHookRan(t, c.name, c.synced)
		checkBumpApplied(t, c.synced)
		if n, was := len(c.synced.Status.History), len(base[c.name].Status.History); n != was+1 {
			t.Errorf("%s: %d syncs in its history after the bump, want %d (one more)", c.name, n, was+1)
		}
	}
	time.Sleep(5 * time.Second)
	for _, c := range bumped {
		base[c.name] = appStatus(t, c.name)
		checkNoSyncSince(t, c.name, c.synced, base[c.name], "right after the bump's sync")
	}
	checkStable(t, bumped, base, "after the bump, hard refresh", "hard")
	// the operator's image, or the operand images it gets in its env: cert-manager-operator's
	// example pins 1.20's cert-manager controller (quay.io/jetstack/cert-manager-controller:v1.20.3
	// in the bundle) to a registry.redhat.io digest through spec.images, which 1.19.1's v1.19.5
	// did not match
	var ex struct {
		Spec struct{ Images map[string]string }
	}
	exFile, err := os.ReadFile(filepath.Join(a.e.repo, "examples", "cert-manager-operator", "olm-cmp.yaml"))
	must(t, err)
	must(t, yaml.Unmarshal(exFile, &ex))
	controller120 := ex.Spec.Images["quay.io/jetstack/cert-manager-controller:v1.20.3"]
	if controller120 == "" {
		t.Fatal("examples/cert-manager-operator no longer rewrites quay.io/jetstack/cert-manager-controller:v1.20.3")
	}
	for ns, want := range map[string]string{"cert-manager-operator": controller120, "openshift-lws-operator": "lws-rhel9-operator:1.0.1"} {
		img := strings.TrimSpace(string(mustKubectl(t, "-n", ns, "get", "deploy", "-o",
			"jsonpath={.items[*].spec.template.spec.containers[*].image} {.items[*].spec.template.spec.containers[*].env[*].value}")))
		if !strings.Contains(img, want) {
			t.Errorf("after the bump %s runs %q, want %q in it", ns, img, want)
		}
	}
}

// prepare pushes the case's bundle image and writes its source directory (not yet committed).
func (c *syncCase) prepare(t *testing.T, a *argoCD, shared string) {
	t.Helper()
	bdir := filepath.Join(shared, c.bundle)
	repo := a.reg + "/" + c.name + "-bundle"
	pushBundle(t, bdir, repo+":"+c.tag, c.rewrite)
	c.dir = filepath.Join(a.git, "apps", c.name)
	if c.example != "" {
		copyDir(t, filepath.Join(a.e.repo, "examples", c.example), c.dir)
		// argocd/ holds the Application; everything else next to olm-cmp.yaml is rendered
		must(t, os.RemoveAll(filepath.Join(c.dir, "argocd")))
		setSpec(t, filepath.Join(c.dir, "olm-cmp.yaml"), map[string]string{"bundle": repo, "version": c.tag})
		return
	}
	// a generated spec, as the corpus suite makes them: own namespace, the CSV's examples that
	// an API server can take without the operator running, webhooks patched to Ignore (kwok
	// pods serve nothing)
	c.namespace = nsName("argo", c.name)
	spec := map[string]any{"bundle": bdir, "namespace": c.namespace}
	if kinds := servableExampleKinds(t, bdir); len(kinds) > 0 {
		spec["examples"] = kinds
	}
	f := map[string]any{"apiVersion": "olm-cmp.dev/v1alpha1", "kind": "OperatorBundle",
		"metadata": map[string]any{"name": c.name}, "spec": spec}
	scratch := filepath.Join(a.e.work, "scratch-"+c.name)
	a.e.withIgnoreWebhooks(t, scratch, f)
	spec["bundle"], spec["version"] = repo, c.tag
	writeSpecFile(t, c.dir, f)
}

func relPath(a *argoCD, c *syncCase) string {
	r, _ := filepath.Rel(a.git, c.dir)
	return r
}

// servableExampleKinds: the alm-examples kinds whose CRD an API server can serve without the
// operator: not converted by a webhook (Argo CD and kubectl read custom resources at the
// preferred version, which calls the webhook whenever it is not the storage version, and kwok
// runs no operator to answer). Examples that
// do not fit their own CRD are left out by name: LokiStack (rejected), and kubevirt's SSP, whose
// example sets spec.featureGates, a field of v1beta2 that the storage version v1beta3 does not
// have: the API server prunes it, and the live object can never equal the example.
func servableExampleKinds(t *testing.T, bundleDir string) []string {
	t.Helper()
	rejected := map[string]bool{"LokiStack": true, "SSP": true}
	crds := map[string]map[string]any{}
	files, _ := filepath.Glob(filepath.Join(bundleDir, "manifests", "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, d := range splitStream(t, b) {
			if d.Kind == "CustomResourceDefinition" {
				crds[str(d.Obj, "spec", "group")+"/"+str(d.Obj, "spec", "names", "kind")] = d.Obj
			}
		}
	}
	seen := map[string]bool{}
	var kinds []string
	for _, ex := range almExamples(t, bundleDir) {
		kind, _ := ex["kind"].(string)
		apiVersion, _ := ex["apiVersion"].(string)
		group, _, _ := strings.Cut(apiVersion, "/")
		if kind == "" || seen[kind] || rejected[kind] {
			continue
		}
		if crd, ok := crds[group+"/"+kind]; ok && str(crd, "spec", "conversion", "strategy") == "Webhook" {
			continue
		}
		seen[kind] = true
		kinds = append(kinds, kind)
	}
	sort.Strings(kinds)
	return kinds
}

// render renders dir as the plugin does (the same registry).
func (a *argoCD) render(dir string) []Doc {
	return a.e.render(a.t, dir, "--insecure-registry", a.reg, "--cache-dir", filepath.Join(a.e.work, "render-cache"))
}

func (a *argoCD) renderWaves(dir string) map[string]int { return wavesOf(a.render(dir)) }

// wavesOf maps each object of a render to its sync wave; resource hooks, which run after the
// waves, are left out.
func wavesOf(docs []Doc) map[string]int {
	m := map[string]int{}
	for _, d := range docs {
		if str(d.Obj, "metadata", "annotations", "argocd.argoproj.io/hook") != "" {
			continue
		}
		m[d.Group()+"/"+d.Kind+"/"+d.Namespace+"/"+d.Name] = d.Wave
	}
	return m
}

func waveOfKind(t *testing.T, docs []Doc, kind string) int {
	for _, d := range docs {
		if d.Kind == kind {
			return d.Wave
		}
	}
	t.Fatalf("no %s in the render", kind)
	return 0
}

// standIns creates permissive CRDs for the APIs some render uses that no render defines and the
// cluster does not serve (ServiceMonitor, PrometheusRule, ...): on a real cluster other
// operators bring them. Likewise namespaces and PriorityClasses the renders name but do not
// create.
func standIns(t *testing.T, work string, cases []*syncCase) {
	ap := newApplier(t, work)
	for _, c := range cases {
		for _, d := range c.docs {
			if d.Kind == "CustomResourceDefinition" {
				ap.crds[crdGroupKind(d.Obj)] = d.Obj
			}
		}
	}
	for _, c := range cases {
		for _, d := range c.docs {
			if d.Group() != "" && strings.Contains(d.Group(), ".") && d.Kind != "CustomResourceDefinition" {
				ap.ensureServed(d)
			}
		}
		// what the operators make at run time, or the cluster has (kube-system), as the corpus
		// suite provides them
		ap.ensureNamespaces(c.name, c.docs, c.docs)
		ap.ensurePriorityClasses(c.name, c.docs, c.docs)
	}
}

// healthCustomizations is the argocd-cm data of deploy/argocd/resource-customizations.yaml: the
// health checks users install, so the suite syncs with what ships.
func healthCustomizations(t *testing.T, repo string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "deploy", "argocd", "resource-customizations.yaml"))
	must(t, err)
	var cm struct {
		Data map[string]string `json:"data"`
	}
	must(t, yaml.Unmarshal(b, &cm))
	if len(cm.Data) == 0 {
		t.Fatal("deploy/argocd/resource-customizations.yaml: no data")
	}
	return cm.Data
}

// ---------------------------------------------------------------- Application state

func appStatus(t *testing.T, name string) appState {
	t.Helper()
	out := mustKubectl(t, "-n", "argocd", "get", "application", name, "-o", "json")
	var st appState
	must(t, json.Unmarshal(out, &st))
	return st
}

// checkStable refreshes every case's Application (kind "" = no refresh, just a fresh
// comparison), waits for a comparison that started after now, and asserts Synced, Healthy,
// no resource OutOfSync and no sync since base.
func checkStable(t *testing.T, cases []*syncCase, base map[string]appState, when, kind string) {
	t.Helper()
	since := time.Now().Add(-time.Second).UTC().Truncate(time.Second)
	for _, c := range cases {
		if kind != "" {
			refresh(t, c.name, kind)
		}
	}
	for _, c := range cases {
		var s appState
		waitFor(t, 3*time.Minute, c.name+" compared again "+when, func() bool {
			s = appStatus(t, c.name)
			r, err := time.Parse(time.RFC3339, s.Status.ReconciledAt)
			return err == nil && !r.Before(since) && s.Metadata.Annotations["argocd.argoproj.io/refresh"] == ""
		})
		var out []string
		for _, r := range s.Status.Resources {
			if r.Status != "Synced" {
				out = append(out, fmt.Sprintf("%s/%s %s/%s: %s", r.Group, r.Kind, r.Namespace, r.Name, r.Status))
			}
		}
		b := base[c.name].Status
		switch {
		case s.Status.Sync.Status != "Synced" || len(out) > 0:
			t.Errorf("%s %s: sync %s, %d resources not Synced: %s", c.name, when, s.Status.Sync.Status, len(out), strings.Join(out, "; "))
		case s.Status.Health.Status != "Healthy":
			t.Errorf("%s %s: health %s", c.name, when, s.Status.Health.Status)
		case len(s.Status.History) != len(b.History) || s.Status.OperationState.StartedAt != b.OperationState.StartedAt:
			t.Errorf("%s %s: synced again (history %d -> %d, last sync started %s -> %s): something drifted",
				c.name, when, len(b.History), len(s.Status.History), b.OperationState.StartedAt, s.Status.OperationState.StartedAt)
		default:
			t.Logf("%s %s: Synced, Healthy, %d resources, no new sync", c.name, when, len(s.Status.Resources))
		}
	}
}

// checkNoSyncSince: no operation has started since the sync that left the Application as
// synced (a partial self-heal sync does not enter the history; its start time gives it away).
func checkNoSyncSince(t *testing.T, name string, synced, now appState, when string) {
	t.Helper()
	if s := now.Status.OperationState; s.StartedAt != synced.Status.OperationState.StartedAt {
		t.Errorf("%s synced again %s: an operation started at %s (resources %v): %s", name, when, s.StartedAt, s.Operation.Sync.Resources, s.Message)
	}
}

// checkSettleHookRan: olm-cmp's PostSync hook ran, so the last wave was waited for.
func checkSettleHookRan(t *testing.T, name string, st appState) {
	t.Helper()
	for _, r := range st.Status.OperationState.SyncResult.Resources {
		if r.SyncPhase == "PostSync" && r.Kind == "ConfigMap" && r.HookPhase == "Succeeded" {
			return
		}
	}
	t.Errorf("%s: olm-cmp's PostSync settle hook did not run (or did not succeed) in the sync", name)
}

// checkBumpApplied: a bump changes objects; the sync must have applied some (not only
// "unchanged"), and pruned the ones the new version drops.
func checkBumpApplied(t *testing.T, st appState) {
	t.Helper()
	changed := 0
	for _, r := range st.Status.OperationState.SyncResult.Resources {
		if r.SyncPhase == "Sync" && !strings.HasSuffix(r.Message, " unchanged") {
			changed++
		}
	}
	if changed == 0 {
		t.Errorf("the bump's sync changed no object")
	}
	t.Logf("the bump's sync: %d of %d resources created, configured or pruned", changed, len(st.Status.OperationState.SyncResult.Resources))
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(time.Second)
	}
}

// ---------------------------------------------------------------- other controllers

// fakeControllers writes what controllers of a real cluster write, each with its own field
// manager, into the objects of the renders as they appear:
//   - cert-manager: Ready status on Certificates and Issuers;
//   - cert-manager's cainjector: caBundle into webhook configurations and CRDs that carry
//     cert-manager.io/inject-ca-from;
//   - the operators: the status of their CRs (the deploy/argocd/health samples), held at
//     not-ready for kinds the test holds;
//   - the ServiceAccount token controller: a token Secret reference on ServiceAccounts.
type fakeControllers struct {
	t     *testing.T
	ca    []byte // PEM, what cainjector injects
	mu    sync.Mutex
	tasks []*fakeWrite
	held  map[string]bool
}

type fakeWrite struct {
	kind, key string // kind of object; its namespace/name
	done      bool
	write     func(held bool) error // one write; held: the kind is held at not-ready
	heldDone  bool                  // the held state was written
}

func startFakeControllers(t *testing.T, e env, cases []*syncCase) *fakeControllers {
	t.Helper()
	f := &fakeControllers{t: t, ca: newCA(t), held: map[string]bool{}}
	samples := healthSamples(t, e.repo)
	for _, c := range cases {
		for _, d := range c.docs {
			f.tasks = append(f.tasks, f.writesFor(d, samples)...)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			f.pass()
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return f
}

// pass tries every pending write once: an object not there yet fails, and is tried again.
func (f *fakeControllers) pass() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, w := range f.tasks {
		held := f.held[w.kind]
		if w.done || (held && w.heldDone) {
			continue
		}
		if err := w.write(held); err == nil {
			if held {
				w.heldDone = true
			} else {
				w.done = true
			}
		}
	}
}

func (f *fakeControllers) hold(kind string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held[kind] = true
}

func (f *fakeControllers) release(kind string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.held, kind)
}

func (f *fakeControllers) written(kind string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, w := range f.tasks {
		if w.kind == kind {
			n++
			if !w.heldDone && !w.done {
				return false
			}
		}
	}
	return n > 0
}

// rotate does every write once more, synchronously: a new CA from cainjector, fresh status
// from the operators and cert-manager, the token controller again.
func (f *fakeControllers) rotate() {
	f.mu.Lock()
	f.ca = newCA(f.t) // cainjector after a CA rotation
	for _, w := range f.tasks {
		w.done = false
	}
	f.mu.Unlock()
	f.pass()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, w := range f.tasks {
		if !w.done {
			f.t.Errorf("simulated controller write to %s %s failed", w.kind, w.key)
		}
	}
}

func (f *fakeControllers) writesFor(d Doc, samples map[string]healthSample) []*fakeWrite {
	t := f.t
	ns := []string{}
	if d.Namespace != "" {
		ns = []string{"-n", d.Namespace}
	}
	res := resourceArg(d)
	patch := func(manager, typ, body string, status bool) error {
		args := append(append([]string{"patch", res, d.Name}, ns...), "--type="+typ, "-p", body, "--field-manager="+manager)
		if status {
			args = append(args, "--subresource=status")
		}
		_, err := kubectl(t, args...)
		return err
	}
	key := d.Namespace + "/" + d.Name
	var out []*fakeWrite
	add := func(w func(bool) error) { out = append(out, &fakeWrite{kind: d.Kind, key: key, write: w}) }

	if d.Group() == "cert-manager.io" && (d.Kind == "Certificate" || d.Kind == "Issuer") {
		add(func(bool) error {
			now := time.Now().UTC().Format(time.RFC3339)
			st := map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Ready",
				"message": "simulated by the e2e (cert-manager)", "lastTransitionTime": now, "observedGeneration": generation(t, res, d.Name, ns)}}}
			if d.Kind == "Certificate" {
				st["notAfter"] = time.Now().Add(90 * 24 * time.Hour).UTC().Format(time.RFC3339)
			}
			b, _ := json.Marshal(map[string]any{"status": st})
			return patch("cert-manager-certificates-readiness", "merge", string(b), true)
		})
	}
	if inj := str(d.Obj, "metadata", "annotations", "cert-manager.io/inject-ca-from"); inj != "" {
		switch d.Kind {
		case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
			hooks, _ := d.Obj["webhooks"].([]any)
			add(func(bool) error {
				var ops []map[string]any
				for i := range hooks {
					ops = append(ops, map[string]any{"op": "add", "path": fmt.Sprintf("/webhooks/%d/clientConfig/caBundle", i),
						"value": base64.StdEncoding.EncodeToString(f.ca)})
				}
				b, _ := json.Marshal(ops)
				return patch("cert-manager-cainjector", "json", string(b), false)
			})
		case "CustomResourceDefinition":
			if str(d.Obj, "spec", "conversion", "strategy") == "Webhook" {
				add(func(bool) error {
					b, _ := json.Marshal([]map[string]any{{"op": "add", "path": "/spec/conversion/webhook/clientConfig/caBundle",
						"value": base64.StdEncoding.EncodeToString(f.ca)}})
					return patch("cert-manager-cainjector", "json", string(b), false)
				})
			}
		}
	}
	if s, ok := samples[d.Group()+"/"+d.Kind]; ok {
		add(func(held bool) error {
			st := s.healthy
			if held {
				st = s.progressing
			}
			st = withGeneration(st, generation(t, res, d.Name, ns))
			b, _ := json.Marshal(map[string]any{"status": st})
			return patch("operator", "merge", string(b), true)
		})
	}
	if d.Kind == "ServiceAccount" && d.Group() == "" {
		add(func(bool) error {
			b, _ := json.Marshal(map[string]any{"secrets": []any{map[string]any{"name": d.Name + "-token-e2e"}}})
			return patch("kube-controller-manager", "merge", string(b), false)
		})
	}
	return out
}

// newCA is a fresh self-signed CA certificate (PEM): what cainjector injects.
func newCA(t *testing.T) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "olm-cmp-e2e-webhook-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// generation is the object's metadata.generation (an error string is never a number: 0).
func generation(t *testing.T, res, name string, ns []string) int64 {
	out, err := kubectl(t, append(append([]string{"get", res, name}, ns...), "-o", "jsonpath={.metadata.generation}")...)
	if err != nil {
		return 0
	}
	var g int64
	fmt.Sscan(strings.TrimSpace(string(out)), &g)
	return g
}

// withGeneration sets observedGeneration, where the sample has one, to gen (top level and in
// conditions), as the operator would after reading the current spec.
func withGeneration(st map[string]any, gen int64) map[string]any {
	b, _ := json.Marshal(st)
	var c map[string]any
	_ = json.Unmarshal(b, &c)
	if _, ok := c["observedGeneration"]; ok {
		c["observedGeneration"] = gen
	}
	conds, _ := c["conditions"].([]any)
	for _, x := range conds {
		if m, ok := x.(map[string]any); ok {
			if _, ok := m["observedGeneration"]; ok {
				m["observedGeneration"] = gen
			}
		}
	}
	return c
}

type healthSample struct{ healthy, progressing map[string]any }

// healthSamples reads deploy/argocd/health/testdata: per group/kind, the status of a healthy and
// of a progressing CR, as the health checks' own tests know them.
func healthSamples(t *testing.T, repo string) map[string]healthSample {
	t.Helper()
	root := filepath.Join(repo, "deploy", "argocd", "health", "testdata")
	dirs, err := os.ReadDir(root)
	must(t, err)
	out := map[string]healthSample{}
	for _, d := range dirs {
		group, kind, ok := strings.Cut(d.Name(), "_")
		if !d.IsDir() || !ok {
			continue
		}
		var s healthSample
		for name, dst := range map[string]*map[string]any{"healthy": &s.healthy, "progressing": &s.progressing} {
			b, err := os.ReadFile(filepath.Join(root, d.Name(), name+".yaml"))
			must(t, err)
			var obj map[string]any
			must(t, yaml.Unmarshal(b, &obj))
			st, ok := obj["status"].(map[string]any)
			if !ok {
				t.Fatalf("%s/%s.yaml: no status", d.Name(), name)
			}
			*dst = st
		}
		out[group+"/"+kind] = s
	}
	if len(out) == 0 {
		t.Fatalf("%s: no health samples", root)
	}
	return out
}
