package verify_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/checks/inprocess"
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

// BenchmarkVerifyBundleHelper is BenchmarkVerify's bundle/cold through
// olm-cmp-check, the real executable (built here), as olm-cmp runs it: one
// process per bundle checked. Run it alone (-run '^$'): where the helper is
// found is decided once per process.
func BenchmarkVerifyBundleHelper(b *testing.B) {
	if _, err := exec.LookPath("go"); err != nil {
		b.Skip("no go command to build olm-cmp-check with")
	}
	dir := b.TempDir()
	exe := filepath.Join(dir, checkproc.Executable)
	if out, err := exec.Command("go", "build", "-o", exe, "github.com/olm-cmp/olm-cmp/cmd/olm-cmp-check").CombinedOutput(); err != nil {
		b.Fatalf("go build ./cmd/olm-cmp-check: %v\n%s", err, out)
	}
	b.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if p, err := checkproc.Path(); p != exe {
		b.Skipf("olm-cmp-check was located before this benchmark (%s, %v): run it alone with -run '^$'", p, err)
	}
	if answerOutOfProcess != nil {
		answerOutOfProcess()
		defer inprocess.Install()
	}

	host := verifytest.NewRegistry(b, true)
	ctx := context.Background()
	repo := "bench/helper"
	digest := verifytest.PushImage(b, host, repo, "v1")
	k := verifytest.NewKey(b, verifytest.ECDSA)
	verifytest.SignBundle(b, host, repo, digest, k)
	p := verifytest.Policy(b, verifytest.Scope(host, "enforce", k))
	for b.Loop() {
		if _, err := verify.New(p, verify.Options{}).Verify(ctx, host+"/"+repo, digest, false); err != nil {
			b.Fatal(err)
		}
	}
}
