package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// operatorCase is one real operator the `operators` suite runs from olm-cmp's render.
type operatorCase struct {
	name     string            // build-operators.sh's name (stamp .op-<name>.stamp)
	bundle   string            // directory in ../shared/bundles
	binaries map[string]string // command or image name -> binary file in $E2E_BIN
	examples []string          // alm-example kinds the spec renders (applied once the operator runs)
	// spec: more olm-cmp.yaml spec fields (they win over bundle, namespace and examples): what
	// the operator's example in examples/ answers (images, clusterAPIs, accept, ...)
	spec map[string]any
	// imageFiles: directories the image carries (container path -> host path)
	imageFiles func(t *testing.T) map[string]string
	// check asserts what the operator did with its examples; it returns a one-line summary
	check func(t *testing.T, r *operatorRun) string
}

// operatorRun is an installed, running operator.
type operatorRun struct {
	ns       string
	docs     []Doc
	examples []Doc
	pods     []*runningPod
	applier  *applier
	applied  time.Time // when the examples were applied
}

const reconcileTimeout = 3 * time.Minute

func operatorCases() []operatorCase {
	return []operatorCase{
		{name: "source-controller", bundle: "flux-2.3.0",
			binaries: map[string]string{"source-controller": "source-controller"},
			examples: []string{"GitRepository"}, check: checkSourceController},
		{name: "observability-operator", bundle: "observability-operator-0.0.28",
			binaries: map[string]string{"observability-operator": "observability-operator"},
			examples: []string{"MonitoringStack", "ThanosQuerier"}, check: checkObservability},
		{name: "crossplane", bundle: "universal-crossplane-1.5.1-up.1",
			binaries: map[string]string{"crossplane": "crossplane"},
			examples: []string{"CompositeResourceDefinition", "Composition"},
			// crossplane's image carries its core CRDs at /crds (`core init` applies them): the
			// module's cluster/crds, as its Dockerfile copies them
			imageFiles: func(t *testing.T) map[string]string {
				return map[string]string{"/crds": filepath.Join(cacheDir(), "src", "op-crossplane", "cluster", "crds")}
			},
			check: checkCrossplane},
		{name: "psmdb", bundle: "percona-server-mongodb-operator-1.23.0",
			binaries: map[string]string{"percona-server-mongodb-operator": "percona-server-mongodb-operator"},
			examples: []string{"PerconaServerMongoDB"}, check: checkPSMDB},
	}
}

func cacheDir() string {
	if c := os.Getenv("OLM_CMP_E2E_CACHE"); c != "" {
		return c
	}
	return filepath.Join(os.Getenv("HOME"), ".cache", "olm-cmp", "e2e")
}

// TestOperators runs real operators (built by build-operators.sh from the module proxy at the
// versions their bundles ship) from olm-cmp's render: each rendered Deployment whose image has a
// built binary runs through the pod runner as its kwok Pod, with the rendered ServiceAccount's
// token; the CSV's examples are applied and what the operator does with them is asserted, in a
// bounded time, with no RBAC denial in its logs. Operators run one after the other.
func TestOperators(t *testing.T) {
	e := setup(t)
	root := e.sharedBundles(t)
	ran := 0
	for _, oc := range operatorCases() {
		t.Run(oc.name, func(t *testing.T) {
			bins := map[string]string{}
			for k, f := range oc.binaries {
				b := filepath.Join(os.Getenv("E2E_BIN"), f)
				if _, err := os.Stat(filepath.Join(os.Getenv("E2E_BIN"), ".op-"+oc.name+".stamp")); err != nil {
					t.Skipf("%s not built (test/e2e/build-operators.sh reports why; log in %s)", oc.name,
						filepath.Join(cacheDir(), "src", "op-"+oc.name+".log"))
				}
				bins[k] = b
			}
			r := e.installOperator(t, filepath.Join(root, oc.bundle), oc, bins)
			summary := oc.check(t, r)
			took := time.Since(r.applied).Round(time.Second)
			checkDenials(t, r.pods)
			for _, p := range r.pods {
				if ex := p.Exited(); len(ex) > 0 {
					t.Errorf("pod %s/%s: containers stopped on their own: %s", p.Namespace, p.Pod, strings.Join(ex, ", "))
				}
			}
			t.Logf("RESULT %s: %d Deployment(s) run; %s; reconciled in %v; no RBAC denial", oc.name, len(r.pods), summary, took)
			ran++
		})
	}
	if ran == 0 {
		t.Log("no operator ran: run test/e2e/build-operators.sh")
	}
	t.Run("argocd-source-controller", func(t *testing.T) { testOperatorThroughArgoCD(t, e, root) })
}

