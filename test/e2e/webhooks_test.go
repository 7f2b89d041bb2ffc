package e2e

// The webhooks part of the `operators` suite: Dynatrace's dynatrace-operator v1.10.2 (the shared
// bundle) runs from olm-cmp's render with its admission and conversion webhooks served for real.
//
// How a webhook call reaches the process: this kube-apiserver runs without
// --enable-aggregator-routing, so it resolves a webhook's Service to https://<ClusterIP>:<port>
// (the ClusterIP service resolver) and dials that address itself. There is no kube-proxy in the
// e2e network namespace, so the test plays its part for the rendered Services that select the
// webhook pod: it adds each Service's ClusterIP to the loopback (ip addr add <ip>/32 dev lo) and
// forwards <ClusterIP>:<port> to the pod's targetPort inside the pod's own network namespace
// (the pod runner's Forward). TLS is end to end: the apiserver verifies the certificate the
// webhook process loaded from its mounted Secret against the caBundle of the configuration.
//
// The certificate provider: the render uses cert-manager (OLM v1's default provider): a self-signed
// Issuer, a Certificate whose Secret the webhook Deployment mounts at
// /tmp/k8s-webhook-server/serving-certs, and cert-manager.io/inject-ca-from on the webhook
// configurations and the converted CRDs. cert-manager's own binaries cannot be built from the
// module proxy (its cmd/* modules are refused), so the test does what cert-manager would do, from
// the rendered objects alone: it issues the Certificate (its commonName, dnsNames, duration,
// usages) as the self-signed issuer does (ca.crt = tls.crt) into its secretName, and injects
// that ca.crt into every object that names the Certificate in inject-ca-from, as cainjector
// does. The operator itself does not manage certificates under OLM (OLM_OPERATOR_NAMESPACE is set
// from the olm.operatorNamespace annotation), so this is the path a real cluster takes.

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

const (
	dtBundle    = "dynatrace-operator-1.10.2"
	dtNamespace = "dynatrace"
	dtBinary    = "dynatrace-operator" // the image's last path element (its entrypoint binary)
)

