package verify_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/verify"
	"github.com/olm-cmp/olm-cmp/internal/verify/bundlejob"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

// TestForeignSignerRefused: an olm-cmp-check that answers "verified" with
// a signer the scope does not name (a stale build, or another program on
// PATH: a breaker's fake answered "key trusted" for a bundle signed by an
// untrusted key) never makes an image verified.
func TestForeignSignerRefused(t *testing.T) {
	host := verifytest.NewRegistry(t, true)
	trusted := verifytest.NewKey(t, verifytest.ECDSA)
	other := verifytest.NewKey(t, verifytest.ECDSA)
	for _, signer := range []string{"key trusted", "key ", "identity someone@example.com (https://issuer.example)", "anything"} {
		t.Run(signer, func(t *testing.T) {
			repo := "foreign/" + strings.NewReplacer(" ", "-", "@", "-", "(", "", ")", "", ":", "", "/", "").Replace(signer)
			digest := verifytest.PushImage(t, host, repo, "v1")
			verifytest.SignBundle(t, host, repo, digest, other)
			restore := checkproc.AnswerInProcess(map[string]checkproc.Handler{
				bundlejob.Op: func(context.Context, json.RawMessage) (any, error) {
					return bundlejob.Output{Signer: signer, Statement: &bundlejob.Statement{PredicateType: verify.PredicateSign,
						Subjects: []bundlejob.Subject{{SHA256: strings.TrimPrefix(digest, "sha256:")}}}}, nil
				},
			})
			defer restore()
			p := verifytest.Policy(t, verifytest.Scope(host, "enforce", trusted))
			res, err := verify.New(p, verify.Options{}).Verify(context.Background(), host+"/"+repo, digest, false)
			if err == nil || res.Verified() {
				t.Fatalf("a foreign answer verified the image: %+v, %v", res, err)
			}
			if !strings.Contains(err.Error(), "which the scope names neither as a key nor as an identity") {
				t.Fatalf("the line does not say why: %v", err)
			}
		})
	}
}