// installOperator renders the bundle (own namespace, the case's examples), applies everything but
// the examples wave by wave, runs every Deployment with a built binary, then applies the examples.
func (e env) installOperator(t *testing.T, bundle string, oc operatorCase, bins map[string]string) *operatorRun {
	t.Helper()
	r := &operatorRun{ns: nsName("op", oc.name)}
	spec := map[string]any{"bundle": bundle, "namespace": r.ns, "examples": oc.examples}
	for k, v := range oc.spec {
		spec[k] = v
	}
	dir := filepath.Join(e.work, "op-"+oc.name)
	f := map[string]any{"apiVersion": "olm-cmp.dev/v1alpha1", "kind": "OperatorBundle",
		"metadata": map[string]any{"name": oc.name}, "spec": spec}
	r.docs = e.withIgnoreWebhooks(t, dir, f)
	crdKinds := map[string]bool{}
	for _, d := range r.docs {
		if d.Kind == "CustomResourceDefinition" {
			crdKinds[crdGroupKind(d.Obj)] = true
		}
	}
	exampleKind := map[string]bool{}
	for _, k := range oc.examples {
		exampleKind[k] = true
	}
	var install []Doc
	for _, d := range r.docs {
		if exampleKind[d.Kind] && crdKinds[d.Group()+"/"+d.Kind] {
			r.examples = append(r.examples, d)
		} else {
			install = append(install, d)
		}
	}
	if len(r.examples) == 0 {
		t.Fatalf("the render of %s has no example of %v", filepath.Base(bundle), oc.examples)
	}
	r.applier = newApplier(t, e.work)
	r.applier.examples = almExamples(t, bundle)
	r.applier.apply(oc.name, install)

	var imageFiles map[string]string
	if oc.imageFiles != nil {
		imageFiles = oc.imageFiles(t)
	}
	for _, d := range install {
		if d.Kind != "Deployment" {
			continue
		}
		if !runnable(d, bins) {
			t.Logf("Deployment %s: not run (no binary built for %s); its kwok pod stays a fake", d.Name, strings.Join(images(d.Obj), ", "))
			continue
		}
		r.pods = append(r.pods, runPod(t, d, podOptions{Binaries: bins, ImageFiles: imageFiles}))
	}
	if len(r.pods) == 0 {
		t.Fatalf("no rendered Deployment of %s runs a built binary (%v)", filepath.Base(bundle), keys(bins))
	}
	// let the managers start (caches synced) so a CR's first reconcile is theirs
	time.Sleep(5 * time.Second)
	for _, p := range r.pods {
		if ex := p.Exited(); len(ex) > 0 {
			t.Fatalf("pod %s/%s: containers stopped right after start: %s\n%s", p.Namespace, p.Pod, strings.Join(ex, ", "), tailLogs(p))
		}
	}
	r.applied = time.Now()
	r.applier.apply(oc.name+"-examples", r.examples)
	return r
}

func tailLogs(p *runningPod) string {
	var b strings.Builder
	for _, l := range p.LogFiles() {
		fmt.Fprintf(&b, "==> %s\n%s\n", filepath.Base(l), tail(l, 30))
	}
	return b.String()
}

// runnable: some container of the Deployment maps to a built binary.
func runnable(d Doc, bins map[string]string) bool {
	spec, _ := d.Obj["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	for _, c := range append(list(spec["containers"]), list(spec["initContainers"])...) {
		cm := c.(map[string]any)
		if cmd := strs(cm["command"]); len(cmd) > 0 {
			if bins[filepath.Base(cmd[0])] != "" {
				return true
			}
		} else if bins[imageName(str(cm, "image"))] != "" {
			return true
		}
	}
	return false
}

var denialDetail = regexp.MustCompile(`User \\?"system:serviceaccount:([^:"\\]+):([^"\\]+)\\?" cannot (\S+) resource \\?"([^"\\]+)\\?" in API group \\?"([^"\\]*)\\?"`)

