package convert

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// Unit tests of single generators on the repository's own fixtures
// (testdata/bundles, written for these tests). Expected values are read off
// the fixture and OLM's documented behaviour, never off our own output.

func fixture(t testing.TB, name string) *bundle.Bundle {
	t.Helper()
	return loadBundle(t, filepath.Join("testdata", "bundles", name))
}

// resolved returns options as Convert passes them to generators.
func resolved(t testing.TB, b *bundle.Bundle, o Options) Options {
	t.Helper()
	r, err := ResolveOptions(b, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func generate(t testing.TB, g GenerateFunc, b *bundle.Bundle, o Options) []object {
	t.Helper()
	nodes, err := g(b, resolved(t, b, o))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]object, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, nodeToObject(t, n))
	}
	return out
}

func ids(objs []object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, objectID(o))
	}
	return out
}

// get walks a dotted path ("spec.template.spec.containers[0].name").
func get(t testing.TB, o any, path string) any {
	t.Helper()
	cur := o
	for _, part := range strings.Split(path, ".") {
		name, idx, hasIdx := strings.Cut(part, "[")
		if name != "" {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur = m[name]
		}
		if hasIdx {
			var i int
			fmt.Sscanf(idx, "%d]", &i)
			l, ok := cur.([]any)
			if !ok || i >= len(l) {
				return nil
			}
			cur = l[i]
		}
	}
	return cur
}

func expect(t testing.TB, o any, path string, want any) {
	t.Helper()
	if got := get(t, o, path); !reflect.DeepEqual(got, want) {
		t.Errorf("%s: got %s, want %s", path, short(got), short(want))
	}
}

func byKind(objs []object, kind string) []object {
	var out []object
	for _, o := range objs {
		if o["kind"] == kind {
			out = append(out, o)
		}
	}
	return out
}

