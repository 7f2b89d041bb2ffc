package e2e

// dbaas-operator v0.5.0 (the shared bundle dbaas-operator-0.5.0) runs from olm-cmp's render with
// its webhooks served for real. Unlike dynatrace-operator, it builds from the module proxy alone,
// so CI always has one operator whose validating and conversion webhooks the API server calls.
//
// Its webhooks come from the CSV's webhookdefinitions (OLM style), so olm-cmp's render supplies
// the serving certificate: with the default certificate provider (cert-manager) a self-signed
// Issuer, a Certificate for the Service olm-cmp adds (<deployment>-service), the webhook-cert
// volume at /tmp/k8s-webhook-server/serving-certs (controller-runtime's default cert dir), and
// cert-manager.io/inject-ca-from on the three ValidatingWebhookConfigurations and on the five
// CRDs whose conversion is a webhook. The test plays cert-manager and kube-proxy as
// webhooks_test.go does (issueCertificates, injectCABundles, exposeServices).
//
// What it needs that no render can give (it is written for OLM v0 on OpenShift): before its
// manager starts, its DBaaSPlatform controller reads OPERATOR_CONDITION_NAME (it refuses to start
// without it) and gets the ClusterServiceVersion of that name in its install namespace (to own
// the DBaaSPlatform it creates; "no matches for kind ClusterServiceVersion" ends the process).
// OLM v0 injects that variable and creates that CSV; OLM v1, and so olm-cmp, does neither. The
// spec sets the variable through `config.env` (OLM's SubscriptionConfig), as a user without OLM
// v0 must, and the test stands in for OLM v0's CSV: a permissive ClusterServiceVersion CRD (as
// for every API the cluster lacks) and the bundle's own CSV object (name, version, display name).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

const (
	dbaasBundle    = "dbaas-operator-0.5.0"
	dbaasNamespace = "dbaas"
	dbaasBinary    = "dbaas-operator" // built by build-operators.sh; the container runs it as /manager
	dbaasCSV       = "dbaas-operator.v0.5.0"
)

