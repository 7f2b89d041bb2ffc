package verify_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/olm-cmp/olm-cmp/internal/verify"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

// A lookaside URL carrying credentials (a private server) never shows them
// in a refusal, which reaches Argo CD's UI: neither in the fix nor in a
// connection error.
func TestLookasideCredentialsNotEchoed(t *testing.T) {
	host := verifytest.NewRegistry(t, true)
	g := verifytest.NewGPGKey(t)
	d := verifytest.PushImage(t, host, "ops/a", "v1")
	la := verifytest.NewLookaside(t)
	// A port nothing listens on: the request fails to connect.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String() + "/sigstore"
	l.Close()
	for _, base := range []string{la.URL, dead} {
		for _, cred := range []string{"admin:s3cr3tT0ken@", "ghpT0kenUser@"} {
			u := strings.Replace(base, "http://", "http://"+cred, 1)
			p := verifytest.Policy(t, verifytest.GPGScope(host, "enforce", u, g))
			_, err := verify.New(p, verify.Options{}).Verify(context.Background(), host+"/ops/a", d, false)
			if err == nil {
				t.Fatal("an unsigned image verified")
			}
			if msg := err.Error(); strings.Contains(msg, "T0ken") {
				t.Errorf("credentials in the refusal: %s", msg)
			}
		}
	}
}

func armoredPublic(t *testing.T, e *openpgp.Entity) string {
	t.Helper()
	var b bytes.Buffer
	w, err := armor.Encode(&b, openpgp.PublicKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Serialize(w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return b.String() + "\n"
}

func gpgSign(t *testing.T, e *openpgp.Entity, cfg *packet.Config, payload []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := openpgp.Sign(&b, e, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(payload)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gpgEnforce(match, lookaside, armored string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- match: %q\n  mode: enforce\n  gpg:\n    lookaside: %s\n    keys:\n    - name: k\n      armored: |\n", match, lookaside)
	for _, l := range strings.Split(strings.TrimRight(armored, "\n"), "\n") {
		b.WriteString("        " + l + "\n")
	}
	return b.String()
}

// A GPG signature by an expired or revoked key is refused, and says why
// (it said "damaged or forged: sign again", which signing again with that
// key would not fix); one by a signing subkey verifies.
func TestGPGExpiredRevokedSubkey(t *testing.T) {
	host := verifytest.NewRegistry(t, true)
	la := verifytest.NewLookaside(t)
	ctx := context.Background()

	past := time.Now().Add(-48 * time.Hour)
	cfg := &packet.Config{Time: func() time.Time { return past }, KeyLifetimeSecs: 3600}
	expired, err := openpgp.NewEntity("expired", "", "e@example.com", cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := verifytest.PushImage(t, host, "ops/a", "v1")
	la.Add("ops/a", d, gpgSign(t, expired, cfg, verifytest.AtomicSignature(host+"/ops/a", d)))
	_, err = verify.New(verifytest.Policy(t, gpgEnforce(host, la.URL, armoredPublic(t, expired))), verify.Options{}).Verify(ctx, host+"/ops/a", d, false)
	if want := fmt.Sprintf("the GPG signature 1 on the lookaside server is signed by GPG key %016X, which has expired; fix: sign with a current key", expired.PrimaryKey.KeyId); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("expired key: got %v, want %q", err, want)
	}

	revoked, _ := openpgp.NewEntity("revoked", "", "r@example.com", nil)
	d = verifytest.PushImage(t, host, "ops/b", "v1")
	la.Add("ops/b", d, gpgSign(t, revoked, nil, verifytest.AtomicSignature(host+"/ops/b", d)))
	if err := revoked.RevokeKey(packet.KeyCompromised, "stolen", nil); err != nil {
		t.Fatal(err)
	}
	_, err = verify.New(verifytest.Policy(t, gpgEnforce(host, la.URL, armoredPublic(t, revoked))), verify.Options{}).Verify(ctx, host+"/ops/b", d, false)
	if want := fmt.Sprintf("is signed by GPG key %016X, which is revoked; fix: the key must not be trusted any longer", revoked.PrimaryKey.KeyId); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("revoked key: got %v, want %q", err, want)
	}

	sub, _ := openpgp.NewEntity("sub", "", "s@example.com", nil)
	if err := sub.AddSigningSubkey(nil); err != nil {
		t.Fatal(err)
	}
	d = verifytest.PushImage(t, host, "ops/c", "v1")
	la.Add("ops/c", d, gpgSign(t, sub, nil, verifytest.AtomicSignature(host+"/ops/c", d)))
	res, err := verify.New(verifytest.Policy(t, gpgEnforce(host, la.URL, armoredPublic(t, sub))), verify.Options{}).Verify(ctx, host+"/ops/c", d, false)
	if err != nil || res.Signer != "gpg key k" {
		t.Errorf("signing subkey: got %q, %v", res.Signer, err)
	}
}
