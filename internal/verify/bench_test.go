package verify_test

import (
	"context"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/verify"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

// BenchmarkVerify measures one verification against the in-process
// registry: cold (a new Verifier: registry round trips and the signature
// check) and cached (the verdict cache), for each format. An RSA key, as
// Red Hat's, for the legacy tag; ECDSA P-256, cosign's default, for bundles.
func BenchmarkVerify(b *testing.B) {
	host := verifytest.NewRegistry(b, true)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		alg  verifytest.Algorithm
		sign func(b *testing.B, repo, digest string, k *verifytest.Key)
	}{
		{"bundle", verifytest.ECDSA, func(b *testing.B, repo, digest string, k *verifytest.Key) {
			verifytest.SignBundle(b, host, repo, digest, k)
		}},
		{"tag", verifytest.RSA, func(b *testing.B, repo, digest string, k *verifytest.Key) {
			verifytest.SignTag(b, host, repo, digest, k)
		}},
	} {
		repo := "bench/" + c.name
		digest := verifytest.PushImage(b, host, repo, "v1")
		k := verifytest.NewKey(b, c.alg)
		c.sign(b, repo, digest, k)
		p := verifytest.Policy(b, verifytest.Scope(host, "enforce", k))
		b.Run(c.name+"/cold", func(b *testing.B) {
			for b.Loop() {
				if _, err := verify.New(p, verify.Options{}).Verify(ctx, host+"/"+repo, digest, false); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/cached", func(b *testing.B) {
			v := verify.New(p, verify.Options{})
			if _, err := v.Verify(ctx, host+"/"+repo, digest, false); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if res, err := v.Verify(ctx, host+"/"+repo, digest, false); err != nil || !res.Cached {
					b.Fatal(res, err)
				}
			}
		})
	}
}