// TestOperatorsDBaaS runs dbaas-operator's Deployment from the render and checks its webhooks
// answer the API server for real (a DBaaSConnection its validating webhook refuses, one read at
// v1alpha1 through the conversion webhook), then what the operator reconciles: the default
// DBaaSPolicy it creates and the ResourceQuota it owns, a DBaaSConnection's topology Deployment
// and status.
func TestOperatorsDBaaS(t *testing.T) {
	e := setup(t)
	bin := filepath.Join(os.Getenv("E2E_BIN"), dbaasBinary)
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("%s not built (test/e2e/build-operators.sh, OPERATORS=dbaas): %v", bin, err)
	}
	bdir := filepath.Join(e.sharedBundles(t), dbaasBundle)
	if _, err := os.Stat(bdir); err != nil {
		t.Skipf("bundle %s not found: %v", bdir, err)
	}

	dir := filepath.Join(e.work, "dbaas")
	writeSpecFile(t, dir, map[string]any{"apiVersion": "olm-cmp.dev/v1alpha1", "kind": "OperatorBundle",
		"metadata": map[string]any{"name": "dbaas"},
		"spec": map[string]any{"bundle": bdir, "namespace": dbaasNamespace,
			"clusterAPIs": []any{"cert-manager.io/v1"},
			"config": map[string]any{"env": []any{
				map[string]any{"name": "OPERATOR_CONDITION_NAME", "value": dbaasCSV}}}}})
	docs := e.render(t, dir)
	hooks, converted := 0, 0
	for _, d := range docs {
		switch d.Kind {
		case "ValidatingWebhookConfiguration":
			for _, h := range list(d.Obj["webhooks"]) {
				hooks++
				if fp := h.(map[string]any)["failurePolicy"]; fp != nil && fp != "Fail" {
					t.Fatalf("%s: failurePolicy %v: the validating webhooks must fail closed here", d.Key(), fp)
				}
			}
		case "CustomResourceDefinition":
			if str(d.Obj, "spec", "conversion", "strategy") == "Webhook" {
				converted++
			}
		}
	}
	if hooks == 0 || converted == 0 {
		t.Fatalf("the render has %d validating webhooks and %d CRDs converted by a webhook; want both", hooks, converted)
	}

	start := time.Now()
	a := newApplier(t, e.work)
	a.apply("dbaas", docs)
	t.Cleanup(func() {
		for _, d := range docs {
			if d.Kind == "ValidatingWebhookConfiguration" || d.Kind == "MutatingWebhookConfiguration" {
				_, _ = kubectl(t, "delete", resourceArg(d), d.Name, "--ignore-not-found", "--wait=false")
			}
		}
	})
	csvName := standInCSV(t, a, bdir)
	cas := issueCertificates(t, docs)
	injected := injectCABundles(t, docs, cas)
	t.Logf("cert-manager stand-in: issued %d Certificate(s), injected caBundle into %s", len(cas), strings.Join(injected, ", "))

	// a DBaaSConnection naming neither databaseServiceID nor databaseServiceRef
	bad := filepath.Join(e.work, "dbaasconnection-bad.yaml")
	must(t, os.WriteFile(bad, []byte(fmt.Sprintf("apiVersion: dbaas.redhat.com/v1beta1\nkind: DBaaSConnection\nmetadata: {name: no-service, namespace: %s}\nspec: {inventoryRef: {name: inventory-example, namespace: %s}}\n", dbaasNamespace, dbaasNamespace)), 0o644))
	const hookName = "vdbaasconnection.kb.io"

	// ---- fail closed while no process serves the webhook
	if out, err := kubectl(t, "create", "-f", bad); err == nil {
		t.Fatalf("a DBaaSConnection was admitted while no webhook process runs (fail-open):\n%s", out)
	} else if !strings.Contains(err.Error(), `failed calling webhook "`+hookName+`"`) {
		t.Fatalf("a DBaaSConnection with no webhook running was refused, but not for the unreachable webhook:\n%v", err)
	} else {
		t.Logf("fail closed while unrouted: %s", firstLineWith(err.Error(), "failed calling webhook"))
	}

	// ---- the operator pod, reachable through the rendered Services
	dep := findDoc(t, docs, "Deployment", "dbaas-operator-controller-manager")
	p := runPod(t, dep, podOptions{Binaries: map[string]string{"manager": bin}})
	svcs := exposeServices(t, docs, p)
	t.Logf("pod %s runs (ServiceAccount %s); Services routed to it: %s", p.Pod, p.ServiceAccount, strings.Join(svcs, ", "))
	waitTLS(t, p, webhookService(t, docs), cas)

	// ---- REFUSED by the validating webhook, with its own message
	const denied = `admission webhook "` + hookName + `" denied the request`
	const why = "either databaseServiceID or databaseServiceRef must be specified"
	if out, err := kubectl(t, "create", "-f", bad); err == nil {
		t.Fatalf("a DBaaSConnection without a database service was accepted: the validating webhook did not refuse it:\n%s", out)
	} else if !strings.Contains(err.Error(), denied) || !strings.Contains(err.Error(), why) {
		t.Fatalf("the DBaaSConnection was refused, but not by the webhook's own check:\n%v", err)
	} else {
		t.Logf("REFUSED: %s", firstLineWith(err.Error(), why))
	}

	// ---- accepted: the CSV's own example (the render's alm-examples), in the install namespace
	var conn map[string]any
	for _, ex := range almExamples(t, bdir) {
		if ex["kind"] == "DBaaSConnection" {
			conn = ex
		}
	}
	if conn == nil {
		t.Fatal("the CSV has no DBaaSConnection example")
	}
	conn["metadata"].(map[string]any)["namespace"] = dbaasNamespace
	connName := str(conn, "metadata", "name")
	serviceID := str(conn, "spec", "databaseServiceID")
	goodFile := filepath.Join(e.work, "dbaasconnection.json")
	b, err := json.Marshal(conn)
	must(t, err)
	must(t, os.WriteFile(goodFile, b, 0o644))
	created := time.Now()
	if out, err := kubectl(t, "create", "-f", goodFile); err != nil {
		t.Fatalf("the CSV's DBaaSConnection example was refused: %v", err)
	} else {
		t.Logf("accepted by the validating webhook: %s", strings.TrimSpace(string(out)))
	}

	// ---- CONVERTED: stored at v1beta1, read at v1alpha1 through /convert (databaseServiceID is
	// v1alpha1's instanceID)
	v1a := getJSON(t, "dbaasconnections.v1alpha1.dbaas.redhat.com", connName, "-n", dbaasNamespace)
	if v1a == nil {
		t.Fatalf("DBaaSConnection %s could not be read at v1alpha1 (conversion webhook); pod log:\n%s", connName, tailString(p.Logs(), 30))
	}
	if av, id := str(v1a, "apiVersion"), str(v1a, "spec", "instanceID"); av != "dbaas.redhat.com/v1alpha1" || id != serviceID {
		t.Fatalf("DBaaSConnection read at v1alpha1: apiVersion %s, spec.instanceID %q; want dbaas.redhat.com/v1alpha1 and %q (v1beta1's databaseServiceID)", av, id, serviceID)
	}
	t.Logf("CONVERTED by the conversion webhook: DBaaSConnection %s read as dbaas.redhat.com/v1alpha1 (stored as v1beta1): spec.instanceID=%s from databaseServiceID", connName, serviceID)

	// ---- RECONCILED: the default DBaaSPolicy the operator creates in its install namespace (the
	// policy webhook admits it), its ResourceQuota and status; the connection's topology
	// Deployment and status
	var policy, quota, topo, live, platform map[string]any
	deadline := time.Now().Add(3 * time.Minute)
	for {
		policy = getJSON(t, "dbaaspolicies.v1beta1.dbaas.redhat.com", "cluster", "-n", dbaasNamespace, "--show-managed-fields")
		quota = getJSON(t, "resourcequota", "dbaas-cluster", "-n", dbaasNamespace)
		topo = getJSON(t, "deployment", connName, "-n", dbaasNamespace)
		live = getJSON(t, "dbaasconnections.v1beta1.dbaas.redhat.com", connName, "-n", dbaasNamespace, "--show-managed-fields")
		platform = getJSON(t, "dbaasplatforms.v1beta1.dbaas.redhat.com", "dbaas-platform", "-n", dbaasNamespace, "--show-managed-fields")
		ps, _, _ := condition(policy, "PolicyReady")
		cs, _, _ := condition(live, "ConnectionReady")
		if ps != "" && quota != nil && topo != nil && cs != "" && platform != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("in 3m: DBaaSPolicy cluster %v, ResourceQuota dbaas-cluster %v, Deployment %s %v, DBaaSConnection status %v, DBaaSPlatform status %v; pod log:\n%s",
				policy != nil, quota != nil, connName, topo != nil, live["status"], platform["status"], tailString(p.Logs(), 40))
		}
		time.Sleep(time.Second)
	}
	reconciled := time.Since(created)
	if s, r, m := condition(policy, "PolicyReady"); s != "True" || r != "Ready" {
		t.Fatalf("DBaaSPolicy cluster: PolicyReady %s/%s (%s), want True/Ready", s, r, m)
	}
	if !ownedBy(quota, str(policy, "metadata", "uid")) || str(quota, "spec", "hard", "count/dbaaspolicies.dbaas.redhat.com") != "1" {
		t.Fatalf("ResourceQuota dbaas-cluster: %v; want owned by the DBaaSPolicy, hard count/dbaaspolicies.dbaas.redhat.com=1", quota)
	}
	if !ownedBy(topo, str(live, "metadata", "uid")) {
		t.Fatalf("Deployment %s is not owned by the DBaaSConnection: %v", connName, topo["metadata"])
	}
	cs, cr, cm := condition(live, "ConnectionReady")
	if cs != "False" || cr != "DBaaSInventoryNotFound" {
		t.Fatalf("DBaaSConnection %s: ConnectionReady %s/%s (%s); want False/DBaaSInventoryNotFound (the example's inventory does not exist)", connName, cs, cr, cm)
	}
	csvUID := str(getJSON(t, "clusterserviceversions.operators.coreos.com", csvName, "-n", dbaasNamespace), "metadata", "uid")
	if !ownedBy(platform, csvUID) {
		t.Fatalf("DBaaSPlatform dbaas-platform is not owned by the ClusterServiceVersion %s: %v", csvName, platform["metadata"])
	}
	pls, plr, plm := condition(platform, "PlatformReady")
	for _, o := range []map[string]any{policy, live} {
		if w := statusManager(o); w == "" || strings.HasPrefix(w, "kubectl") || strings.HasPrefix(w, "olm-cmp") {
			t.Fatalf("%s %s: status owned by field manager %q, not by the operator", o["kind"], str(o, "metadata", "name"), w)
		}
	}
	t.Logf("RECONCILED in %v (from the DBaaSConnection's creation; %v from apply): DBaaSPolicy cluster created by the operator, PolicyReady=True, ResourceQuota dbaas-cluster owned by it; DBaaSConnection %s: topology Deployment owned by it, ConnectionReady=False/%s (%s), status by %q",
		reconciled.Round(100*time.Millisecond), time.Since(start).Round(time.Second), connName, cr, cm, statusManager(live))
	// its providers install through OLM v0 and OpenShift APIs this cluster lacks: whatever status
	// it reached is logged, not asserted
	t.Logf("DBaaSPlatform dbaas-platform created by the operator, owned by the CSV %s: PlatformReady=%q/%q (%s)", csvName, pls, plr, plm)

	checkDenials(t, []*runningPod{p})
	if !t.Failed() {
		t.Logf("no RBAC denial in the log of %s (ServiceAccount %s/%s)", p.Pod, p.Namespace, p.ServiceAccount)
		t.Logf("RESULT dbaas-operator: 1 Deployment run (%s); webhooks served for real: %s refused a DBaaSConnection (%q), conversion v1beta1->v1alpha1; DBaaSPolicy cluster -> PolicyReady=True + ResourceQuota; DBaaSConnection -> Deployment + ConnectionReady=False/%s; reconciled in %v; no RBAC denial",
			dep.Name, hookName, why, cr, reconciled.Round(100*time.Millisecond))
	}
}