// checkDenials fails on every RBAC denial the operators logged, naming verb, resource and SA.
// A denial on an API group the cluster does not serve is logged, not failed: the API server
// authorizes before it looks the resource up, so a grant would only turn the 403 into a 404
// (library-go operators probe OpenShift's infrastructures this way and fall back); it is not
// something the render's RBAC lacks.
func checkDenials(t *testing.T, pods []*runningPod) {
	t.Helper()
	seen := map[string]bool{}
	served := map[string]bool{"": true}
	for _, gv := range strings.Fields(string(mustKubectl(t, "api-versions"))) {
		g, _, _ := strings.Cut(gv, "/")
		if strings.Contains(gv, "/") {
			served[g] = true
		}
	}
	for _, p := range pods {
		for _, line := range p.Denials() {
			msg := line
			if m := denialDetail.FindStringSubmatch(line); m != nil {
				group := m[5]
				if !served[group] {
					if !seen[group] {
						seen[group] = true
						t.Logf("pod %s/%s: ServiceAccount %s/%s cannot %s %s in API group %s, which this cluster does not serve (403 before 404; not a gap of the render's RBAC)", p.Namespace, p.Pod, m[1], m[2], m[3], m[4], group)
					}
					continue
				}
				if group == "" {
					group = "core"
				}
				msg = fmt.Sprintf("RBAC denial: ServiceAccount %s/%s cannot %s %s (API group %s) — the render's RBAC lacks it", m[1], m[2], m[3], m[4], group)
			}
			if !seen[msg] {
				seen[msg] = true
				t.Errorf("pod %s/%s: %s\n  log: %s", p.Namespace, p.Pod, msg, head(line))
			}
		}
	}
}

// ---------------------------------------------------------------- object helpers

func getJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out, err := kubectl(t, append(append([]string{"get"}, args...), "-o", "json")...)
	if err != nil {
		return nil
	}
	var o map[string]any
	if json.Unmarshal(out, &o) != nil {
		return nil
	}
	return o
}

// condition returns status and reason of a status condition ("" when absent).
func condition(o map[string]any, typ string) (status, reason, message string) {
	st, _ := o["status"].(map[string]any)
	for _, c := range list(st["conditions"]) {
		cm, _ := c.(map[string]any)
		if cm["type"] == typ {
			return fmt.Sprint(cm["status"]), fmt.Sprint(cm["reason"]), fmt.Sprint(cm["message"])
		}
	}
	return "", "", ""
}

// conditionGeneration is a condition's observedGeneration ("" when absent).
func conditionGeneration(o map[string]any, typ string) string {
	st, _ := o["status"].(map[string]any)
	for _, c := range list(st["conditions"]) {
		cm, _ := c.(map[string]any)
		if cm["type"] == typ && cm["observedGeneration"] != nil {
			return fmt.Sprint(cm["observedGeneration"])
		}
	}
	return ""
}

func generationOf(o map[string]any) string {
	return fmt.Sprint(o["metadata"].(map[string]any)["generation"])
}

func ownedBy(o map[string]any, uid string) bool {
	for _, r := range list(o["metadata"].(map[string]any)["ownerReferences"]) {
		if str(r.(map[string]any), "uid") == uid {
			return true
		}
	}
	return false
}

func exampleOf(t *testing.T, r *operatorRun, kind string) Doc {
	t.Helper()
	for _, d := range r.examples {
		if d.Kind == kind {
			return d
		}
	}
	t.Fatalf("no %s example in the render", kind)
	return Doc{}
}

func getDoc(t *testing.T, d Doc) map[string]any {
	args := []string{resourceArg(d), d.Name}
	if d.Namespace != "" {
		args = append(args, "-n", d.Namespace)
	}
	return getJSON(t, args...)
}

// ---------------------------------------------------------------- source-controller

// helmIndex is a minimal Helm repository index.
const helmIndex = `apiVersion: v1
entries:
  podinfo:
  - apiVersion: v2
    name: podinfo
    version: 6.6.0
    created: "2024-01-01T00:00:00Z"
    digest: 0000000000000000000000000000000000000000000000000000000000000000
    urls: [podinfo-6.6.0.tgz]
generated: "2024-01-01T00:00:00Z"
`

