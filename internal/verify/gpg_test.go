package verify_test

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/olm-cmp/olm-cmp/internal/verify"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

// TestGPG: GPG simple signatures on a lookaside server verify with the
// scope's OpenPGP keys, and name the digest and repository.
func TestGPG(t *testing.T) {
	host := verifytest.NewRegistry(t, true)
	la := verifytest.NewLookaside(t)
	k := verifytest.NewGPGKey(t)
	other := verifytest.NewGPGKey(t)
	p := verifytest.Policy(t, verifytest.GPGScope(host, "enforce", la.URL, k))
	ctx := context.Background()
	cases := []struct {
		name string
		sig  func(repo, digest string) []byte
		want string
	}{
		{"signed", func(repo, digest string) []byte {
			return k.Sign(t, verifytest.AtomicSignature(host+"/"+repo+":v1", digest))
		}, ""},
		{"unsigned", nil, "no GPG signature on the lookaside server"},
		{"unknown key", func(repo, digest string) []byte {
			return other.Sign(t, verifytest.AtomicSignature(host+"/"+repo, digest))
		}, "is signed by GPG key " + other.ID + ", which the scope does not trust"},
		{"other digest", func(repo, digest string) []byte {
			return k.Sign(t, verifytest.AtomicSignature(host+"/"+repo, "sha256:"+strings.Repeat("0", 64)))
		}, "signed by gpg key gpg-1, but for another digest"},
		{"other repository", func(repo, digest string) []byte {
			return k.Sign(t, verifytest.AtomicSignature(host+"/elsewhere", digest))
		}, "signed by gpg key gpg-1, but for another repository"},
		{"not JSON", func(repo, digest string) []byte { return k.Sign(t, []byte("{{{")) }, "the payload is not a simple-signing JSON document"},
		{"not OpenPGP", func(repo, digest string) []byte { return []byte("<html>login</html>") }, "is not an OpenPGP signed message"},
		{"compression bomb (100 MB body in a small message)", func(repo, digest string) []byte {
			return k.SignCompressed(t, make([]byte, 1<<20), 100)
		}, "holds more than 1048576 bytes"},
		{"oversized signature (8 MiB)", func(repo, digest string) []byte { return make([]byte, 8<<20) }, "is more than 1048576 bytes"},
		{"tampered", func(repo, digest string) []byte {
			s := k.Sign(t, verifytest.AtomicSignature(host+"/"+repo, digest))
			i := strings.Index(string(s), "docker-manifest-digest")
			s[i] = 'D'
			return s
		}, "does not verify with key " + k.ID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			repo := "gpg/" + strings.ToLower(strings.Join(strings.FieldsFunc(c.name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }), "-"))
			digest := verifytest.PushImage(t, host, repo, "v1")
			if c.sig != nil {
				la.Add(repo, digest, c.sig(repo, digest))
			}
			start := time.Now()
			res, err := verify.New(p, verify.Options{}).Verify(ctx, host+"/"+repo, digest, false)
			if err != nil {
				t.Logf("HOSTILE | gpg: %s | %s | %s", c.name, time.Since(start).Round(time.Millisecond), err)
			}
			if c.want == "" {
				if err != nil || res.Signer != "gpg key gpg-1" || res.Format != verify.FormatGPG {
					t.Fatalf("got %+v, %v", res, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	// A second signature that verifies, after one that does not.
	repo := "gpg/second"
	digest := verifytest.PushImage(t, host, repo, "v1")
	la.Add(repo, digest, other.Sign(t, verifytest.AtomicSignature(host+"/"+repo, digest)))
	la.Add(repo, digest, k.Sign(t, verifytest.AtomicSignature(host+"/"+repo, digest)))
	if res, err := verify.New(p, verify.Options{}).Verify(ctx, host+"/"+repo, digest, false); err != nil || !res.Verified() {
		t.Fatalf("second signature: %+v, %v", res, err)
	}
}
