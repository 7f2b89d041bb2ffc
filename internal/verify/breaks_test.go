package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
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

// A referrers list of thousands of entries (half claiming the bundle type
// with a control character appended, half the empty config type, all
// dangling, and the image itself last) costs a bounded number of reads,
// is refused with the registry's cause (not a URL that used up the quoted
// words) and does not hide a good legacy signature.
func TestManyDanglingReferrers(t *testing.T) {
	k := verifytest.NewKey(t, verifytest.ECDSA)
	var subject string
	var reads atomic.Int64
	host := verifytest.NewFaultyRegistry(t, true, func(w http.ResponseWriter, r *http.Request) bool {
		if strings.Contains(r.URL.Path, "/manifests/sha256:00000000") {
			reads.Add(1)
		}
		if !strings.Contains(r.URL.Path, "/referrers/") {
			return false
		}
		var ms []map[string]any
		for i := range 5000 {
			at := "application/vnd.oci.empty.v1+json"
			if i%2 == 0 {
				at = "application/vnd.dev.sigstore.bundle.v0.3+json\x1b[31m"
			}
			ms = append(ms, map[string]any{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": fmt.Sprintf("sha256:%064x", i+1), "size": 500, "artifactType": at})
		}
		ms = append(ms, map[string]any{"mediaType": "application/vnd.oci.image.index.v1+json", "digest": subject, "size": 500, "artifactType": "application/vnd.dev.sigstore.bundle.v0.3+json"})
		b, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": ms})
		w.Header().Set("Content-Type", "application/vnd.oci.image.index.v1+json")
		w.Write(b)
		return true
	})
	d := verifytest.PushImage(t, host, "ops/a", "v1")
	subject = d
	v := verify.New(verifytest.Policy(t, verifytest.Scope(host, "enforce", k)), verify.Options{})
	_, err := v.Verify(context.Background(), host+"/ops/a", d, false)
	want := "the registry failed while reading the Sigstore bundle referrer sha256:" + fmt.Sprintf("%064x", 1) + ": HTTP 404 MANIFEST_UNKNOWN"
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "GET http") || strings.ContainsAny(err.Error(), "\x1b\n") {
		t.Errorf("got %v, want one line with %q", err, want)
	}
	if n := reads.Load(); n > int64(verify.DefaultLimits.MaxCandidates) {
		t.Errorf("%d referrers read, more than %d", n, verify.DefaultLimits.MaxCandidates)
	}
	verifytest.SignTag(t, host, "ops/a", d, k)
	if res, err := v.Verify(context.Background(), host+"/ops/a", d, false); err != nil || res.Signer != "key "+k.Name {
		t.Errorf("signed: got %q, %v", res.Signer, err)
	}
}
