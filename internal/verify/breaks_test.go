package verify_test

import (
	"context"
	"net"
	"strings"
	"testing"

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