// TestOperatorsDynatrace runs dynatrace-operator's two Deployments (operator, webhook) from the
// render and checks its webhooks answer the API server for real: DynaKubes its validating
// webhooks refuse (on create at v1beta6, on update at v1beta5), a Namespace and a Pod its
// mutating webhooks change, the DynaKube read at another version through its conversion
// webhook; then what the operator does with the DynaKube.
func TestOperatorsDynatrace(t *testing.T) {
	e := setup(t)
	binDir := os.Getenv("E2E_BIN")
	bin := filepath.Join(binDir, dtBinary)
	// CI's module proxy refuses dynatrace-bootstrapper, a dependency: build-dynatrace.sh then
	// leaves its reason beside the (absent or stale) binary, and this test skips, not fails
	if why, err := os.ReadFile(filepath.Join(binDir, ".dynatrace-operator.notbuilt")); err == nil {
		t.Skipf("dynatrace-operator not built: %s", strings.TrimSpace(string(why)))
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("%s not built (test/e2e/build-dynatrace.sh): %v", bin, err)
	}
	bdir := filepath.Join(e.sharedBundles(t), dtBundle)
	if _, err := os.Stat(bdir); err != nil {
		t.Skipf("bundle %s not found: %v", bdir, err)
	}
	sample := filepath.Join(binDir, "dynatrace-operator-samples", "dynakube", "v1beta6", "cloudNativeFullStack.yaml")
	if _, err := os.Stat(sample); err != nil {
		t.Skipf("the module's DynaKube sample is not there (test/e2e/build-dynatrace.sh copies it): %v", err)
	}

	// ---- render: cert-manager is declared served (the test stands in for it, see above)
	dir := filepath.Join(e.work, "dynatrace")
	f := map[string]any{"apiVersion": "olm-cmp.dev/v1alpha1", "kind": "OperatorBundle",
		"metadata": map[string]any{"name": "dynatrace"},
		"spec": map[string]any{"bundle": bdir, "namespace": dtNamespace,
			"clusterAPIs": []any{"cert-manager.io/v1"}}}
	writeSpecFile(t, dir, f)
	docs := e.render(t, dir)
	hooks := 0
	for _, d := range docs {
		if d.Kind != "ValidatingWebhookConfiguration" {
			continue
		}
		for _, h := range d.Obj["webhooks"].([]any) {
			hooks++
			if fp := h.(map[string]any)["failurePolicy"]; fp != nil && fp != "Fail" {
				t.Fatalf("%s: failurePolicy %v: the validating webhooks must fail closed here", d.Key(), fp)
			}
		}
	}
	if hooks == 0 {
		t.Fatal("the render has no validating webhooks")
	}

	start := time.Now()
	a := newApplier(t, e.work)
	a.apply("dynatrace", docs)
	// once the webhook process is gone, its configurations would only make later creations of
	// pods and namespaces on this cluster wait for a dead Service: remove them
	t.Cleanup(func() {
		for _, d := range docs {
			if d.Kind == "ValidatingWebhookConfiguration" || d.Kind == "MutatingWebhookConfiguration" {
				_, _ = kubectl(t, "delete", resourceArg(d), d.Name, "--ignore-not-found", "--wait=false")
			}
		}
	})

	// ---- the certificate provider (cert-manager stand-in) and cainjector
	cas := issueCertificates(t, docs)
	injected := injectCABundles(t, docs, cas)
	t.Logf("cert-manager stand-in: issued %d Certificate(s), injected caBundle into %s", len(cas), strings.Join(injected, ", "))

	operator, webhook := findDoc(t, docs, "Deployment", "dynatrace-operator"), findDoc(t, docs, "Deployment", "dynatrace-webhook")
	opts := podOptions{Binaries: map[string]string{dtBinary: bin}}

	// ---- fail closed: before the webhook's Service is routed, the API server cannot reach it and
	// refuses DynaKubes (so what follows is the webhook answering, not a bypass)
	closedFile := filepath.Join(e.work, "dynakube-closed.yaml")
	must(t, os.WriteFile(closedFile, []byte(fmt.Sprintf("apiVersion: dynatrace.com/v1beta6\nkind: DynaKube\nmetadata: {name: closed, namespace: %s}\nspec: {apiUrl: \"https://e2e00002.live.dynatrace.com/api\"}\n", dtNamespace)), 0o644))
	if out, err := kubectl(t, "create", "-f", closedFile); err == nil {
		t.Fatalf("a DynaKube was admitted while no webhook process runs (fail-open):\n%s", out)
	} else if !strings.Contains(err.Error(), `failed calling webhook "v1beta6.dynakube.webhook.dynatrace.com"`) {
		t.Fatalf("a DynaKube with no webhook running was refused, but not for the unreachable webhook:\n%v", err)
	} else {
		t.Logf("fail closed while unrouted: %s", firstLineWith(err.Error(), "failed calling webhook"))
	}

	// ---- the webhook pod, reachable through the rendered Services
	wp := runPod(t, webhook, opts)
	svcs := exposeServices(t, docs, wp)
	t.Logf("webhook pod %s runs; Services routed to it: %s", wp.Pod, strings.Join(svcs, ", "))
	hookSvc := webhookService(t, docs)
	waitTLS(t, wp, hookSvc, cas)

	// ---- the operator pod (its init container crd-storage-migration runs to completion first)
	op := runPod(t, operator, opts)
	t.Logf("operator pod %s runs (init container crd-storage-migrator completed)", op.Pod)

	// ---- REFUSED: the module's own sample, still carrying the example apiUrl
	raw, err := os.ReadFile(sample)
	must(t, err)
	var dk map[string]any
	must(t, yaml.Unmarshal(raw, &dk))
	if ns := str(dk, "metadata", "namespace"); ns != dtNamespace {
		t.Fatalf("sample %s: namespace %q, want %q", sample, ns, dtNamespace)
	}
	refused := filepath.Join(e.work, "dynakube-sample.yaml")
	must(t, os.WriteFile(refused, raw, 0o644))
	out, err := kubectl(t, "create", "-f", refused)
	if err == nil {
		t.Fatalf("the sample DynaKube (apiUrl %s) was accepted: the validating webhook did not refuse it:\n%s", str(dk, "spec", "apiUrl"), out)
	}
	const denied = `admission webhook "v1beta6.dynakube.webhook.dynatrace.com" denied the request`
	const apiURLMsg = "The DynaKube's specification is missing the API URL or still has the example value set"
	if !strings.Contains(err.Error(), denied) || !strings.Contains(err.Error(), apiURLMsg) {
		t.Fatalf("the sample DynaKube was refused, but not by the webhook's own check:\n%v", err)
	}
	t.Logf("REFUSED: %s %s", denied, firstLineWith(err.Error(), apiURLMsg))

	// ---- accepted once the apiUrl names a tenant; the token Secret a user creates beside it. A
	// platform token (dt0s16.*) the operator does not verify against the tenant, so it gets past
	// the tokens to its own work on the cluster; the tenant's API itself is unreachable here.
	spec := dk["spec"].(map[string]any)
	spec["apiUrl"] = "https://e2e00001.live.dynatrace.com/api"
	mustKubectl(t, "create", "secret", "generic", str(dk, "metadata", "name"), "-n", dtNamespace,
		"--from-literal=apiToken=dt0s16.E2E.PLATFORMTOKEN", "--from-literal=dataIngestToken=dt0c01.E2EINGEST")
	okFile := filepath.Join(e.work, "dynakube.yaml")
	b, err := yaml.Marshal(dk)
	must(t, err)
	must(t, os.WriteFile(okFile, b, 0o644))
	created := time.Now()
	if out, err := kubectl(t, "create", "-f", okFile); err != nil {
		t.Fatalf("DynaKube with a tenant apiUrl refused: %v", err)
	} else {
		t.Logf("accepted by the validating webhook: %s", strings.TrimSpace(string(out)))
	}

	// ---- REFUSED on UPDATE, at the other served version: moving the DynaKube to another tenant
	// through v1beta5 (the API server converts the stored v1beta6 object through /convert, then
	// calls the v1beta5 webhook with old and new object)
	patch := `{"spec":{"apiUrl":"https://e2e00009.live.dynatrace.com/api"}}`
	if out, err := kubectl(t, "patch", "dynakubes.v1beta5.dynatrace.com", str(dk, "metadata", "name"), "-n", dtNamespace, "--type=merge", "-p", patch); err == nil {
		t.Fatalf("the DynaKube's tenant was changed through v1beta5: the validating webhook did not refuse it:\n%s", out)
	} else {
		const deniedV5 = `admission webhook "v1beta5.dynakube.webhook.dynatrace.com" denied the request`
		const mutatedMsg = "The DynaKube's specification mutated the tenant in the API URL although it is immutable"
		if !strings.Contains(err.Error(), deniedV5) || !strings.Contains(err.Error(), mutatedMsg) {
			t.Fatalf("the tenant change through v1beta5 was refused, but not by the v1beta5 webhook's own check:\n%v", err)
		}
		t.Logf("REFUSED (update at v1beta5): %s %s", deniedV5, firstLineWith(err.Error(), mutatedMsg))
	}

	// ---- MUTATED: a new Namespace gets the DynaKube's injection label from /label-ns
	label := "dynakube.internal.dynatrace.com/instance"
	var mutated map[string]any
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; ; i++ {
		name := fmt.Sprintf("e2e-dt-app-%d", i)
		o := mustKubectl(t, "create", "namespace", name, "-o", "json")
		var ns map[string]any
		must(t, json.Unmarshal(o, &ns))
		if v := str(ns, "metadata", "labels", label); v != "" {
			if v != str(dk, "metadata", "name") {
				t.Fatalf("namespace %s: %s=%q, want the DynaKube's name %q", name, label, v, str(dk, "metadata", "name"))
			}
			mutated = ns
			break
		}
		// the webhook's cache may not have seen the new DynaKube yet (its failurePolicy is the
		// bundle's own Ignore): try a fresh namespace
		if time.Now().After(deadline) {
			t.Fatalf("no namespace created in 60s got %s from the mutating webhook (webhook log:\n%s)", label, tailString(wp.Logs(), 30))
		}
		time.Sleep(time.Second)
	}
	t.Logf("MUTATED by webhook.ns.dynatrace.com: namespace %s created without labels, admitted with %s=%s",
		str(mutated, "metadata", "name"), label, str(mutated, "metadata", "labels", label))

	// ---- MUTATED: a Pod created in that Namespace passes /inject, which records its decision on
	// the Pod (no injection yet: the bootstrapper config comes from the tenant, unreachable here)
	podFile := filepath.Join(e.work, "app-pod.json")
	must(t, os.WriteFile(podFile, []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"app","namespace":%q},"spec":{"containers":[{"name":"app","image":"registry.example/app:1"}]}}`, str(mutated, "metadata", "name"))), 0o644))
	var pod map[string]any
	must(t, json.Unmarshal(mustKubectl(t, "create", "-f", podFile, "-o", "json"), &pod))
	inj, why := str(pod, "metadata", "annotations", "dynakube.dynatrace.com/injected"), str(pod, "metadata", "annotations", "dynakube.dynatrace.com/reason")
	if inj != "false" || why == "" {
		t.Fatalf("pod %s/app admitted without the pod webhook's decision (annotations %v); webhook log:\n%s", str(mutated, "metadata", "name"), str2(pod["metadata"], "annotations"), tailString(wp.Logs(), 20))
	}
	t.Logf("MUTATED by webhook.pod.dynatrace.com: pod %s/app created without annotations, admitted with dynakube.dynatrace.com/injected=%s, reason=%s", str(mutated, "metadata", "name"), inj, why)

	// ---- CONVERTED: the DynaKube (stored at v1beta6) read at v1beta5 through /convert
	var conv map[string]any
	must(t, json.Unmarshal(mustKubectl(t, "get", "dynakubes.v1beta5.dynatrace.com", str(dk, "metadata", "name"), "-n", dtNamespace, "-o", "json"), &conv))
	if av := str(conv, "apiVersion"); av != "dynatrace.com/v1beta5" {
		t.Fatalf("DynaKube read at v1beta5 came back as %s", av)
	}
	if u := str(conv, "spec", "apiUrl"); u != spec["apiUrl"] {
		t.Fatalf("DynaKube converted to v1beta5: apiUrl %q, want %q", u, spec["apiUrl"])
	}
	t.Logf("CONVERTED by the conversion webhook: DynaKube read as dynatrace.com/v1beta5 (stored as v1beta6), apiUrl kept")

	// ---- the operator reconciles: status written by its ServiceAccount, objects it owns
	kubeSystemUID := strings.TrimSpace(string(mustKubectl(t, "get", "namespace", "kube-system", "-o", "jsonpath={.metadata.uid}")))
	metaCM := str(dk, "metadata", "name") + "-deployment-metadata"
	var live, cm map[string]any
	deadline = time.Now().Add(3 * time.Minute)
	for {
		must(t, json.Unmarshal(mustKubectl(t, "get", "dynakubes.v1beta6.dynatrace.com", str(dk, "metadata", "name"), "-n", dtNamespace, "-o", "json", "--show-managed-fields"), &live))
		o, _ := kubectl(t, "get", "configmap", metaCM, "-n", dtNamespace, "-o", "json", "--ignore-not-found")
		cm = nil
		if len(strings.TrimSpace(string(o))) > 0 {
			must(t, json.Unmarshal(o, &cm))
		}
		if str(live, "status", "phase") != "" && str(live, "status", "kubeSystemUUID") != "" && dtCondition(live, "ActiveGateConnectionInfo") != nil && cm != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the operator wrote no DynaKube status in 3m (status %v); operator log:\n%s", live["status"], tailString(op.Logs(), 40))
		}
		time.Sleep(time.Second)
	}
	reconciled := time.Since(created)
	tok, agc := dtCondition(live, "Tokens"), dtCondition(live, "ActiveGateConnectionInfo")
	// what the operator found on the cluster: the kube-system Namespace's UID (its cluster ID),
	// the token Secret (a platform token: Tokens ready); what it could not do: reach the tenant
	if got := str(live, "status", "kubeSystemUUID"); got != kubeSystemUID {
		t.Fatalf("DynaKube status.kubeSystemUUID %q, want the kube-system Namespace's UID %q", got, kubeSystemUID)
	}
	if tok["status"] != "True" {
		t.Fatalf("DynaKube condition Tokens %v, want True (the token Secret holds a platform token)", tok)
	}
	if str(live, "status", "phase") != "Error" || agc["status"] != "False" || agc["reason"] != "DynatraceApiError" {
		t.Fatalf("DynaKube status: phase %q, ActiveGateConnectionInfo %v; want phase Error and DynatraceApiError (no tenant is reachable)", str(live, "status", "phase"), agc)
	}
	// the deployment-metadata ConfigMap: owned by the DynaKube, carrying the cluster ID and the
	// operator's version
	owned := false
	for _, r := range list(cm["metadata"].(map[string]any)["ownerReferences"]) {
		rm := r.(map[string]any)
		owned = owned || (rm["kind"] == "DynaKube" && rm["uid"] == str(live, "metadata", "uid"))
	}
	data, _ := cm["data"].(map[string]any)
	blob, _ := json.Marshal(data)
	if !owned || !strings.Contains(string(blob), kubeSystemUID) || !strings.Contains(string(blob), `"v1.10.2"`) {
		t.Fatalf("ConfigMap %s: owned by the DynaKube %v, data %s; want an owner reference to it, the cluster ID %s and the operator version v1.10.2", metaCM, owned, blob, kubeSystemUID)
	}
	writer := statusManager(live)
	if writer == "" || strings.HasPrefix(writer, "kubectl") || strings.HasPrefix(writer, "olm-cmp") {
		t.Fatalf("the DynaKube's status is owned by field manager %q, not by the operator", writer)
	}
	var conds []string
	for _, c := range list(live["status"].(map[string]any)["conditions"]) {
		cm := c.(map[string]any)
		conds = append(conds, fmt.Sprintf("%v=%v(%v)", cm["type"], cm["status"], cm["reason"]))
	}
	t.Logf("RECONCILED in %v (from DynaKube creation; %v from apply): status by %q: phase %s, kubeSystemUUID %s, conditions %s; ConfigMap %s (keys %s) owned by the DynaKube",
		reconciled.Round(100*time.Millisecond), time.Since(start).Round(time.Second), writer, str(live, "status", "phase"),
		kubeSystemUID, strings.Join(conds, " "), metaCM, strings.Join(keys(data), ","))

	// ---- the rendered environment reached both processes: `modules.json` (a name that is not a
	// shell identifier) carries the install's module switches; the binary logs when it is unset
	for _, p := range []*runningPod{wp, op} {
		if strings.Contains(p.Logs(), `"msg":"envvar not set, using default","envvar":"modules.json"`) {
			t.Fatalf("pod %s: the rendered env var modules.json did not reach the process", p.Pod)
		}
	}

	// ---- no RBAC denial in either pod's logs
	var denials []string
	for _, p := range []*runningPod{wp, op} {
		for _, d := range p.Denials() {
			denials = append(denials, fmt.Sprintf("pod %s (ServiceAccount %s/%s): %s", p.Pod, p.Namespace, p.ServiceAccount, d))
		}
	}
	if len(denials) > 0 {
		t.Fatalf("RBAC denials (the render's RBAC lacks a permission):\n%s", strings.Join(denials, "\n"))
	}
	t.Logf("no RBAC denial in the logs of %s (SA %s) and %s (SA %s)", wp.Pod, wp.ServiceAccount, op.Pod, op.ServiceAccount)
	t.Logf("RESULT dynatrace-operator: 2 Deployment(s) run (dynatrace-webhook; dynatrace-operator after init crd-storage-migrator); webhooks served for real: 2 validating refused (create v1beta6, update v1beta5), 2 mutating changed a Namespace and a Pod, conversion v1beta6->v1beta5; DynaKube -> phase %s, Tokens True, tenant conditions DynatraceApiError, ConfigMap %s; reconciled in %v; no RBAC denial",
		str(live, "status", "phase"), metaCM, reconciled.Round(100*time.Millisecond))
}

// ---------------------------------------------------------------- cert-manager stand-in

// issueCertificates does what cert-manager's self-signed Issuer does for each rendered
// Certificate: a key pair and a self-signed certificate with the Certificate's commonName,
// dnsNames, duration and usages, stored in its secretName (tls.crt, tls.key, ca.crt = tls.crt).
// Returns namespace/name of the Certificate -> the PEM CA.
func issueCertificates(t *testing.T, docs []Doc) map[string][]byte {
	t.Helper()
	issuers := map[string]bool{}
	for _, d := range docs {
		if d.Kind == "Issuer" && d.Group() == "cert-manager.io" {
			if d.Obj["spec"].(map[string]any)["selfSigned"] == nil {
				t.Fatalf("%s is not a selfSigned Issuer: the stand-in only issues as the self-signed issuer", d.Key())
			}
			issuers[d.Namespace+"/"+d.Name] = true
		}
	}
	cas := map[string][]byte{}
	for _, d := range docs {
		if d.Kind != "Certificate" || d.Group() != "cert-manager.io" {
			continue
		}
		spec := d.Obj["spec"].(map[string]any)
		if !issuers[d.Namespace+"/"+str(d.Obj, "spec", "issuerRef", "name")] {
			t.Fatalf("%s: issuer %q is not a rendered self-signed Issuer", d.Key(), str(d.Obj, "spec", "issuerRef", "name"))
		}
		dur := 90 * 24 * time.Hour // cert-manager's default
		if s := str(d.Obj, "spec", "duration"); s != "" {
			var err error
			if dur, err = time.ParseDuration(s); err != nil {
				t.Fatalf("%s: duration %q: %v", d.Key(), s, err)
			}
		}
		key, err := rsa.GenerateKey(rand.Reader, 2048) // cert-manager's default private key
		must(t, err)
		serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
		must(t, err)
		tmpl := &x509.Certificate{
			SerialNumber: serial, Subject: pkix.Name{CommonName: str(d.Obj, "spec", "commonName")},
			NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(dur),
			KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			BasicConstraintsValid: true,
		}
		for _, n := range list(spec["dnsNames"]) {
			tmpl.DNSNames = append(tmpl.DNSNames, fmt.Sprint(n))
		}
		for _, u := range list(spec["usages"]) {
			switch u {
			case "server auth":
				tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
			case "client auth":
				tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
			}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		must(t, err)
		certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
		keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
		secret := map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
			"metadata": map[string]any{"name": str(d.Obj, "spec", "secretName"), "namespace": d.Namespace,
				"annotations": map[string]any{"cert-manager.io/certificate-name": d.Name,
					"cert-manager.io/issuer-name": str(d.Obj, "spec", "issuerRef", "name"), "cert-manager.io/issuer-kind": "Issuer"}},
			"data": map[string]any{"tls.crt": base64.StdEncoding.EncodeToString(certPEM),
				"tls.key": base64.StdEncoding.EncodeToString(keyPEM), "ca.crt": base64.StdEncoding.EncodeToString(certPEM)}}
		applyObject(t, "cert-manager", secret)
		cas[d.Namespace+"/"+d.Name] = certPEM
	}
	if len(cas) == 0 {
		t.Fatal("the render has no cert-manager Certificate for the webhooks")
	}
	return cas
}

// injectCABundles does what cert-manager's cainjector does: every rendered webhook configuration
// or CRD annotated cert-manager.io/inject-ca-from: <ns>/<certificate> gets that Certificate's
// CA as caBundle (each webhook's clientConfig; a CRD's conversion webhook clientConfig).
func injectCABundles(t *testing.T, docs []Doc, cas map[string][]byte) []string {
	t.Helper()
	var done []string
	for _, d := range docs {
		from := str(d.Obj, "metadata", "annotations", "cert-manager.io/inject-ca-from")
		if from == "" {
			continue
		}
		ca, ok := cas[from]
		if !ok {
			t.Fatalf("%s: inject-ca-from %q names no rendered Certificate", d.Key(), from)
		}
		bundle := base64.StdEncoding.EncodeToString(ca)
		var ops []map[string]any
		switch d.Kind {
		case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
			for i := range list(d.Obj["webhooks"]) {
				ops = append(ops, map[string]any{"op": "add", "path": fmt.Sprintf("/webhooks/%d/clientConfig/caBundle", i), "value": bundle})
			}
		case "CustomResourceDefinition":
			if str(d.Obj, "spec", "conversion", "strategy") != "Webhook" {
				continue
			}
			ops = append(ops, map[string]any{"op": "add", "path": "/spec/conversion/webhook/clientConfig/caBundle", "value": bundle})
		default:
			t.Fatalf("%s: inject-ca-from on a kind cainjector does not handle here", d.Key())
		}
		p, err := json.Marshal(ops)
		must(t, err)
		mustKubectl(t, "patch", resourceArg(d), d.Name, "--type=json", "--field-manager=cert-manager-cainjector", "-p", string(p))
		done = append(done, d.Kind+"/"+d.Name)
	}
	return done
}

func applyObject(t *testing.T, manager string, obj map[string]any) {
	t.Helper()
	b, err := json.Marshal(obj)
	must(t, err)
	f, err := os.CreateTemp(t.TempDir(), "obj-*.json")
	must(t, err)
	_, err = f.Write(b)
	must(t, err)
	must(t, f.Close())
	mustKubectl(t, "apply", "--server-side", "--force-conflicts", "--field-manager="+manager, "-f", f.Name())
}

// ---------------------------------------------------------------- Service routing (kube-proxy's part)

// exposeServices routes every rendered ClusterIP Service that selects the pod to it: the
// Service's ClusterIP goes on the loopback of the test's network namespace (where the
// kube-apiserver dials it) and each port forwards to the pod's targetPort (a name resolves
// through the pod's container ports, as the endpoints controller does).
func exposeServices(t *testing.T, docs []Doc, p *runningPod) []string {
	t.Helper()
	podLabels, _ := p.pod["metadata"].(map[string]any)["labels"].(map[string]any)
	var out []string
	for _, d := range docs {
		if d.Kind != "Service" || d.Namespace != p.Namespace {
			continue
		}
		sel, _ := d.Obj["spec"].(map[string]any)["selector"].(map[string]any)
		if len(sel) == 0 {
			continue
		}
		match := true
		for k, v := range sel {
			if fmt.Sprint(podLabels[k]) != fmt.Sprint(v) {
				match = false
			}
		}
		if !match {
			continue
		}
		ip := strings.TrimSpace(string(mustKubectl(t, "get", "service", d.Name, "-n", d.Namespace, "-o", "jsonpath={.spec.clusterIP}")))
		if net.ParseIP(ip) == nil {
			t.Fatalf("Service %s/%s: no ClusterIP (%q)", d.Namespace, d.Name, ip)
		}
		addLoopback(t, ip)
		for _, port := range list(d.Obj["spec"].(map[string]any)["ports"]) {
			pm := port.(map[string]any)
			sp := int(pm["port"].(float64))
			tp := targetPort(t, p, pm)
			p.Forward(net.JoinHostPort(ip, strconv.Itoa(sp)), tp)
			out = append(out, fmt.Sprintf("%s %s:%d -> pod :%d", d.Name, ip, sp, tp))
		}
	}
	if len(out) == 0 {
		t.Fatalf("no rendered Service selects pod %s/%s", p.Namespace, p.Pod)
	}
	return out
}

func targetPort(t *testing.T, p *runningPod, port map[string]any) int {
	switch tp := port["targetPort"].(type) {
	case nil:
		return int(port["port"].(float64))
	case float64:
		return int(tp)
	case string:
		if n, err := strconv.Atoi(tp); err == nil {
			return n
		}
		for _, c := range list(p.pod["spec"].(map[string]any)["containers"]) {
			for _, cp := range list(c.(map[string]any)["ports"]) {
				cpm := cp.(map[string]any)
				if cpm["name"] == tp {
					return int(cpm["containerPort"].(float64))
				}
			}
		}
		t.Fatalf("pod %s: no container port named %q", p.Pod, tp)
	}
	t.Fatalf("targetPort %v", port["targetPort"])
	return 0
}

// addLoopback puts ip on lo (the test runs as root, or mapped root, in run.sh's network
// namespace) and removes it when the test ends.
func addLoopback(t *testing.T, ip string) {
	t.Helper()
	out, err := exec.Command("ip", "addr", "add", ip+"/32", "dev", "lo").CombinedOutput()
	if err != nil && !strings.Contains(string(out), "File exists") {
		t.Fatalf("ip addr add %s/32 dev lo: %v: %s", ip, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "addr", "del", ip+"/32", "dev", "lo").Run() })
}

// webhookService is the Service the webhook configurations call.
func webhookService(t *testing.T, docs []Doc) map[string]any {
	for _, d := range docs {
		if d.Kind == "ValidatingWebhookConfiguration" {
			return list(d.Obj["webhooks"])[0].(map[string]any)["clientConfig"].(map[string]any)["service"].(map[string]any)
		}
	}
	t.Fatal("no ValidatingWebhookConfiguration rendered")
	return nil
}

// waitTLS waits until the webhook Service answers a TLS handshake the way the API server makes
// it: to the ClusterIP, server name <service>.<namespace>.svc, trusting only the injected CA.
func waitTLS(t *testing.T, p *runningPod, svc map[string]any, cas map[string][]byte) {
	t.Helper()
	name, ns := fmt.Sprint(svc["name"]), fmt.Sprint(svc["namespace"])
	port := 443
	if v, ok := svc["port"].(float64); ok {
		port = int(v)
	}
	ip := strings.TrimSpace(string(mustKubectl(t, "get", "service", name, "-n", ns, "-o", "jsonpath={.spec.clusterIP}")))
	pool := x509.NewCertPool()
	for _, ca := range cas {
		pool.AppendCertsFromPEM(ca)
	}
	cfg := &tls.Config{RootCAs: pool, ServerName: name + "." + ns + ".svc"}
	addr := net.JoinHostPort(ip, strconv.Itoa(port))
	deadline := time.Now().Add(2 * time.Minute)
	for {
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", addr, cfg)
		if err == nil {
			v := c.ConnectionState().Version
			c.Close()
			t.Logf("webhook Service %s.%s.svc (%s) serves TLS (0x%x) with the injected CA", name, ns, addr, v)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhook Service %s (%s) not serving TLS in 2m: %v\nwebhook log:\n%s", name, addr, err, tailString(p.Logs(), 40))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// ---------------------------------------------------------------- small helpers

func findDoc(t *testing.T, docs []Doc, kind, name string) Doc {
	t.Helper()
	for _, d := range docs {
		if d.Kind == kind && d.Name == name {
			return d
		}
	}
	t.Fatalf("the render has no %s %s", kind, name)
	return Doc{}
}

func dtCondition(obj map[string]any, typ string) map[string]any {
	st, _ := obj["status"].(map[string]any)
	for _, c := range list(st["conditions"]) {
		if cm, ok := c.(map[string]any); ok && cm["type"] == typ {
			return cm
		}
	}
	return nil
}

// statusManager is the field manager that owns the status subresource's fields.
func statusManager(obj map[string]any) string {
	md, _ := obj["metadata"].(map[string]any)
	for _, m := range list(md["managedFields"]) {
		mm, _ := m.(map[string]any)
		if mm["subresource"] == "status" {
			return fmt.Sprint(mm["manager"])
		}
	}
	return ""
}

func firstLineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return strings.TrimSpace(l)
		}
	}
	return lastLine(s)
}

func tailString(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