func TestGenerateServiceAccounts(t *testing.T) {
	b := fixture(t, "allns-operator")
	objs := generate(t, GenerateServiceAccounts, b, Options{InstallNamespace: "ops"})
	// allns-manager from permissions and clusterPermissions, once; "" is the
	// default account and is not generated.
	if got, want := ids(objs), []string{"ServiceAccount. ops/allns-manager"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestGeneratePermissions(t *testing.T) {
	b := fixture(t, "allns-operator")
	if objs := generate(t, GeneratePermissions, b, Options{InstallNamespace: "ops"}); len(objs) != 0 {
		t.Errorf("AllNamespaces: want no Roles (lifted to ClusterRoles), got %v", ids(objs))
	}

	own := generate(t, GeneratePermissions, b, Options{InstallNamespace: "ops", TargetNamespaces: []string{"ops"}})
	if len(own) != 4 { // 2 permissions × Role+RoleBinding, install ns only
		t.Fatalf("OwnNamespace: want 4 objects, got %v", ids(own))
	}
	role, binding := own[0], own[1]
	name := get(t, role, "metadata.name").(string)
	// "<csv>-<sa>" is cut so that base, "-" and the hash fit in 63 characters.
	i := strings.LastIndex(name, "-") // base-36 hashes hold no "-"
	base, hash := name[:max(i, 0)], name[i+1:]
	if len(name) != 63 || !strings.HasPrefix("allns-operator.v1.0.0-allns-manager", base) || len(hash) < 40 {
		t.Errorf("Role name %q: want a truncated <csv>-<sa> plus hash, 63 characters", name)
	}
	expect(t, role, "rules[0].resources", []any{"configmaps"})
	expect(t, binding, "roleRef", map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name})
	expect(t, binding, "subjects", []any{map[string]any{"kind": "ServiceAccount", "name": "allns-manager", "namespace": "ops"}})
	expect(t, own[3], "subjects[0].name", "default") // serviceAccountName "" is the default account

	// SingleNamespace: the watched namespace, plus (deviation) the install namespace.
	single := generate(t, GeneratePermissions, b, Options{InstallNamespace: "ops", TargetNamespaces: []string{"apps"}})
	var nss []string
	for _, o := range byKind(single, "Role") {
		nss = append(nss, get(t, o, "metadata.namespace").(string))
	}
	if want := []string{"apps", "apps", "ops", "ops"}; !slices.Equal(nss, want) {
		t.Errorf("SingleNamespace Role namespaces: got %v, want %v", nss, want)
	}
	for _, o := range byKind(single, "RoleBinding") {
		expect(t, o, "subjects[0].namespace", "ops")
	}
	if get(t, single[0], "metadata.name") != name {
		t.Error("a Role's name must not depend on its namespace")
	}
}

func TestGenerateClusterPermissions(t *testing.T) {
	b := fixture(t, "allns-operator")
	own := generate(t, GenerateClusterPermissions, b, Options{InstallNamespace: "ops", TargetNamespaces: []string{"ops"}})
	if len(own) != 2 {
		t.Fatalf("OwnNamespace: want only clusterPermissions (ClusterRole+Binding), got %v", ids(own))
	}
	expect(t, own[0], "rules[0].verbs", []any{"*"})
	if _, ok := get(t, own[0], "metadata").(map[string]any)["namespace"]; ok {
		t.Error("ClusterRole must have no metadata.namespace")
	}

	all := generate(t, GenerateClusterPermissions, b, Options{InstallNamespace: "ops"})
	if len(all) != 6 { // clusterPermissions + 2 lifted permissions
		t.Fatalf("AllNamespaces: want 6 objects, got %v", ids(all))
	}
	lifted := all[2]
	rules := get(t, lifted, "rules").([]any)
	if len(rules) != 3 {
		t.Fatalf("lifted ClusterRole: want the 2 rules + namespaces rule, got %s", short(rules))
	}
	expect(t, lifted, "rules[2]", map[string]any{"apiGroups": []any{""}, "resources": []any{"namespaces"}, "verbs": []any{"get", "list", "watch"}})
	expect(t, all[3], "roleRef.kind", "ClusterRole")
	expect(t, all[3], "subjects[0].namespace", "ops")
	if get(t, lifted, "metadata.name") == get(t, own[0], "metadata.name") {
		t.Error("lifted and cluster permissions of one SA must get different hashed names")
	}
}

func TestGenerateCRDsKeepsBundleNode(t *testing.T) {
	b := fixture(t, "allns-operator")
	nodes, err := GenerateCRDs(b, resolved(t, b, Options{InstallNamespace: "ops"}))
	if err != nil || len(nodes) != 1 {
		t.Fatalf("want 1 CRD, got %d (%v)", len(nodes), err)
	}
	text := nodes[0].MustString()
	for _, want := range []string{"properties: {}", "subresources:\n      status: {}", "names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}"} {
		if !strings.Contains(text, want) {
			t.Errorf("CRD lost %q from the bundle's YAML:\n%s", want, text)
		}
	}
	if strings.Contains(text, "acceptedNames") || strings.Contains(text, "namespace: system") {
		t.Errorf("CRD must drop status and metadata.namespace:\n%s", text)
	}
	if strings.Index(text, "group:") > strings.Index(text, "versions:") {
		t.Error("CRD key order changed")
	}
	if !strings.Contains(b.CRDs[0].MustString(), "acceptedNames") {
		t.Error("generator modified the bundle's own node")
	}
}

// Under OwnsBundle the bundle's own CRD nodes are the output, changed as a
// copy would be (webhook-operator's conversion webhook included).
func TestGenerateCRDsOwnsBundle(t *testing.T) {
	for _, name := range []string{"allns-operator", "webhook-operator"} {
		o := Options{InstallNamespace: "ops", CertProvider: CertManager}
		copied, err := GenerateCRDs(fixture(t, name), resolved(t, fixture(t, name), o))
		if err != nil {
			t.Fatal(err)
		}
		b := fixture(t, name)
		o.OwnsBundle = true
		owned, err := GenerateCRDs(b, resolved(t, b, o))
		if err != nil || len(owned) != len(copied) {
			t.Fatalf("%s: %d CRDs (%v), want %d", name, len(owned), err, len(copied))
		}
		for i := range owned {
			if owned[i].YNode() != b.CRDs[i].YNode() {
				t.Errorf("%s: CRD %d is a copy, want the bundle's own node", name, i)
			}
			if got, want := owned[i].MustString(), copied[i].MustString(); got != want {
				t.Errorf("%s: CRD %d changed in place differs from the copy:\n%s\nwant:\n%s", name, i, got, want)
			}
		}
	}
}

func TestGenerateCRDsConversionWebhook(t *testing.T) {
	b := fixture(t, "webhook-operator")
	objs := generate(t, GenerateCRDs, b, Options{InstallNamespace: "hooks-system", CertProvider: CertManager})
	crd := objs[0]
	// Replaces the stale kustomize settings; path "/" and port 443 defaults.
	expect(t, crd, "spec.conversion", map[string]any{
		"strategy": "Webhook",
		"webhook": map[string]any{
			"clientConfig": map[string]any{"service": map[string]any{
				"name": "hooks-controller-service", "namespace": "hooks-system", "path": "/", "port": float64(443),
			}},
			"conversionReviewVersions": []any{"v1", "v1beta1"},
		},
	})
	expect(t, crd, "metadata.annotations", map[string]any{"cert-manager.io/inject-ca-from": "hooks-system/hooks-controller-service-cert"})

	sca := generate(t, GenerateCRDs, b, Options{InstallNamespace: "hooks-system", CertProvider: ServiceCA})
	expect(t, sca[0], "metadata.annotations", map[string]any{"service.beta.openshift.io/inject-cabundle": "true"})
}

func TestGenerateCRDsRejectsPreserveUnknownFields(t *testing.T) {
	b := fixture(t, "webhook-operator")
	b.CRDs[0].RNode = b.CRDs[0].Copy()
	if err := b.CRDs[0].PipeE(yaml.Lookup("spec"), yaml.SetField("preserveUnknownFields", yaml.NewScalarRNode("true"))); err != nil {
		t.Fatal(err)
	}
	_, err := GenerateCRDs(b, resolved(t, b, Options{InstallNamespace: "x"}))
	if err == nil || !strings.Contains(err.Error(), "preserveUnknownFields") || !strings.Contains(err.Error(), "gadgets.yaml") {
		t.Fatalf("want an error naming the file and preserveUnknownFields, got %v", err)
	}
}

func TestGenerateAdditionalResources(t *testing.T) {
	b := fixture(t, "allns-operator")
	objs := generate(t, GenerateAdditionalResources, b, Options{InstallNamespace: "ops"})
	want := []string{
		"ServiceAccount. ops/allns-manager",
		"ConfigMap. ops/allns-config",                                 // namespace: system replaced
		"ClusterRole.rbac.authorization.k8s.io /allns-metrics-reader", // stray namespace dropped
		"VerticalPodAutoscaler.autoscaling.k8s.io ops/allns-vpa",      // namespaced, unlike OLM
	}
	if got := ids(objs); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	expect(t, objs[1], "data", map[string]any{"empty": "", "settings": "{}"})
}

// An install namespace YAML 1.1 reads as something else than a string ("y",
// "123") is printed so that the repo-server reads a string, and the key
// stays where the bundle's file had it.
func TestGenerateAdditionalResourcesNamespaceStaysAString(t *testing.T) {
	b := fixture(t, "allns-operator")
	for _, ns := range []string{"y", "123", "on"} {
		nodes, err := GenerateAdditionalResources(b, resolved(t, b, Options{InstallNamespace: ns}))
		if err != nil {
			t.Fatal(err)
		}
		printed := nodes[1].MustString() // the ConfigMap, shipped with namespace: system
		if !strings.Contains(printed, "\n  namespace: \""+ns+"\"\n") {
			t.Errorf("namespace %q printed so YAML 1.1 reads no string:\n%s", ns, printed)
		}
		if !strings.HasPrefix(printed, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: allns-config\n  namespace: ") {
			t.Errorf("the namespace key moved:\n%s", printed)
		}
	}
}

func TestGenerateDeployments(t *testing.T) {
	b := fixture(t, "allns-operator")
	objs := generate(t, GenerateDeployments, b, Options{InstallNamespace: "ops", TargetNamespaces: []string{"a", "b"}})
	if len(objs) != 1 {
		t.Fatalf("want 1 Deployment, got %v", ids(objs))
	}
	d := objs[0]
	expect(t, d, "metadata.name", "allns-manager")
	expect(t, d, "metadata.namespace", "ops")
	expect(t, d, "metadata.labels", map[string]any{"app": "allns"})
	expect(t, d, "spec.revisionHistoryLimit", float64(1))
	expect(t, d, "spec.template.metadata.annotations", map[string]any{
		"capabilities":          "Basic Install", // from the CSV
		"shared-key":            "from-template", // the template wins (OLM v1)
		"olm.targetNamespaces":  "a,b",
		"olm.operatorNamespace": "ops",
	})
	expect(t, d, "spec.template.spec.containers[0].env", []any{map[string]any{"name": "LOG_LEVEL", "value": "info"}})
	if get(t, d, "spec.template.spec.volumes") != nil {
		t.Error("no webhooks: no cert volumes")
	}
}

func TestGenerateDeploymentsCertVolumes(t *testing.T) {
	b := fixture(t, "webhook-operator")
	none := generate(t, GenerateDeployments, b, Options{InstallNamespace: "h"})
	expect(t, none[0], "spec.template.spec.volumes[0].name", "old-certs") // no provider: untouched

	objs := generate(t, GenerateDeployments, b, Options{InstallNamespace: "h", CertProvider: CertManager})
	pod := get(t, objs[0], "spec.template.spec")
	var vols []string
	for _, v := range get(t, pod, "volumes").([]any) {
		vols = append(vols, v.(map[string]any)["name"].(string))
	}
	// old-certs is mounted at the webhook cert path, so it is replaced.
	if want := []string{"data", "webhook-cert", "apiservice-cert"}; !slices.Equal(vols, want) {
		t.Errorf("volumes: got %v, want %v", vols, want)
	}
	expect(t, pod, "volumes[1].secret", map[string]any{
		"secretName": "hooks-controller-service-cert",
		"items":      []any{map[string]any{"key": "tls.crt", "path": "tls.crt"}, map[string]any{"key": "tls.key", "path": "tls.key"}},
	})
	expect(t, pod, "volumes[2].secret.items[0]", map[string]any{"key": "tls.crt", "path": "apiserver.crt"})
	expect(t, pod, "containers[0].volumeMounts", []any{
		map[string]any{"name": "data", "mountPath": "/data"},
		map[string]any{"name": "webhook-cert", "mountPath": "/tmp/k8s-webhook-server/serving-certs"},
		map[string]any{"name": "apiservice-cert", "mountPath": "/apiserver.local.config/certificates"},
	})
}

func TestGenerateWebhookConfigurations(t *testing.T) {
	b := fixture(t, "webhook-operator")
	o := Options{InstallNamespace: "hooks-system", CertProvider: CertManager}
	v := generate(t, GenerateValidatingWebhookConfigurations, b, o)
	m := generate(t, GenerateMutatingWebhookConfigurations, b, o)
	if len(v) != 1 || len(m) != 1 {
		t.Fatalf("want one of each, got %v %v", ids(v), ids(m))
	}
	expect(t, v[0], "metadata", map[string]any{ // no namespace
		"name":        "vgadget.example.com",
		"annotations": map[string]any{"cert-manager.io/inject-ca-from": "hooks-system/hooks-controller-service-cert"},
	})
	expect(t, v[0], "webhooks[0].name", "vgadget.example.com")
	expect(t, v[0], "webhooks[0].clientConfig.service", map[string]any{
		"name": "hooks-controller-service", "namespace": "hooks-system", "path": "/validate-gadget", "port": float64(443), // containerPort defaulted
	})
	expect(t, v[0], "webhooks[0].namespaceSelector", nil) // AllNamespaces
	expect(t, v[0], "webhooks[0].sideEffects", "None")
	expect(t, m[0], "webhooks[0].reinvocationPolicy", "IfNeeded")
	expect(t, m[0], "webhooks[0].clientConfig.service.port", float64(8443))
}

func TestWebhookNamespaceSelector(t *testing.T) {
	got := webhookNamespaceSelector([]string{"a", "b"})
	if got == nil || got.MatchExpressions[0].Key != "kubernetes.io/metadata.name" || !slices.Equal(got.MatchExpressions[0].Values, []string{"a", "b"}) {
		t.Errorf("got %+v", got)
	}
	if webhookNamespaceSelector([]string{""}) != nil {
		t.Error("all namespaces: want no selector")
	}
}

func TestGenerateWebhookServices(t *testing.T) {
	b := fixture(t, "webhook-operator")
	objs := generate(t, GenerateWebhookServices, b, Options{InstallNamespace: "h", CertProvider: ServiceCA})
	if got := ids(objs); !slices.Equal(got, []string{"Service. h/hooks-controller-service"}) {
		t.Fatalf("got %v", got)
	}
	// 443→9443 (validating and conversion share it) and 8443→9443, sorted by port.
	expect(t, objs[0], "spec.ports", []any{
		map[string]any{"name": "443", "port": float64(443), "targetPort": float64(9443)},
		map[string]any{"name": "8443", "port": float64(8443), "targetPort": float64(9443)},
	})
	expect(t, objs[0], "spec.selector", map[string]any{"app": "hooks"})
	expect(t, objs[0], "metadata.annotations", map[string]any{"service.beta.openshift.io/serving-cert-secret-name": "hooks-controller-service-cert"})
}

func TestGenerateCertProviderObjects(t *testing.T) {
	b := fixture(t, "webhook-operator")
	objs := generate(t, GenerateCertProviderObjects, b, Options{InstallNamespace: "h", CertProvider: CertManager})
	if got, want := ids(objs), []string{
		"Issuer.cert-manager.io h/hooks-controller-service-cert-selfsigned-issuer",
		"Certificate.cert-manager.io h/hooks-controller-service-cert",
	}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	expect(t, objs[0], "spec", map[string]any{"selfSigned": map[string]any{}})
	expect(t, objs[1], "spec", map[string]any{
		"secretName":  "hooks-controller-service-cert",
		"commonName":  "hooks-controller-service.h",
		"dnsNames":    []any{"hooks-controller-service.h", "hooks-controller-service.h.svc", "hooks-controller-service.h.svc.cluster.local"},
		"issuerRef":   map[string]any{"name": "hooks-controller-service-cert-selfsigned-issuer"},
		"usages":      []any{"server auth"},
		"duration":    "17520h0m0s",
		"renewBefore": "24h0m0s",
	})
	for _, p := range []CertProvider{ServiceCA, NoCertProvider, ""} {
		if objs := generate(t, GenerateCertProviderObjects, b, Options{InstallNamespace: "h", CertProvider: p}); len(objs) != 0 {
			t.Errorf("%q: want no objects, got %v", p, ids(objs))
		}
	}
}

func TestConvertPrefersGeneratedServiceAccount(t *testing.T) {
	b := fixture(t, "allns-operator")
	objs, err := Convert(b, Options{InstallNamespace: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	var sas []object
	for _, n := range objs {
		if o := nodeToObject(t, n); o["kind"] == "ServiceAccount" {
			sas = append(sas, o)
		}
	}
	if len(sas) != 1 || sas[0]["imagePullSecrets"] != nil {
		t.Fatalf("want only the generated ServiceAccount, got %s", short(sas))
	}
}

func TestConvertWebhookBundle(t *testing.T) {
	b := fixture(t, "webhook-operator")
	objs, err := Convert(b, Options{InstallNamespace: "hooks-system", CertProvider: CertManager})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, n := range objs {
		kinds = append(kinds, n.GetKind())
		if !KindNamespaced(n.GetKind()) && n.GetNamespace() != "" {
			t.Errorf("%s %s: cluster-scoped object with a namespace", n.GetKind(), n.GetName())
		}
		if KindNamespaced(n.GetKind()) && n.GetNamespace() != "hooks-system" {
			t.Errorf("%s %s: namespace %q, want hooks-system", n.GetKind(), n.GetName(), n.GetNamespace())
		}
	}
	want := []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "Deployment",
		"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "Service", "Issuer", "Certificate"}
	if !slices.Equal(kinds, want) {
		t.Errorf("kinds: got %v, want %v", kinds, want)
	}
}

func TestConvertOwnNamespaceDefault(t *testing.T) {
	b := fixture(t, "ownns-operator")
	objs, err := Convert(b, Options{InstallNamespace: "own"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range objs {
		got = append(got, n.GetKind()+" "+n.GetNamespace())
	}
	if want := []string{"ServiceAccount own", "Role own", "RoleBinding own", "Deployment own"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	d := nodeToObject(t, objs[3])
	if ann := get(t, d, "spec.template.metadata.annotations").(map[string]any); ann["olm.targetNamespaces"] != "own" {
		t.Errorf("olm.targetNamespaces = %v, want own", ann["olm.targetNamespaces"])
	}
	if _, err := Convert(b, Options{InstallNamespace: "own", TargetNamespaces: []string{""}}); err == nil || !strings.Contains(err.Error(), "OwnNamespace") {
		t.Errorf("all namespaces for an Own-only bundle: want an error naming the modes, got %v", err)
	}
}
