package e2e

// The seed operators, the ones olm-cmp was made for and Red Hat ships only as OLM bundles:
// lws-operator 1.0.0, cert-manager-operator 1.19.1 -> 1.20.0 and sail-operator 1.30.3. The module
// proxy refuses their modules, so build-seeds.sh builds them from their own sources in
// ../shared/seedsrc (the revisions whose CSVs match ../shared/bundles), and lws v0.10.0's manager,
// the operand lws-operator deploys. Each runs from olm-cmp's render the way the other operators
// of this suite run (operators_test.go): the rendered Deployment's kwok Pod, run by the pod
// runner with the rendered ServiceAccount's token, every $(VAR) and downward-API value resolved.
//
// What a vanilla cluster must provide for them (docs/olm-parity.md says it to users) is provided
// here as a user would: the cert-manager.io CRDs (the real ones, from the cert-manager-operator
// bundle) and a ServiceMonitor CRD. cert-manager itself does not build from the proxy (its cmd/*
// modules are refused), so the test issues the Certificates lws-operator creates, and injects their
// CA, as cert-manager's self-signed Issuer and cainjector would (webhooks_test.go's stand-in).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// seedBinary is the binary build-seeds.sh built for name. Without ../shared/seedsrc (a user's
// clone) the test skips, naming why; with it, a binary that is not there is a failure, with the
// reason build-seeds.sh left.
func seedBinary(t *testing.T, e env, name string) string {
	t.Helper()
	src := filepath.Join(e.shared, "seedsrc")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("%s: the seed operators' sources (%s) are absent: they are in the project's shared reference data, not in a clone", name, src)
	}
	dir := os.Getenv("E2E_BIN")
	if why, err := os.ReadFile(filepath.Join(dir, ".seed-"+name+".notbuilt")); err == nil {
		// A module the proxy refuses (sigs.k8s.io/lws@v0.10.0, lws-operator's operand, on some
		// machines) is no fault of this checkout: what needs that binary is skipped, by name and
		// with the way to build it; the steps before it have run. Every other reason fails.
		if r := strings.TrimSpace(string(why)); strings.HasPrefix(r, "the module proxy refuses") {
			t.Skipf("%s not built, so what needs it is skipped: %s", name, r)
		}
		t.Fatalf("%s not built: %s", name, strings.TrimSpace(string(why)))
	}
	if _, err := os.Stat(filepath.Join(dir, ".seed-"+name+".stamp")); err != nil {
		t.Fatalf("%s not built: run test/e2e/build-seeds.sh (run.sh's operators suite does)", name)
	}
	return filepath.Join(dir, name)
}

// TestOperatorsSeeds runs the seed operators from olm-cmp's render, one after the other.
func TestOperatorsSeeds(t *testing.T) {
	e := setup(t)
	root := e.sharedBundles(t)
	t.Run("lws-operator", func(t *testing.T) { testSeedLWS(t, e, root) })
	t.Run("cert-manager-operator", func(t *testing.T) { testSeedCertManager(t, e, root) })
	t.Run("sail-operator", func(t *testing.T) { testSeedSail(t, e, root) })
}

// ---------------------------------------------------------------- what the cluster provides

// serveCertManagerAPI applies the cert-manager.io CRDs (cert-manager's own, as the
// cert-manager-operator bundle ships them): lws-operator reports Degraded/MissingDependency
// until cert-manager.io/v1 Issuer is served.
func serveCertManagerAPI(t *testing.T, root string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(root, "cert-manager-operator-1.19.1", "manifests", "cert-manager.io_*.yaml"))
	if len(files) == 0 {
		t.Fatalf("no cert-manager.io CRDs in %s", filepath.Join(root, "cert-manager-operator-1.19.1"))
	}
	for _, f := range files {
		mustKubectl(t, "apply", "--server-side", "--force-conflicts", "--field-manager=cert-manager-install", "-f", f)
	}
	for _, n := range []string{"certificates", "issuers", "clusterissuers", "certificaterequests"} {
		waitEstablished(t, n+".cert-manager.io")
	}
}

