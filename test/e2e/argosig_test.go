package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// TestArgoCDSignatures is the argocd suite's signature case (Argo CD 3.6.1): the sidecar's
// olm-cmp-trust ConfigMap holds a trust policy that enforces signatures on every image (one key
// the test generates). Two Applications of the same small bundle: the image signed with that key (cosign's
// legacy sha256-<hex>.sig tag, as Red Hat signs) goes Synced + Healthy and every live object
// names its signer; the unsigned one gets a ComparisonError carrying the policy's one-line
// refusal (image, digest, scope, what was found, the fix) and nothing of it is applied.
func TestArgoCDSignatures(t *testing.T) {
	e := setup(t)
	bin := argoV3Bin()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	must(t, err)
	pub := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	policy := "apiVersion: olm-cmp.dev/v1alpha1\nkind: TrustPolicy\nscopes:\n" +
		"- match: \"*\"\n  mode: enforce\n  keys:\n  - name: e2e-key\n    pem: |\n      " +
		strings.ReplaceAll(strings.TrimSpace(string(pub)), "\n", "\n      ") + "\n"

	// The policy reaches the sidecar as users install theirs: the ConfigMap olm-cmp-trust,
	// which the shipped container mounts at /etc/olm-cmp/trust and names in --trust-policy.
	a := startArgoCD(t, e, bin, argoOptions{v3: true, configMaps: map[string]map[string]string{"olm-cmp-trust": {"trust.yaml": policy}}})
	// The suite's other Argo CD run (TestArgoCD) shares the cluster: leave it no Application
	// of ours to reconcile (they have no finalizer: their objects stay, in their own namespace).
	t.Cleanup(func() {
		_, _ = kubectl(t, "-n", "argocd", "delete", "application", "sig-signed", "sig-unsigned", "--ignore-not-found", "--wait=false")
	})
	tiny := filepath.Join(e.repo, "internal", "cmpserver", "testdata", "repo", "bundles", "tiny")
	signed, unsigned := a.reg+"/sig/tiny-signed", a.reg+"/sig/tiny-unsigned"
	pushBundle(t, tiny, signed+":v1", nil)
	pushBundle(t, tiny, unsigned+":v1", nil)
	signedDigest, err := crane.Digest(signed + ":v1")
	must(t, err)
	unsignedDigest, err := crane.Digest(unsigned + ":v1")
	must(t, err)
	signTag(t, signed, signedDigest, key)

	for name, ref := range map[string]string{"sig-signed": signed, "sig-unsigned": unsigned} {
		dir := filepath.Join(a.git, "signatures", name)
		must(t, os.MkdirAll(dir, 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), []byte(fmt.Sprintf(
			"apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: %s\n  version: v1\n  namespace: %s\n", ref, name)), 0o644))
	}
	rev := a.commit("signed and unsigned bundles")
	start := time.Now()
	a.application("sig-signed", "", "signatures/sig-signed", "sig-signed")
	a.application("sig-unsigned", "", "signatures/sig-unsigned", "sig-unsigned")

	waitApp(t, "sig-signed", rev, 6*time.Minute)
	t.Logf("sig-signed: Synced + Healthy in %v", time.Since(start).Round(time.Second))
	ann := strings.TrimSpace(string(mustKubectl(t, "-n", "sig-signed", "get", "deploy", "-o", `jsonpath={.items[*].metadata.annotations.olm-cmp\.dev/signature}`)))
	if ann != "key e2e-key" {
		t.Errorf("live Deployment's olm-cmp.dev/signature = %q, want \"key e2e-key\"", ann)
	}

	want := []string{"signature check refused " + unsigned + "@" + unsignedDigest, "no signature found", "fix: sign the image by digest"}
	msg := waitComparisonError(t, "sig-unsigned", want)
	t.Logf("sig-unsigned: ComparisonError: %s", msg)
	// Nothing of the unsigned bundle reached the cluster: no sync was attempted, its namespace
	// (the render's first object) does not exist, no live object names its image.
	st := appStatus(t, "sig-unsigned")
	if st.Status.OperationState.Phase != "" || len(st.Status.History) != 0 {
		t.Errorf("sig-unsigned was synced: operation %q, %d history entries", st.Status.OperationState.Phase, len(st.Status.History))
	}
	if out, err := kubectl(t, "get", "namespace", "sig-unsigned"); err == nil {
		t.Errorf("namespace sig-unsigned exists: %s", out)
	}
	if all := mustKubectl(t, "get", "deploy,crd,sa,clusterrole,clusterrolebinding", "-A", "-o", "jsonpath={.items[*].metadata.annotations.olm-cmp\\.dev/source}"); strings.Contains(string(all), unsigned) {
		t.Errorf("objects of %s were applied", unsigned)
	}
}

// signTag signs repo@digest as `cosign sign --key` does in its legacy format: a
// sha256-<hex>.sig manifest whose one layer is the simple-signing payload, its ECDSA
// signature (ASN.1, base64) in the layer's dev.cosignproject.cosign/signature annotation.
func signTag(t *testing.T, repo, digest string, key *ecdsa.PrivateKey) {
	t.Helper()
	payload, err := json.Marshal(map[string]any{
		"critical": map[string]any{
			"identity": map[string]string{"docker-reference": repo},
			"image":    map[string]string{"docker-manifest-digest": digest},
			"type":     "cosign container image signature",
		},
		"optional": nil,
	})
	must(t, err)
	sum := sha256.Sum256(payload)
	sig, err := ecdsa.SignASN1(rand.Reader, key, sum[:])
	must(t, err)
	img, err := mutate.Append(mutate.MediaType(empty.Image, types.OCIManifestSchema1), mutate.Addendum{
		Layer:       static.NewLayer(payload, "application/vnd.dev.cosign.simplesigning.v1+json"),
		Annotations: map[string]string{"dev.cosignproject.cosign/signature": base64.StdEncoding.EncodeToString(sig)},
	})
	must(t, err)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	must(t, crane.Push(img, repo+":"+strings.Replace(digest, ":", "-", 1)+".sig"))
}