// checkSourceController: the GitRepository example (github.com, unreachable from the pod's
// network namespace) gets the operator's failure status; a HelmRepository served on the pod's
// own loopback becomes Ready with an artifact stored under the rendered --storage-path and
// advertised at the rendered --storage-adv-addr (with $(RUNTIME_NAMESPACE) expanded).
func checkSourceController(t *testing.T, r *operatorRun) string {
	p := r.pods[0]
	gr := exampleOf(t, r, "GitRepository")
	var st, reason, msg string
	waitFor(t, reconcileTimeout, "the GitRepository example's status from source-controller", func() bool {
		o := getDoc(t, gr)
		if o == nil {
			return false
		}
		st, reason, msg = condition(o, "Ready")
		// flux sets status.observedGeneration only after a successful pass; the condition has its own
		return st == "False" && conditionGeneration(o, "Ready") == generationOf(o)
	})
	t.Logf("GitRepository %s/%s: Ready=%s %s (%s)", gr.Namespace, gr.Name, st, reason, msg)
	if reason != "GitOperationFailed" {
		t.Errorf("GitRepository example: Ready reason %q, want GitOperationFailed (the clone fails: no network)", reason)
	}

	// a Helm repository on the pod's loopback
	ln := p.Listen("127.0.0.1:18999")
	mux := http.NewServeMux()
	mux.HandleFunc("/charts/index.yaml", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(helmIndex)) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	hr := fmt.Sprintf(`apiVersion: source.toolkit.fluxcd.io/v1beta2
kind: HelmRepository
metadata: {name: loopback, namespace: %s}
spec: {url: "http://127.0.0.1:18999/charts", interval: 1m}
`, r.ns)
	file := filepath.Join(t.TempDir(), "helmrepository.yaml")
	must(t, os.WriteFile(file, []byte(hr), 0o644))
	mustKubectl(t, "apply", "-f", file)
	var o map[string]any
	waitFor(t, reconcileTimeout, "HelmRepository loopback Ready", func() bool {
		o = getJSON(t, "helmrepository.source.toolkit.fluxcd.io", "loopback", "-n", r.ns)
		s, _, _ := condition(o, "Ready")
		return s == "True"
	})
	url := str(o, "status", "artifact", "url")
	wantPrefix := "http://source-controller." + r.ns + ".svc.cluster.local./helmrepository/" + r.ns + "/loopback/"
	if !strings.HasPrefix(url, wantPrefix) {
		t.Errorf("HelmRepository artifact url %q, want prefix %q (the rendered --storage-adv-addr with RUNTIME_NAMESPACE)", url, wantPrefix)
	}
	stored := p.Path(filepath.Join("/data", str(o, "status", "artifact", "path")))
	if b, err := os.ReadFile(stored); err != nil || !strings.Contains(string(b), "podinfo") {
		t.Errorf("artifact not stored under the rendered --storage-path=/data: %s: %v", stored, err)
	}
	return fmt.Sprintf("GitRepository example Ready=False/%s; HelmRepository on loopback Ready=True, artifact in /data", reason)
}

// ---------------------------------------------------------------- observability-operator

// checkObservability: the MonitoringStack example gets its Prometheus and Alertmanager (owned
// by it) and the operator's status conditions; the ThanosQuerier gets its Deployment and
// Service. (Prometheus itself is obo-prometheus-operator's, not built: Available stays False.)
func checkObservability(t *testing.T, r *operatorRun) string {
	ms := exampleOf(t, r, "MonitoringStack")
	var o map[string]any
	waitFor(t, reconcileTimeout, "the MonitoringStack's Prometheus, Alertmanager and status", func() bool {
		o = getDoc(t, ms)
		if o == nil {
			return false
		}
		uid := str(o, "metadata", "uid")
		prom := getJSON(t, "prometheus.v1.monitoring.rhobs", ms.Name, "-n", ms.Namespace)
		am := getJSON(t, "alertmanager.v1.monitoring.rhobs", ms.Name, "-n", ms.Namespace)
		s, _, _ := condition(o, "Reconciled")
		return prom != nil && am != nil && ownedBy(prom, uid) && ownedBy(am, uid) && s != ""
	})
	rs, rr, _ := condition(o, "Reconciled")
	as, ar, _ := condition(o, "Available")
	ds, _, _ := condition(o, "ResourceDiscovery")
	if ds != "True" {
		t.Errorf("MonitoringStack ResourceDiscovery=%q, want True (the example sets a resourceSelector)", ds)
	}
	tq := exampleOf(t, r, "ThanosQuerier")
	name := "thanos-querier-" + tq.Name
	waitFor(t, reconcileTimeout, "the ThanosQuerier's Deployment and Service "+name, func() bool {
		return getJSON(t, "deployment", name, "-n", tq.Namespace) != nil && getJSON(t, "service", name, "-n", tq.Namespace) != nil
	})
	return fmt.Sprintf("MonitoringStack -> Prometheus+Alertmanager, Reconciled=%s/%s Available=%s/%s; ThanosQuerier -> Deployment+Service", rs, rr, as, ar)
}

