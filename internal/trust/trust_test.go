package trust_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/trust"
)

func pubPEM(t *testing.T, pub any) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

func ecKey(t *testing.T) string {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return pubPEM(t, &k.PublicKey)
}

func indent(s string) string {
	return "      " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n      ") + "\n"
}

func TestParseKeysAndLookup(t *testing.T) {
	dir := t.TempDir()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	_, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	if err := os.WriteFile(filepath.Join(dir, "rsa.pub"), []byte(pubPEM(t, &rk.PublicKey)), 0o644); err != nil {
		t.Fatal(err)
	}
	text := `apiVersion: olm-cmp.dev/v1alpha1
kind: TrustPolicy
scopes:
- match: registry.redhat.io
  mode: enforce
  keys:
  - name: release
    file: rsa.pub
- match: mirror.example.com/redhat
  mode: warn
  signedAs: registry.redhat.io
  keys:
  - pem: |
` + indent(ecKey(t)) + `  - name: ed
    pem: |
` + indent(pubPEM(t, edPriv.Public())) + `- match: docker.io/library
  mode: "off"
- match: "*"
  mode: warn
`
	path := filepath.Join(dir, "trust.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := trust.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Scopes) != 4 {
		t.Fatalf("%d scopes", len(p.Scopes))
	}
	cases := map[string]string{
		"registry.redhat.io/ubi9/ubi":                                "registry.redhat.io",
		"registry.redhat.io.evil.com/ubi9/ubi":                       "*",
		"mirror.example.com/redhat/openshift/foo":                    "mirror.example.com/redhat",
		"mirror.example.com/redhatish/foo":                           "*",
		"busybox":                                                    "index.docker.io/library",
		"docker.io/library/alpine@sha256:" + strings.Repeat("a", 64): "index.docker.io/library",
		"quay.io/x/y":                                                "*",
	}
	for repo, want := range cases {
		if s := p.Lookup(repo); s == nil || s.Match != want {
			t.Errorf("Lookup(%s) = %+v, want %s", repo, s, want)
		}
	}
	m := p.Lookup("mirror.example.com/redhat/openshift/foo")
	if got := m.SignedName("mirror.example.com/redhat/openshift/foo"); got != "registry.redhat.io/openshift/foo" {
		t.Errorf("SignedName = %s", got)
	}
	if m.Keys[0].Name != m.Keys[0].Fingerprint || !strings.HasPrefix(m.Keys[0].Name, "sha256:") {
		t.Errorf("unnamed key named %q", m.Keys[0].Name)
	}
	if p.Lookup("registry.redhat.io/x").Keys[0].Name != "release" {
		t.Error("file key not loaded")
	}
	var nilp *trust.Policy
	if nilp.Hash() != "" || nilp.Lookup("x/y") != nil {
		t.Error("nil policy")
	}

	// The hash ignores layout and comments, and follows the keys.
	again, err := trust.Parse([]byte("# comment\n"+strings.ReplaceAll(text, "mode: enforce", "mode:   enforce  # strict")), path)
	if err != nil {
		t.Fatal(err)
	}
	if again.Hash() != p.Hash() || p.Hash() == "" {
		t.Errorf("hash changed with layout: %s vs %s", again.Hash(), p.Hash())
	}
	rk2, _ := rsa.GenerateKey(rand.Reader, 2048)
	if err := os.WriteFile(filepath.Join(dir, "rsa.pub"), []byte(pubPEM(t, &rk2.PublicKey)), 0o644); err != nil {
		t.Fatal(err)
	}
	rotated, err := trust.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.Hash() == p.Hash() {
		t.Error("hash did not change with the key file's contents")
	}
	warned, _ := trust.Parse([]byte(strings.Replace(text, "mode: enforce", "mode: warn", 1)), path)
	if warned.Hash() == p.Hash() {
		t.Error("hash did not change with a mode")
	}
}

