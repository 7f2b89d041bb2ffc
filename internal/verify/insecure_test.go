package verify_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/olm-cmp/olm-cmp/internal/verify"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

// TestInsecureRegistryByName: a plain-HTTP registry reached by a DNS name
// (not loopback, which go-containerregistry reaches over HTTP anyway) is
// verified over HTTP only when Options.Insecure lists it, as pulls are
// (--insecure-registry); otherwise verification tries HTTPS and fails.
func TestInsecureRegistryByName(t *testing.T) {
	host := verifytest.NewRegistry(t, true) // 127.0.0.1:PORT, plain HTTP
	_, port, _ := net.SplitHostPort(host)
	named := "mirror.example.test:" + port
	digest := verifytest.PushImage(t, host, "ops/app", "v1")
	k := verifytest.NewKey(t, verifytest.ECDSA)
	verifytest.SignTag(t, host, "ops/app", digest, k, verifytest.Options{Ref: named + "/ops/app"})

	// Every name dials the test registry: the name is what is verified.
	dial := &net.Dialer{}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return dial.DialContext(ctx, network, host)
	}}
	p := verifytest.Policy(t, verifytest.Scope(named, "enforce", k))

	plain := verify.New(p, verify.Options{Remote: []remote.Option{remote.WithTransport(tr)}})
	if _, err := plain.Verify(context.Background(), named+"/ops/app", digest, false); err == nil {
		t.Fatal("verified over plain HTTP a registry not listed as insecure")
	}
	listed := verify.New(p, verify.Options{
		Remote:   []remote.Option{remote.WithTransport(tr)},
		Insecure: func(r string) bool { return r == named },
	})
	res, err := listed.Verify(context.Background(), named+"/ops/app", digest, false)
	if err != nil {
		t.Fatalf("insecure registry listed: %v", err)
	}
	if res.Signer == "" || !strings.Contains(res.Annotation(), res.Signer) {
		t.Fatalf("not verified: %+v", res)
	}
}