// ---------------------------------------------------------------- crossplane

// checkCrossplane: `core init` ran (the Lock object), the CompositeResourceDefinition example
// becomes Established and Offered with the composite and claim CRDs crossplane creates, and the
// RBAC manager creates the XRD's aggregated ClusterRoles.
func checkCrossplane(t *testing.T, r *operatorRun) string {
	xrd := exampleOf(t, r, "CompositeResourceDefinition")
	var o map[string]any
	waitFor(t, reconcileTimeout, "XRD "+xrd.Name+" Established and Offered", func() bool {
		o = getDoc(t, xrd)
		e, _, _ := condition(o, "Established")
		off, _, _ := condition(o, "Offered")
		return e == "True" && off == "True"
	})
	group := str(o, "spec", "group")
	claimPlural := str(o, "spec", "claimNames", "plural")
	for _, crd := range []string{xrd.Name, claimPlural + "." + group} {
		c := getJSON(t, "crd", crd)
		if c == nil {
			t.Errorf("crossplane did not create CRD %s", crd)
			continue
		}
		if s, _, _ := condition(c, "Established"); s != "True" {
			t.Errorf("CRD %s not Established", crd)
		}
	}
	if getJSON(t, "lock.pkg.crossplane.io", "lock") == nil {
		t.Errorf("no Lock object: crossplane's init container did not run")
	}
	role := "crossplane:composite:" + xrd.Name + ":aggregate-to-edit"
	waitFor(t, reconcileTimeout, "the RBAC manager's ClusterRole "+role, func() bool {
		return getJSON(t, "clusterrole", role) != nil
	})
	return "XRD Established+Offered, composite+claim CRDs created, RBAC manager's ClusterRoles"
}

// ---------------------------------------------------------------- percona

// checkPSMDB: the PerconaServerMongoDB example gets its replica set's StatefulSet (<name>-rs0, as
// the operator names it) and a status state from the operator. Not run yet: the operator does not
// build from the module proxy (build-operators.sh says why), so the case skips.
func checkPSMDB(t *testing.T, r *operatorRun) string {
	cr := exampleOf(t, r, "PerconaServerMongoDB")
	var o map[string]any
	waitFor(t, reconcileTimeout, "PerconaServerMongoDB "+cr.Name+" StatefulSets and status", func() bool {
		o = getDoc(t, cr)
		sts := getJSON(t, "statefulset", cr.Name+"-rs0", "-n", cr.Namespace)
		return sts != nil && str(o, "status", "state") != ""
	})
	return "PerconaServerMongoDB state " + str(o, "status", "state")
}

// ---------------------------------------------------------------- through Argo CD

