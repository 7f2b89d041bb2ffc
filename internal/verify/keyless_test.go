package verify_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/olm-cmp/olm-cmp/internal/trust"
	"github.com/olm-cmp/olm-cmp/internal/verify"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

// leafKeypair signs with a Fulcio-style leaf certificate's key.
type leafKeypair struct{ priv *ecdsa.PrivateKey }

func (k leafKeypair) GetHashAlgorithm() protocommon.HashAlgorithm {
	return protocommon.HashAlgorithm_SHA2_256
}
func (k leafKeypair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return protocommon.PublicKeyDetails_PKIX_ECDSA_P256_SHA_256
}
func (k leafKeypair) GetHint() []byte                  { return nil }
func (k leafKeypair) GetKeyAlgorithm() string          { return "ECDSA" }
func (k leafKeypair) GetPublicKey() crypto.PublicKey   { return &k.priv.PublicKey }
func (k leafKeypair) GetPublicKeyPem() (string, error) { return pubPEM(&k.priv.PublicKey) }
func (k leafKeypair) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	h := sha256.Sum256(data)
	sig, err := ecdsa.SignASN1(rand.Reader, k.priv, h[:])
	return sig, h[:], err
}

func pubPEM(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), err
}

type leafCert struct{ der []byte }

func (c leafCert) GetCertificate(context.Context, sign.Keypair, *sign.CertificateProviderOptions) ([]byte, error) {
	return c.der, nil
}

// TestKeyless: a bundle whose certificate a (virtual) Fulcio issued to an
// identity verifies against a trusted root holding that Fulcio, for the
// identities the scope accepts only.
func TestKeyless(t *testing.T) {
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	const issuer = "https://token.actions.githubusercontent.com"
	const subject = "https://github.com/myorg/widget/.github/workflows/release.yaml@refs/tags/v1.2.3"
	cert, priv, err := vs.GenerateLeafCert(subject, issuer)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, vs.FulcioCertificateAuthorities(), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	trJSON, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "trusted_root.json"), trJSON, 0o644); err != nil {
		t.Fatal(err)
	}

	host := verifytest.NewRegistry(t, true)
	repo := "keyless/widget"
	digest := verifytest.PushImage(t, host, repo, "v1")
	pb, err := sign.Bundle(&sign.DSSEData{Data: verifytest.Statement(host+"/"+repo, digest, ""), PayloadType: "application/vnd.in-toto+json"},
		leafKeypair{priv.(*ecdsa.PrivateKey)}, sign.BundleOptions{CertificateProvider: leafCert{cert.Raw}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := protojson.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	verifytest.PushReferrer(t, host, repo, digest, verifytest.BundleMediaType, raw)

	policy := func(identity string) *trust.Policy {
		text := verifytest.PolicyText("- match: " + host + "\n  mode: enforce\n  keyless:\n    trustedRoot: trusted_root.json\n    identities:\n" + identity)
		p, err := trust.Parse([]byte(text), filepath.Join(dir, "trust.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct{ name, identity, want string }{
		{"subject", "    - issuer: " + issuer + "\n      subject: " + subject + "\n", ""},
		{"regexp", "    - issuer: " + issuer + "\n      subjectRegexp: https://github\\.com/myorg/.+@refs/tags/v.+\n", ""},
		{"other subject", "    - issuer: " + issuer + "\n      subject: https://github.com/evil/x/.github/workflows/r.yaml@refs/heads/main\n", "signed keyless by \"" + subject + "\" (issuer \"" + issuer + "\"), an identity the scope does not accept"},
		{"other issuer", "    - issuer: https://accounts.google.com\n      subject: " + subject + "\n", "signed keyless by \"" + subject + "\" (issuer \"" + issuer + "\"), an identity the scope does not accept"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := verify.New(policy(c.identity), verify.Options{}).Verify(context.Background(), host+"/"+repo, digest, false)
			if c.want == "" {
				if err != nil || res.Signer != "identity "+subject+" ("+issuer+")" || res.Format != verify.FormatBundle {
					t.Fatalf("got %+v, %v", res, err)
				}
				return
			}
			t.Logf("%s: %v", c.name, err)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}

	// A key-based scope does not accept a keyless signature, and the other
	// way round.
	k := verifytest.NewKey(t, verifytest.ECDSA)
	v := verify.New(verifytest.Policy(t, verifytest.Scope(host, "enforce", k)), verify.Options{})
	if _, err := v.Verify(context.Background(), host+"/"+repo, digest, false); err == nil || !strings.Contains(err.Error(), "the scope has no keyless trusted root and identities") {
		t.Fatalf("key scope: %v", err)
	}
}