func TestParseErrors(t *testing.T) {
	key := ecKey(t)
	head := "apiVersion: olm-cmp.dev/v1alpha1\nkind: TrustPolicy\nscopes:\n"
	good := "- match: quay.io/x\n  mode: enforce\n  keys:\n  - pem: |\n" + indent(key)
	priv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	privDER, _ := x509.MarshalECPrivateKey(priv)
	privPEM := string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: privDER}))
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	cases := []struct{ name, text, want string }{
		{"empty", "", "the file is empty"},
		{"kind", "apiVersion: olm-cmp.dev/v1alpha1\nkind: Policy\nscopes: []\n", `line 2: kind: "Policy" is not known: write TrustPolicy`},
		{"typo", head + "- match: quay.io/x\n  mdoe: warn\n  mode: warn\n", `line 5: unknown field "scopes[0].mdoe": did you mean "mode"?`},
		{"mode", head + "- match: quay.io/x\n  mode: strict\n", `line 5: scopes[0].mode: expected enforce, warn or off, got "strict"`},
		{"match", head + "- match: Quay.io/X Y\n  mode: warn\n", "line 4: scopes[0].match:"},
		{"missing mode", head + "- match: quay.io/x\n", "scopes[0].mode: is required"},
		{"bad pem", head + "- match: quay.io/x\n  mode: warn\n  keys:\n  - pem: not a key\n", "line 7: scopes[0].keys[0].pem: not a PEM public key"},
		{"private key", head + "- match: quay.io/x\n  mode: warn\n  keys:\n  - pem: |\n" + indent(privPEM), "is not a public key (expected PUBLIC KEY; never put a private key in the policy)"},
		{"small rsa", head + "- match: quay.io/x\n  mode: warn\n  keys:\n  - pem: |\n" + indent(pubPEM(t, &small.PublicKey)), "RSA key of 1024 bits"},
		{"missing file", head + "- match: quay.io/x\n  mode: warn\n  keys:\n  - file: nope.pub\n", `scopes[0].keys[0].file: "nope.pub": file does not exist`},
		{"both", head + "- match: quay.io/x\n  mode: warn\n  keys:\n  - file: a\n    pem: b\n", "set pem or file, not both"},
		{"duplicate", head + good + strings.Replace(good, "quay.io/x", "quay.io/x/", 1), `is also the match of the scope at line 4: merge them`},
		{"enforce without keys", head + "- match: quay.io/x\n  mode: enforce\n", "mode enforce without keys or keyless identities would refuse every image"},
		{"twice", head + "- match: quay.io/x\n  match: quay.io/y\n  mode: warn\n", "scopes[0].match: set twice"},
		{"keyless root", head + "- match: quay.io/x\n  mode: warn\n  keyless:\n    trustedRoot: root.json\n    identities:\n    - issuer: https://accounts.example.com\n      subject: me@example.com\n", `"root.json": file does not exist`},
		{"regexp", head + "- match: quay.io/x\n  mode: warn\n  keyless:\n    identities:\n    - issuer: https://i\n      subjectRegexp: \"(\"\n", "is not a regular expression"},
		{"gpg lookaside", head + "- match: quay.io/x\n  mode: warn\n  gpg:\n    lookaside: ftp://x\n    keys:\n    - armored: x\n", `line 7: scopes[0].gpg.lookaside: "ftp://x" is not an http(s) URL`},
		{"gpg key", head + "- match: quay.io/x\n  mode: warn\n  gpg:\n    lookaside: https://x/sigstore\n    keys:\n    - armored: not a key\n", "line 9: scopes[0].gpg.keys[0].armored: not an ASCII-armored OpenPGP public key"},
		{"gpg missing keys", head + "- match: quay.io/x\n  mode: warn\n  gpg:\n    lookaside: https://x/sigstore\n", "scopes[0].gpg.keys: is required"},
		{"aliases", head + "- &a [*a]\n", "trust policy"},
		{"two documents", head + good + "---\nkind: TrustPolicy\n", "a second YAML document"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := trust.Parse([]byte(c.text), "/etc/olm-cmp/trust.yaml")
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "trust policy trust.yaml: ") || strings.Contains(msg, "/etc/") || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
				t.Fatalf("got %q, want one line with %q", msg, c.want)
			}
		})
	}
	if _, err := trust.Parse([]byte(head+good), "p.yaml"); err != nil {
		t.Fatalf("good policy: %v", err)
	}
}

func TestLoadBounds(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, trust.MaxPolicyBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := trust.Load(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("got %v", err)
	}
	if _, err := trust.Load(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("directory: got %v", err)
	}
}