// testOperatorThroughArgoCD installs flux's bundle through an Argo CD 3.6.1 Application and the
// plugin, with one extra manifest next to olm-cmp.yaml: a HelmRepository whose index the test
// serves on source-controller's own loopback. Once Argo CD has applied the Deployment, the pod
// runner runs source-controller; the sync's last wave (the HelmRepository) turns Healthy only
// through the status the real source-controller writes (Argo CD's own health check for
// source.toolkit.fluxcd.io/HelmRepository reads its Ready condition). The Application must be
// Synced + Healthy and stay so through a hard refresh and a periodic resync while the operator
// keeps reconciling (interval 10s).
func testOperatorThroughArgoCD(t *testing.T, e env, root string) {
	bin := os.Getenv("ARGOCD_BIN")
	if bin == "" {
		bin = filepath.Join(os.Getenv("HOME"), ".cache", "olm-cmp", "argocd-v3", "bin")
	}
	srcBin := filepath.Join(os.Getenv("E2E_BIN"), "source-controller")
	if _, err := os.Stat(filepath.Join(os.Getenv("E2E_BIN"), ".op-source-controller.stamp")); err != nil {
		t.Skip("source-controller not built (test/e2e/build-operators.sh)")
	}
	a := startArgoCD(t, e, bin, argoOptions{v3: true, cm: healthCustomizations(t, e.repo)})
	const name, tag = "flux", "2.3.0"
	ns := nsName("argo-op", name)
	repo := a.reg + "/flux-bundle"
	pushBundle(t, filepath.Join(root, "flux-2.3.0"), repo+":"+tag, nil)
	dir := filepath.Join(a.git, "apps", name)
	f := map[string]any{"apiVersion": "olm-cmp.dev/v1alpha1", "kind": "OperatorBundle",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"bundle": repo, "version": tag, "namespace": ns}}
	writeSpecFile(t, dir, f)
	hr := fmt.Sprintf(`apiVersion: source.toolkit.fluxcd.io/v1beta2
kind: HelmRepository
metadata: {name: loopback, namespace: %s}
spec: {url: "http://127.0.0.1:18999/charts", interval: 10s}
`, ns)
	must(t, os.WriteFile(filepath.Join(dir, "helmrepository.yaml"), []byte(hr), 0o644))
	rev := a.commit("flux through the plugin")
	docs := a.render(dir)
	var dep Doc
	for _, d := range docs {
		if d.Kind == "Deployment" && d.Name == "source-controller" {
			dep = d
		}
		if d.Kind == "HelmRepository" {
			t.Logf("HelmRepository %s: sync wave %d", d.Name, d.Wave)
		}
	}
	if dep.Name == "" {
		t.Fatal("the flux render has no source-controller Deployment")
	}
	start := time.Now()
	a.application(name, "", "apps/"+name, ns)

	// the kwok Pod exists once Argo CD has applied the Deployment: run it
	waitFor(t, 6*time.Minute, "Argo CD to apply Deployment source-controller", func() bool {
		return getJSON(t, "deployment", "source-controller", "-n", ns) != nil
	})
	p := runPod(t, dep, podOptions{Binaries: map[string]string{"source-controller": srcBin}})
	ln := p.Listen("127.0.0.1:18999")
	var fetches atomic.Int64 // index downloads: each is one reconcile of the HelmRepository
	mux := http.NewServeMux()
	mux.HandleFunc("/charts/index.yaml", func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		_, _ = w.Write([]byte(helmIndex))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })

	synced := waitApp(t, name, rev, 8*time.Minute)
	t.Logf("%s: Synced + Healthy in %v (the HelmRepository's health from source-controller's status)", name, time.Since(start).Round(time.Second))
	o := getJSON(t, "helmrepository.source.toolkit.fluxcd.io", "loopback", "-n", ns)
	if s, _, _ := condition(o, "Ready"); s != "True" {
		t.Fatalf("Application Healthy but HelmRepository Ready=%q", s)
	}
	firstRev := str(o, "status", "artifact", "revision")
	before := fetches.Load()
	c := &syncCase{name: name}
	base := map[string]appState{name: synced}
	checkStable(t, []*syncCase{c}, base, "after a hard refresh", "hard")
	time.Sleep(time.Duration(appResync+5) * time.Second)
	checkStable(t, []*syncCase{c}, base, "past --app-resync", "")
	// still reconciling: a later reconcile than the one that made it Ready
	o = getJSON(t, "helmrepository.source.toolkit.fluxcd.io", "loopback", "-n", ns)
	if s, _, _ := condition(o, "Ready"); s != "True" || str(o, "status", "artifact", "revision") == "" {
		t.Errorf("HelmRepository no longer Ready (revision %q -> %q)", firstRev, str(o, "status", "artifact", "revision"))
	}
	if after := fetches.Load(); after <= before {
		t.Errorf("source-controller stopped reconciling the HelmRepository (index fetched %d times before the refreshes, %d after)", before, after)
	} else {
		t.Logf("source-controller kept reconciling: the index was fetched %d more times while Argo CD refreshed", after-before)
	}
	checkDenials(t, []*runningPod{p})
	if ex := p.Exited(); len(ex) > 0 {
		t.Errorf("source-controller stopped: %v", ex)
	}
}