// standInCSV does OLM v0's part dbaas-operator cannot start without: the ClusterServiceVersion
// (the bundle's own name, version and display name) in the install namespace, behind a
// permissive stand-in CRD. Returns its name.
func standInCSV(t *testing.T, a *applier, bdir string) string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(bdir, "manifests", "*.clusterserviceversion.yaml"))
	if len(matches) != 1 {
		t.Fatalf("bundle %s: want one ClusterServiceVersion manifest, found %v", bdir, matches)
	}
	raw, err := os.ReadFile(matches[0])
	must(t, err)
	var csv map[string]any
	must(t, yaml.Unmarshal(raw, &csv))
	name := str(csv, "metadata", "name")
	if name != dbaasCSV {
		t.Fatalf("%s: CSV %q, but the spec sets OPERATOR_CONDITION_NAME=%s", matches[0], name, dbaasCSV)
	}
	obj := map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
		"metadata": map[string]any{"name": name, "namespace": dbaasNamespace},
		"spec":     map[string]any{"version": str(csv, "spec", "version"), "displayName": str(csv, "spec", "displayName")}}
	a.ensureServed(Doc{APIVersion: "operators.coreos.com/v1alpha1", Kind: "ClusterServiceVersion", Name: name, Namespace: dbaasNamespace, Obj: obj})
	applyObject(t, "olm-v0-stand-in", obj)
	t.Logf("OLM v0 stand-in: ClusterServiceVersion %s/%s (version %s)", dbaasNamespace, name, str(csv, "spec", "version"))
	return name
}
