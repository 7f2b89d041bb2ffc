package deploy_test

import (
	"os"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/internal/tenancy"
)

const tenancyFile = "kustomize/components/olm-cmp-tenancy/tenancy/tenancy.yaml"

// TestTenancyExample: the example policy loads, denies projects it does not
// name (the safe default), and the argocd-tenancy example mounts it and the
// projects' credentials Secret (optional, read-only) where the variable and
// credentialsDir say; the plain argocd example has no tenancy policy.
func TestTenancyExample(t *testing.T) {
	p, err := tenancy.Load(tenancyFile)
	if err != nil {
		t.Fatal(err)
	}
	if p.Unlisted != tenancy.Deny || p.CredentialsDir != "/etc/olm-cmp/tenant-registry" {
		t.Errorf("unlistedProjects %s, credentialsDir %s", p.Unlisted, p.CredentialsDir)
	}
	if _, err := p.Tenant("some-team"); err == nil {
		t.Error("an unlisted project renders")
	}
	var cm map[string]any
	for _, r := range renderExample(t, "argocd-tenancy").Resources() {
		if r.GetKind() == "ConfigMap" && r.GetName() == "olm-cmp-tenancy" {
			m, err := r.Map()
			if err != nil {
				t.Fatal(err)
			}
			cm = m["data"].(map[string]any)
		}
	}
	want, err := os.ReadFile(tenancyFile)
	if err != nil {
		t.Fatal(err)
	}
	if cm == nil || cm["tenancy.yaml"] != string(want) {
		t.Errorf("ConfigMap olm-cmp-tenancy does not hold %s: %v", tenancyFile, cm)
	}
	ps := podSpec(t, buildExample(t, "argocd-tenancy"))
	c := byName(t, ps["containers"], "olm-cmp")
	checkSecurity(t, c)
	if e := byName(t, c["env"], "OLM_CMP_TENANCY_POLICY"); e == nil || e["value"] != "/etc/olm-cmp/tenancy/tenancy.yaml" {
		t.Errorf("env: %v", c["env"])
	}
	for path, vol := range map[string]string{"/etc/olm-cmp/tenancy": "olm-cmp-tenancy", "/etc/olm-cmp/tenant-registry": "olm-cmp-tenant-registry"} {
		if m := mounts(c)[path]; m == nil || m["name"] != vol || m["readOnly"] != true {
			t.Errorf("mount %s: %v", path, m)
		}
	}
	if v := byName(t, ps["volumes"], "olm-cmp-tenant-registry"); v == nil || dig(t, v, "secret", "optional") != true {
		t.Errorf("credentials volume: %v", v)
	}
	// The other mounts and args are the olm-cmp component's.
	base := byName(t, podSpec(t, buildExample(t, "argocd"))["containers"], "olm-cmp")
	if !reflect.DeepEqual(c["args"], base["args"]) || byName(t, base["env"], "OLM_CMP_TENANCY_POLICY") != nil {
		t.Errorf("the tenancy component changed more than it adds: %v vs %v", c["args"], base["args"])
	}
}

// TestHelmTenancyValues: values-tenancy.yaml, given after values.yaml,
// gives the chart the argocd-tenancy example's container and volumes, and
// both policies' ConfigMaps with the component's files.
func TestHelmTenancyValues(t *testing.T) {
	b, err := os.ReadFile("helm/values-tenancy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(b, &values); err != nil {
		t.Fatal(err)
	}
	ps := podSpec(t, buildExample(t, "argocd-tenancy"))
	hc := byName(t, dig(t, values, "repoServer", "extraContainers"), "olm-cmp")
	kc := byName(t, ps["containers"], "olm-cmp")
	if !reflect.DeepEqual(normalize(t, hc), normalize(t, kc)) {
		t.Errorf("Helm tenancy extraContainers[olm-cmp] differs from the kustomize example:\nhelm: %v\nkustomize: %v", hc, kc)
	}
	vols := dig(t, values, "repoServer", "volumes").([]any)
	for _, v := range vols {
		name := v.(map[string]any)["name"].(string)
		if kv := byName(t, ps["volumes"], name); !reflect.DeepEqual(normalize(t, v), normalize(t, kv)) {
			t.Errorf("Helm volume %s differs from kustomize: %v vs %v", name, v, kv)
		}
	}
	for _, m := range kc["volumeMounts"].([]any) {
		if name := m.(map[string]any)["name"].(string); name != "plugins" && byName(t, vols, name) == nil {
			t.Errorf("Helm tenancy values mount %s but define no volume", name)
		}
	}
	want, _ := os.ReadFile(tenancyFile)
	base := readHelmValues(t)
	objs := values["extraObjects"].([]any)
	found := false
	for _, o := range objs {
		om := o.(map[string]any)
		if dig(t, om, "metadata", "name") == "olm-cmp-tenancy" {
			found = om["data"].(map[string]any)["tenancy.yaml"] == string(want)
		}
	}
	if !found {
		t.Errorf("values-tenancy.yaml's ConfigMap olm-cmp-tenancy does not hold %s", tenancyFile)
	}
	if !reflect.DeepEqual(normalize(t, objs[:len(base["extraObjects"].([]any))]), normalize(t, base["extraObjects"])) {
		t.Error("values-tenancy.yaml's extraObjects do not begin with values.yaml's (Helm replaces the list)")
	}
}
