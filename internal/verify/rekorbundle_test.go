package verify_test

import (
	"context"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/verify"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

// A Sigstore bundle with a transparency-log entry (its signed entry
// timestamp, and an inclusion proof under a checkpoint the log signed)
// verifies under a scope with that log's Rekor key, offline; the same
// bundle under another log's key, and one without an entry, do not.
func TestRekorBundleVerifies(t *testing.T) {
	host := verifytest.NewRegistry(t, true)
	k := verifytest.NewKey(t, verifytest.ECDSA)
	rk := verifytest.NewRekor(t)
	logged := verifytest.PushImage(t, host, "ops/logged", "v1")
	verifytest.SignBundleRekor(t, host, "ops/logged", logged, k, rk)
	unlogged := verifytest.PushImage(t, host, "ops/unlogged", "v1")
	verifytest.SignBundle(t, host, "ops/unlogged", unlogged, k)

	v := verify.New(verifytest.Policy(t, verifytest.WithRekor(verifytest.Scope(host, "enforce", k), rk)), verify.Options{})
	res, err := v.Verify(context.Background(), host+"/ops/logged", logged, false)
	if err != nil || res.Signer != "key "+k.Name || res.Format != verify.FormatBundle {
		t.Fatalf("logged bundle: got %+v, %v", res, err)
	}
	_, err = v.Verify(context.Background(), host+"/ops/unlogged", unlogged, false)
	if want := "a Sigstore bundle has no transparency-log entry, which the scope's Rekor key requires"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("unlogged bundle: got %v, want %q", err, want)
	}

	other := verify.New(verifytest.Policy(t, verifytest.WithRekor(verifytest.Scope(host, "enforce", k), verifytest.NewRekor(t))), verify.Options{})
	_, err = other.Verify(context.Background(), host+"/ops/logged", logged, false)
	if err == nil || !strings.Contains(err.Error(), "transparency-log entry does not verify") {
		t.Errorf("another log's key: got %v", err)
	}
	t.Logf("another log: %v", err)
}
