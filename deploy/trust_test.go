package deploy_test

import (
	"crypto/rsa"
	"os"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/trust"
)

const trustDir = "kustomize/components/olm-cmp/trust/"

// redHatRelease3 is the SHA-256 of Red Hat release key 3's DER form. Its
// last 16 hex digits are the key ID Red Hat publishes, E60D446E63405576
// (docs/signatures.md, "Red Hat preset").
const redHatRelease3 = "sha256:ba9d26350d78893a20f337e2153a113108bfcf064085afaee60d446e63405576"

// TestTrustPreset: the Red Hat preset loads, trusts release key 3 (RSA-4096,
// the published key ID) for registry.redhat.io in warn mode, and leaves the
// ISV-signed catalog indexes off.
func TestTrustPreset(t *testing.T) {
	p, err := trust.Load(trustDir + "trust.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, repo := range []string{"registry.redhat.io/openshift4/ose-cluster-logging-operator-bundle", "registry.access.redhat.com/ubi9/ubi"} {
		s := p.Lookup(repo)
		if s == nil || s.Mode != trust.Warn || len(s.Keys) != 1 {
			t.Fatalf("%s: scope %+v", repo, s)
		}
		k := s.Keys[0]
		if k.Name != "redhat-release3" || k.Fingerprint != redHatRelease3 || !strings.HasSuffix(k.Fingerprint, strings.ToLower("E60D446E63405576")) {
			t.Errorf("%s: key %s %s", repo, k.Name, k.Fingerprint)
		}
		if rk, ok := k.Public.(*rsa.PublicKey); !ok || rk.N.BitLen() != 4096 {
			t.Errorf("release key 3 is RSA-4096, got %T", k.Public)
		}
	}
	if s := p.Lookup("registry.redhat.io/redhat/certified-operator-index"); s == nil || s.Mode != trust.Off {
		t.Errorf("certified index: %+v", s)
	}
	if s := p.Lookup("quay.io/operatorhubio/catalog"); s != nil {
		t.Errorf("quay.io covered by %+v", s)
	}
}

// TestTrustMounted: both deployments mount the same policy files at the
// path --trust-policy names.
func TestTrustMounted(t *testing.T) {
	var cmData map[string]any
	for _, r := range renderExample(t, "argocd").Resources() {
		if r.GetKind() == "ConfigMap" && r.GetName() == "olm-cmp-trust" {
			m, err := r.Map()
			if err != nil {
				t.Fatal(err)
			}
			cmData = m["data"].(map[string]any)
			if ns := r.GetNamespace(); ns != "argocd" {
				t.Errorf("ConfigMap olm-cmp-trust in namespace %q, want argocd", ns)
			}
		}
	}
	if cmData == nil {
		t.Fatal("the kustomize example has no ConfigMap olm-cmp-trust")
	}
	values := readHelmValues(t)
	var helmData map[string]any
	for _, o := range values["extraObjects"].([]any) {
		om := o.(map[string]any)
		if om["kind"] == "ConfigMap" && dig(t, om, "metadata", "name") == "olm-cmp-trust" {
			helmData = om["data"].(map[string]any)
		}
	}
	for _, f := range []string{"trust.yaml", "redhat-release3.pub"} {
		want, err := os.ReadFile(trustDir + f)
		if err != nil {
			t.Fatal(err)
		}
		if cmData[f] != string(want) {
			t.Errorf("kustomize ConfigMap %s differs from %s", f, trustDir+f)
		}
		if helmData[f] != string(want) {
			t.Errorf("Helm extraObjects ConfigMap %s differs from %s: copy the file into deploy/helm/values.yaml", f, trustDir+f)
		}
	}
	ps := podSpec(t, buildExample(t, "argocd"))
	c := byName(t, ps["containers"], "olm-cmp")
	if !strings.Contains(strings.Join(toStrings(c["args"]), " "), "--trust-policy=/etc/olm-cmp/trust/trust.yaml") {
		t.Errorf("args lack --trust-policy: %v", c["args"])
	}
	if m := mounts(c)["/etc/olm-cmp/trust"]; m == nil || m["name"] != "olm-cmp-trust" {
		t.Errorf("trust mount: %v", m)
	}
	// The kustomize volume references the generated ConfigMap by its name:
	// no hash suffix, the name the Helm values' ConfigMap has too.
	if v := byName(t, ps["volumes"], "olm-cmp-trust"); v == nil || dig(t, v, "configMap", "name") != "olm-cmp-trust" {
		t.Errorf("trust volume: %v", v)
	}
}