// liveDocs lists live objects (kubectl get RESOURCES [-n ns] [-l selector]) as Docs.
func liveDocs(t *testing.T, ns, selector string, resources ...string) []Doc {
	t.Helper()
	args := []string{"get", strings.Join(resources, ","), "-o", "json"}
	if ns != "" {
		args = append(args, "-n", ns)
	}
	if selector != "" {
		args = append(args, "-l", selector)
	}
	out, err := kubectl(t, args...)
	if err != nil {
		return nil
	}
	var l struct{ Items []map[string]any }
	must(t, json.Unmarshal(out, &l))
	var docs []Doc
	for _, o := range l.Items {
		docs = append(docs, docOf(o))
	}
	return docs
}

func docOf(o map[string]any) Doc {
	raw, _ := json.Marshal(o)
	d := Doc{Raw: string(raw), Obj: o, Name: str(o, "metadata", "name"), Namespace: str(o, "metadata", "namespace")}
	d.APIVersion, _ = o["apiVersion"].(string)
	d.Kind, _ = o["kind"].(string)
	return d
}

// conditions is "Type=Status(Reason)" for each status condition, sorted.
func conditions(o map[string]any) string {
	st, _ := o["status"].(map[string]any)
	var out []string
	for _, c := range list(st["conditions"]) {
		cm, _ := c.(map[string]any)
		out = append(out, fmt.Sprintf("%v=%v(%v)", cm["type"], cm["status"], cm["reason"]))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// deleteWebhookConfigs removes webhook configurations once their server is gone: a Fail policy
// would make later creations on this cluster wait for a dead Service.
func deleteWebhookConfigs(t *testing.T, docs []Doc) {
	for _, d := range docs {
		if d.Kind == "ValidatingWebhookConfiguration" || d.Kind == "MutatingWebhookConfiguration" {
			_, _ = kubectl(t, "delete", resourceArg(d), d.Name, "--ignore-not-found", "--wait=false")
		}
	}
}

// finish checks what every run checks (no RBAC denial, no process stopped on its own) and logs
// the result line of the suite's table.
func finish(t *testing.T, name string, pods []*runningPod, result string) {
	t.Helper()
	checkDenials(t, pods)
	// every $(VAR) of command and args resolved (the runner writes the command line first)
	for _, p := range pods {
		for _, l := range p.LogFiles() {
			if line, _, _ := strings.Cut(readText(l), "\n"); strings.Contains(line, "$(") {
				t.Errorf("pod %s/%s: a $(VAR) the container does not define: %s", p.Namespace, p.Pod, line)
			}
		}
	}
	for _, p := range pods {
		if ex := p.Exited(); len(ex) > 0 {
			t.Errorf("pod %s/%s: containers stopped on their own: %s", p.Namespace, p.Pod, strings.Join(ex, ", "))
		}
	}
	if !t.Failed() {
		t.Logf("RESULT %s: %s; no RBAC denial", name, result)
	}
}

func readText(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// ---------------------------------------------------------------- lws-operator

// lwsSpec is what examples/lws-operator answers, but the images: a directory bundle names
// ${OPERATOR_IMAGE} and ${OPERAND_IMAGE}; any reference does here (the binaries stand for them).
func lwsSpec() map[string]any {
	return map[string]any{
		"images": map[string]any{
			"${OPERATOR_IMAGE}": "registry.example/leader-worker-set/lws-rhel9-operator:1.0.0",
			"${OPERAND_IMAGE}":  "registry.example/leader-worker-set/lws-rhel9:1.0.0",
		},
		"clusterAPIs":       []any{"cert-manager.io/v1", "monitoring.coreos.com/v1"},
		"accept":            []any{"api:leaderworkerset.x-k8s.io", "api:disaggregatedset.x-k8s.io"},
		"authReaderBinding": true,
		"serviceAccounts":   []any{"lws-controller-manager"},
	}
}

// testSeedLWS: lws-operator reconciles its `cluster` CR: it creates cert-manager's Issuer and
// Certificates (issued here as cert-manager would), then applies the LWS operand (CRDs, webhooks,
// RBAC, the lws-controller-manager Deployment). The operand manager (lws v0.10.0) runs from that
// applied Deployment, its webhooks served for real through the operator's Service; the CR turns
// Available; a LeaderWorkerSet is refused by the validating webhook, defaulted by the mutating one,
// and becomes a StatefulSet pair whose leader Pod the pod webhook labelled.
func testSeedLWS(t *testing.T, e env, root string) {
	opBin := seedBinary(t, e, "lws-operator")
	serveCertManagerAPI(t, root)
	newApplier(t, e.work).ensureServed(Doc{APIVersion: "monitoring.coreos.com/v1", Kind: "ServiceMonitor", Namespace: "default", Name: "stand-in"})

	oc := operatorCase{name: "lws-operator", bundle: "leader-worker-set-1.0.0",
		binaries: map[string]string{"lws-operator": opBin}, examples: []string{"LeaderWorkerSetOperator"}, spec: lwsSpec()}
	r := e.installOperator(t, filepath.Join(root, oc.bundle), oc, oc.binaries)
	ns, op := r.ns, r.pods[0]

	mgr := runLWSOperand(t, e, ns, op).mgr

	// ---- the operator's CR
	cr := exampleOf(t, r, "LeaderWorkerSetOperator")
	var o map[string]any
	waitFor(t, reconcileTimeout, "LeaderWorkerSetOperator cluster Available", func() bool {
		o = getDoc(t, cr)
		a, _, _ := condition(o, "Available")
		return a == "True"
	})
	reconciled := time.Since(r.applied)
	t.Logf("LeaderWorkerSetOperator %s: %s, readyReplicas %v (in %v)", cr.Name, conditions(o), str2(o["status"], "readyReplicas"), reconciled.Round(time.Second))
	for _, c := range list(o["status"].(map[string]any)["conditions"]) {
		cm := c.(map[string]any)
		if strings.HasSuffix(fmt.Sprint(cm["type"]), "Degraded") && cm["status"] == "True" {
			t.Errorf("LeaderWorkerSetOperator %s: %v=True (%v: %v)", cr.Name, cm["type"], cm["reason"], cm["message"])
		}
	}

	// ---- the webhooks, for real: REFUSED by the validating webhook
	bad := fmt.Sprintf(lwsTemplate, "refused", ns, "rolloutStrategy: {type: RollingUpdate, rollingUpdateConfiguration: {maxUnavailable: 0, maxSurge: 0}}")
	if out, err := kubectlApplyText(t, "create", bad); err == nil {
		t.Fatalf("a LeaderWorkerSet with maxUnavailable 0 and maxSurge 0 was admitted:\n%s", out)
	} else if !strings.Contains(err.Error(), "denied the request") || !strings.Contains(err.Error(), "must not be 0 when `maxSurge` is 0") {
		t.Fatalf("the LeaderWorkerSet with maxUnavailable 0 and maxSurge 0 was refused, but not by the lws validating webhook:\n%v", err)
	} else {
		t.Logf("REFUSED: %s", firstLineWith(err.Error(), "denied the request"))
	}
	// DEFAULTED by the mutating webhook (subdomainPolicy has no schema default: only the webhook sets it)
	created := time.Now()
	out, err := kubectlApplyText(t, "create", fmt.Sprintf(lwsTemplate, "e2e", ns, ""))
	if err != nil {
		t.Fatalf("LeaderWorkerSet e2e refused: %v", err)
	}
	var lws map[string]any
	must(t, json.Unmarshal(mustKubectl(t, "get", "leaderworkersets.leaderworkerset.x-k8s.io", "e2e", "-n", ns, "-o", "json"), &lws))
	if sp := str(lws, "spec", "networkConfig", "subdomainPolicy"); sp != "Shared" {
		t.Fatalf("LeaderWorkerSet e2e: spec.networkConfig.subdomainPolicy %q, want Shared from the mutating webhook (%s)", sp, strings.TrimSpace(string(out)))
	}
	t.Logf("DEFAULTED by the mutating webhook: spec.networkConfig.subdomainPolicy=Shared, restartPolicy=%s", str(lws, "spec", "leaderWorkerTemplate", "restartPolicy"))

	// ---- the StatefulSet pair: the leader StatefulSet, its Pod (labelled by the pod webhook),
	// and the workers' StatefulSet the lws controller creates for that leader Pod
	var leader, workers, leaderPod map[string]any
	waitFor(t, reconcileTimeout, "LeaderWorkerSet e2e's leader and worker StatefulSets", func() bool {
		leader = getJSON(t, "statefulset", "e2e", "-n", ns)
		workers = getJSON(t, "statefulset", "e2e-0", "-n", ns)
		leaderPod = getJSON(t, "pod", "e2e-0", "-n", ns)
		return leader != nil && workers != nil && leaderPod != nil
	})
	lwsUID := str(lws, "metadata", "uid")
	if !ownedBy(leader, lwsUID) {
		t.Errorf("StatefulSet e2e is not owned by the LeaderWorkerSet")
	}
	for what, want := range map[string]map[string]string{
		"StatefulSet e2e (leaders)":              {"leaderworkerset.sigs.k8s.io/name": "e2e"},
		"StatefulSet e2e-0 (workers of group 0)": {"leaderworkerset.sigs.k8s.io/name": "e2e", "leaderworkerset.sigs.k8s.io/group-index": "0"},
		"leader Pod e2e-0 (pod webhook)":         {"leaderworkerset.sigs.k8s.io/name": "e2e", "leaderworkerset.sigs.k8s.io/group-index": "0", "leaderworkerset.sigs.k8s.io/worker-index": "0"},
	} {
		obj := map[string]map[string]any{"StatefulSet e2e (leaders)": leader, "StatefulSet e2e-0 (workers of group 0)": workers, "leader Pod e2e-0 (pod webhook)": leaderPod}[what]
		for k, v := range want {
			if got := str(obj, "metadata", "labels", k); got != v {
				t.Errorf("%s: label %s=%q, want %q", what, k, got, v)
			}
		}
	}
	if str(leaderPod, "metadata", "labels", "leaderworkerset.sigs.k8s.io/group-key") == "" {
		t.Errorf("leader Pod e2e-0 has no leaderworkerset.sigs.k8s.io/group-key label: the pod webhook did not run")
	}
	waitFor(t, reconcileTimeout, "LeaderWorkerSet e2e Available", func() bool {
		lws = getJSON(t, "leaderworkersets.leaderworkerset.x-k8s.io", "e2e", "-n", ns)
		a, _, _ := condition(lws, "Available")
		return a == "True"
	})
	t.Logf("LeaderWorkerSet e2e: StatefulSets e2e (replicas %v) + e2e-0 (replicas %v), %s, in %v", str2(leader["spec"], "replicas"),
		str2(workers["spec"], "replicas"), conditions(lws), time.Since(created).Round(time.Second))
	finish(t, "lws-operator", []*runningPod{op, mgr}, fmt.Sprintf(
		"2 Deployments run (openshift-lws-operator from the render; lws-controller-manager as lws-operator applied it); webhooks served: validating refused, mutating defaulted, pod webhook labelled the leader; cluster CR Available in %v; LeaderWorkerSet -> StatefulSets e2e + e2e-0, Available",
		reconciled.Round(time.Second)))
}

// lwsOperand is lws-operator's operand, running.
type lwsOperand struct {
	mgr   *runningPod       // lws-controller-manager's Pod, running lws v0.10.0's /manager
	hooks []Doc             // the webhook configurations and CRDs the operator applied, CA injected
	cas   map[string][]byte // Certificate namespace/name -> CA
}

// runLWSOperand does, once lws-operator runs in ns and its CR exists, what the cluster around it
// does: cert-manager issues the Certificates the operator creates (the metrics one only once the
// webhook one's Secret exists) and injects their CA into the operator's webhooks and CRDs, and
// the kubelet runs the operand Deployment the operator applied, its Services routed to the Pod
// (kube-proxy's part), until the webhook Service answers TLS with that CA.
func runLWSOperand(t *testing.T, e env, ns string, op *runningPod) lwsOperand {
	t.Helper()
	lr := lwsOperand{cas: map[string][]byte{}}
	waitFor(t, reconcileTimeout, "lws-operator's Certificates webhook-server-cert and metrics-server-cert, issued", func() bool {
		docs := liveDocs(t, ns, "", "issuers.cert-manager.io", "certificates.cert-manager.io")
		var todo []Doc
		fresh := false
		for _, d := range docs {
			if d.Kind == "Issuer" {
				todo = append(todo, d)
			} else if lr.cas[d.Namespace+"/"+d.Name] == nil {
				todo, fresh = append(todo, d), true
			}
		}
		if fresh {
			for k, v := range issueCertificates(t, todo) {
				lr.cas[k] = v
				t.Logf("cert-manager stand-in: issued Certificate %s", k)
			}
		}
		return len(lr.cas) >= 2
	})
	var dep map[string]any
	waitFor(t, reconcileTimeout, "the Deployment lws-controller-manager applied by lws-operator", func() bool {
		dep = getJSON(t, "deployment", "lws-controller-manager", "-n", ns)
		return dep != nil
	})
	for _, d := range append(liveDocs(t, "", "", "mutatingwebhookconfigurations", "validatingwebhookconfigurations"),
		liveDocs(t, "", "app.kubernetes.io/name=lws", "customresourcedefinitions")...) {
		if strings.HasPrefix(str(d.Obj, "metadata", "annotations", "cert-manager.io/inject-ca-from"), ns+"/") {
			lr.hooks = append(lr.hooks, d)
		}
	}
	injected := injectCABundles(t, lr.hooks, lr.cas)
	t.Logf("cainjector stand-in: injected the CA into %s", strings.Join(injected, ", "))
	// after the processes stop (cleanups run last-registered first): the webhook configurations go
	t.Cleanup(func() { op.Stop(); deleteWebhookConfigs(t, lr.hooks) })
	lr.mgr = runPod(t, docOf(dep), podOptions{Binaries: map[string]string{"manager": seedBinary(t, e, "lws-manager")}})
	svcs := exposeServices(t, liveDocs(t, ns, "", "services"), lr.mgr)
	t.Logf("operand pod %s runs /manager from the Deployment lws-operator applied; Services routed to it: %s", lr.mgr.Pod, strings.Join(svcs, ", "))
	waitTLS(t, lr.mgr, webhookService(t, lr.hooks), lr.cas)
	return lr
}

// lwsTemplate: a LeaderWorkerSet of one group of two (name, namespace, extra spec line).
const lwsTemplate = `apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: %s, namespace: %s}
spec:
  replicas: 1
  %s
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers:
        - {name: worker, image: registry.example/worker:1}
`

// kubectlApplyText runs kubectl VERB -f on a manifest given as text.
func kubectlApplyText(t *testing.T, verb, manifest string) ([]byte, error) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "obj-*.yaml")
	must(t, err)
	_, err = f.WriteString(manifest)
	must(t, err)
	must(t, f.Close())
	return kubectl(t, verb, "-f", f.Name())
}

// ---------------------------------------------------------------- cert-manager-operator

// certManagerSpec is what examples/cert-manager-operator answers (its images aside: the bundle's
// own references are kept, the binaries stand for them).
func certManagerSpec(repo, version string) map[string]any {
	return map[string]any{
		"bundle": repo, "version": version,
		"exclude": []any{"console.openshift.io/*"},
		"accept": []any{"api:config.openshift.io", "api:route.openshift.io", "api:gateway.networking.k8s.io",
			"openshift:config.openshift.io/inject-trusted-cabundle"},
	}
}

// relatedImage is the value of env name in the rendered Deployment's first container.
func relatedImage(t *testing.T, dep Doc, name string) string {
	t.Helper()
	for _, c := range list(str2(str2(str2(dep.Obj["spec"], "template"), "spec"), "containers")) {
		for _, ev := range list(c.(map[string]any)["env"]) {
			if em := ev.(map[string]any); em["name"] == name {
				return fmt.Sprint(em["value"])
			}
		}
	}
	t.Fatalf("Deployment %s has no env %s", dep.Name, name)
	return ""
}

// certManagerReconciled waits until the operator has rolled cert-manager out at controllerImage
// (its operand Deployments in the namespace cert-manager, with the image the operator's
// RELATED_IMAGE_CERT_MANAGER_CONTROLLER names) and every *Available condition of the CertManager
// is True, none *Degraded True. The Deployments' pods stay kwok's: cert-manager's own binaries do
// not build from the module proxy (its cmd/* modules are refused).
func certManagerReconciled(t *testing.T, cr Doc, controllerImage string, timeout time.Duration) (map[string]any, []string) {
	t.Helper()
	var o map[string]any
	var deps []string
	waitFor(t, timeout, "CertManager "+cr.Name+" reconciled with cert-manager at "+controllerImage, func() bool {
		ctrl := getJSON(t, "deployment", "cert-manager", "-n", "cert-manager")
		if ctrl == nil || strings.Join(images(ctrl), ",") != controllerImage {
			return false
		}
		o = getDoc(t, cr)
		avail := 0
		for _, c := range list(str2(o["status"], "conditions")) {
			cm := c.(map[string]any)
			typ := fmt.Sprint(cm["type"])
			switch {
			case strings.HasSuffix(typ, "Available") && cm["status"] != "True":
				return false
			case strings.HasSuffix(typ, "Available"):
				avail++
			case strings.HasSuffix(typ, "Degraded") && cm["status"] == "True":
				return false
			}
		}
		deps = nil
		for _, n := range []string{"cert-manager", "cert-manager-webhook", "cert-manager-cainjector"} {
			if d := getJSON(t, "deployment", n, "-n", "cert-manager"); d != nil {
				deps = append(deps, n+" "+strings.Join(images(d), ","))
			}
		}
		return avail >= 3 && len(deps) == 3
	})
	return o, deps
}

// testSeedCertManager: cert-manager-operator 1.19.1 from its bundle image (a registry on loopback)
// reconciles the CertManager CR and deploys cert-manager; then the bump to 1.20.0 through the
// render with upgradeFrom (the upgrade-safety checks pass), applied wave by wave as an Argo CD
// sync with pruning: the Deployment rolls to a new Pod, the old process stops with its Pod and
// the 1.20.0 binary runs in the new one; the CRD upgrades apply and the CR stays reconciled, now
// with cert-manager at the 1.20.0 operator's images.
func testSeedCertManager(t *testing.T, e env, root string) {
	bin119 := seedBinary(t, e, "cert-manager-operator-1.19.1")
	reg := serveRegistry(t)
	t.Setenv("OLM_CMP_INSECURE_REGISTRIES", reg) // the olm-cmp the test runs reads it
	repo := reg + "/cert-manager-operator-bundle"
	pushBundle(t, filepath.Join(root, "cert-manager-operator-1.19.1"), repo+":v1.19.1", nil)
	pushBundle(t, filepath.Join(root, "cert-manager-operator-1.20.0"), repo+":v1.20.0", nil)

	oc := operatorCase{name: "cert-manager-operator", bundle: "cert-manager-operator-1.19.1",
		binaries: map[string]string{"cert-manager-operator": bin119}, examples: []string{"CertManager"},
		spec: certManagerSpec(repo, "v1.19.1")}
	r := e.installOperator(t, filepath.Join(root, oc.bundle), oc, oc.binaries)
	const depName = "cert-manager-operator-controller-manager"
	cr := exampleOf(t, r, "CertManager")
	img119 := relatedImage(t, findDoc(t, r.docs, "Deployment", depName), "RELATED_IMAGE_CERT_MANAGER_CONTROLLER")
	o, deps := certManagerReconciled(t, cr, img119, reconcileTimeout)
	took119 := time.Since(r.applied)
	t.Logf("1.19.1: CertManager %s reconciled in %v: %s; operand Deployments (kwok pods: cert-manager's binaries are not built) %s",
		cr.Name, took119.Round(time.Second), conditions(o), strings.Join(deps, "; "))

	// ---- the bump: the same spec at v1.20.0, upgradeFrom v1.19.1
	spec := map[string]any{"bundle": repo, "namespace": r.ns, "examples": oc.examples}
	for k, v := range certManagerSpec(repo, "v1.20.0") {
		spec[k] = v
	}
	spec["upgradeFrom"] = "v1.19.1"
	f := map[string]any{"apiVersion": "olm-cmp.dev/v1alpha1", "kind": "OperatorBundle",
		"metadata": map[string]any{"name": oc.name}, "spec": spec}
	newDocs := e.withIgnoreWebhooks(t, filepath.Join(e.work, "op-"+oc.name), f)
	newDep := findDoc(t, newDocs, "Deployment", depName)
	img120 := relatedImage(t, newDep, "RELATED_IMAGE_CERT_MANAGER_CONTROLLER")
	if img120 == img119 {
		t.Fatalf("1.19.1 and 1.20.0 name the same cert-manager image %s: the bump would prove nothing", img120)
	}
	oldDocs := map[string]Doc{}
	for _, d := range r.docs {
		oldDocs[d.Key()] = d
	}
	var changedCRDs []string
	for _, d := range newDocs {
		if old, ok := oldDocs[d.Key()]; ok && d.Kind == "CustomResourceDefinition" {
			a, _ := json.Marshal(old.Obj["spec"])
			b, _ := json.Marshal(d.Obj["spec"])
			if string(a) != string(b) {
				changedCRDs = append(changedCRDs, d.Name)
			}
		}
	}
	bumped := time.Now()
	r.applier.examples = almExamples(t, filepath.Join(root, "cert-manager-operator-1.20.0"))
	applied := r.applier.apply(oc.name+"-1.20.0", newDocs)
	for _, d := range applied {
		if d.Kind == "CustomResourceDefinition" {
			checkOlmCmpAnnotations(t, d)
		}
	}

	// ---- the kubelet's part: the old Pod goes with the rollout, its process with it; the new Pod
	// runs the 1.20.0 binary
	old := r.pods[0]
	np := rollPod(t, old, newDep, map[string]string{"cert-manager-operator": seedBinary(t, e, "cert-manager-operator-1.20.0")})
	if np.Pod == old.Pod {
		t.Fatalf("the 1.20.0 operator runs as the old Pod %s", old.Pod)
	}
	// then what the new render no longer has (CRDs kept), once the new operator runs: Argo CD
	// prunes the old RBAC last too (the render marks it PruneLast)
	inNew := map[string]bool{}
	for _, d := range newDocs {
		inNew[d.Key()] = true
	}
	var pruned []string
	for _, d := range r.docs {
		if inNew[d.Key()] || d.Kind == "CustomResourceDefinition" {
			continue
		}
		args := []string{"delete", resourceArg(d), d.Name, "--ignore-not-found", "--wait=true", "--timeout=120s"}
		if d.Namespace != "" {
			args = append(args, "-n", d.Namespace)
		}
		mustKubectl(t, args...)
		pruned = append(pruned, d.Kind+"/"+d.Name)
	}
	t.Logf("bump applied: %d objects, %d CRDs upgraded (%s), pruned %v", len(applied), len(changedCRDs), strings.Join(changedCRDs, ", "), pruned)
	o, deps = certManagerReconciled(t, cr, img120, 5*time.Minute)
	tookBump := time.Since(bumped)
	t.Logf("1.20.0: the new operator (Pod %s) took over; CertManager %s reconciled again in %v: %s; operand Deployments %s",
		np.Pod, cr.Name, tookBump.Round(time.Second), conditions(o), strings.Join(deps, "; "))
	checkDenials(t, []*runningPod{old})
	finish(t, "cert-manager-operator", []*runningPod{np}, fmt.Sprintf(
		"1 Deployment run (1.19.1, then 1.20.0 in the rolled Pod); no webhooks; CertManager cluster reconciled (cert-manager, -webhook, -cainjector Deployments, kwok pods) in %v; bump 1.19.1 -> 1.20.0 with upgradeFrom: %d CRDs upgraded, cert-manager %s -> %s, reconciled again in %v",
		took119.Round(time.Second), len(changedCRDs), imageName(img119)+":"+tagOf(img119), tagOf(img120), tookBump.Round(time.Second)))
}

// rollPod does the kubelet's part of a Deployment's rollout to dep's template: once the rollout is
// done and the old Pod is going, the old Pod's processes stop (they must not have stopped on their
// own before), and the new Pod's containers run with bins.
func rollPod(t *testing.T, old *runningPod, dep Doc, bins map[string]string) *runningPod {
	t.Helper()
	mustKubectl(t, "rollout", "status", "--timeout=180s", "-n", dep.Namespace, "deployment/"+dep.Name)
	waitFor(t, 2*time.Minute, "the old Pod "+old.Pod+" to be deleted", old.Terminating)
	if ex := old.Exited(); len(ex) > 0 {
		t.Errorf("pod %s: stopped on its own before the Pod went: %v", old.Pod, ex)
	}
	old.Stop()
	return runPod(t, dep, podOptions{Binaries: bins})
}

func tagOf(ref string) string {
	if i := strings.LastIndex(ref, ":"); i >= 0 && !strings.Contains(ref[i:], "/") {
		return ref[i+1:]
	}
	return ""
}

// ---------------------------------------------------------------- sail-operator

// testSeedSail: sail-operator (plain-Kubernetes mode: operator.openshift.io is not served) reads
// its config file from the downward-API volume the render keeps, and reconciles the Istio example
// to an IstioRevision and the istiod Deployment in istio-system (whose pods stay kwok's: istiod
// is not built).
func testSeedSail(t *testing.T, e env, root string) {
	bin := seedBinary(t, e, "sail-operator")
	// the namespace the Istio example installs into (examples/sail-operator ships it as an extra manifest)
	if getJSON(t, "namespace", "istio-system") == nil {
		mustKubectl(t, "create", "namespace", "istio-system")
	}
	oc := operatorCase{name: "sail-operator", bundle: "sailoperator-1.30.3",
		binaries: map[string]string{"sail-operator": bin}, examples: []string{"Istio"},
		spec: map[string]any{"accept": []any{"api:config.openshift.io", "openshift:securitycontextconstraints", "api:k8s.cni.cncf.io"}}}
	r := e.installOperator(t, filepath.Join(root, oc.bundle), oc, oc.binaries)
	t.Cleanup(func() {
		r.pods[0].Stop()
		// istiod's webhooks (sidecar injector, validator), served by nothing here
		var hooks []Doc
		for _, d := range liveDocs(t, "", "", "mutatingwebhookconfigurations", "validatingwebhookconfigurations") {
			if strings.Contains(d.Raw, `"namespace":"istio-system"`) {
				hooks = append(hooks, d)
			}
		}
		deleteWebhookConfigs(t, hooks)
	})
	istio := exampleOf(t, r, "Istio")
	var o, rev, istiod map[string]any
	waitFor(t, reconcileTimeout, "Istio "+istio.Name+" -> IstioRevision and the istiod Deployment", func() bool {
		o = getDoc(t, istio)
		rev = getJSON(t, "istiorevisions.sailoperator.io", istio.Name)
		istiod = getJSON(t, "deployment", "istiod", "-n", "istio-system")
		return o != nil && rev != nil && istiod != nil
	})
	took := time.Since(r.applied)
	if !ownedBy(rev, str(o, "metadata", "uid")) {
		t.Errorf("IstioRevision %s is not owned by the Istio %s", istio.Name, istio.Name)
	}
	if v := str(rev, "spec", "version"); v != str(o, "spec", "version") {
		t.Errorf("IstioRevision version %q, want the Istio's %q", v, str(o, "spec", "version"))
	}
	if !ownedBy(istiod, str(rev, "metadata", "uid")) {
		t.Errorf("Deployment istio-system/istiod is not owned by the IstioRevision")
	}
	if img := strings.Join(images(istiod), ","); !strings.Contains(img, "pilot") {
		t.Errorf("Deployment istiod runs %s, want istio's pilot image", img)
	}
	// the operator's status, once it has seen the revision's Deployment
	waitFor(t, reconcileTimeout, "Istio "+istio.Name+" status from sail-operator", func() bool {
		o = getDoc(t, istio)
		s, _, _ := condition(o, "Reconciled")
		return s == "True"
	})
	t.Logf("Istio %s: %s; IstioRevision %s: %s; Deployment istio-system/istiod (%s, kwok pods) in %v",
		istio.Name, conditions(o), istio.Name, conditions(getJSON(t, "istiorevisions.sailoperator.io", istio.Name)),
		strings.Join(images(istiod), ","), took.Round(time.Second))
	// operator.openshift.io is not served: plain-Kubernetes mode (profile "default")
	if !strings.Contains(r.pods[0].Logs(), `detected platform	{"platform": "kubernetes"}`) {
		t.Errorf("sail-operator did not detect plain Kubernetes (its log has no `detected platform {\"platform\": \"kubernetes\"}`)")
	}
	finish(t, "sail-operator", r.pods, fmt.Sprintf(
		"1 Deployment run; no webhooks of its own; Istio %s Reconciled -> IstioRevision %s -> Deployment istiod (kwok pods) in %v",
		istio.Name, istio.Name, took.Round(time.Second)))
}
