package verify_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/trust"
	"github.com/olm-cmp/olm-cmp/internal/verify"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

// TestKeyTypes: RSA, ECDSA and Ed25519 keys verify both formats.
func TestKeyTypes(t *testing.T) {
	host := verifytest.NewRegistry(t, true)
	for _, alg := range []verifytest.Algorithm{verifytest.RSA, verifytest.ECDSA, verifytest.Ed25519} {
		for fname, fm := range formats {
			t.Run(string(alg)+"/"+fname, func(t *testing.T) {
				repo := "keys/" + string(alg) + "-" + fname
				digest := verifytest.PushImage(t, host, repo, "v1")
				k := verifytest.NewKey(t, alg)
				fm.sign(t, host, repo, digest, k)
				// Another trusted key listed first: the signer is the one
				// that verified.
				other := verifytest.NewKey(t, verifytest.ECDSA)
				v := verify.New(verifytest.Policy(t, verifytest.Scope(host, "enforce", other, k)), verify.Options{})
				res, err := v.Verify(context.Background(), host+"/"+repo, digest, false)
				if err != nil || res.Signer != "key "+k.Name || res.Format != fm.format {
					t.Fatalf("got %+v, %v", res, err)
				}
			})
		}
	}
}

// TestRekor: with a Rekor key in the scope, a legacy signature verifies
// only with its transparency-log entry.
func TestRekor(t *testing.T) {
	host := verifytest.NewRegistry(t, false)
	k := verifytest.NewKey(t, verifytest.RSA)
	rk := verifytest.NewRekor(t)
	p := verifytest.Policy(t, verifytest.WithRekor(verifytest.Scope(host, "enforce", k), rk))
	v := verify.New(p, verify.Options{})

	logged := verifytest.PushImage(t, host, "rekor/logged", "v1")
	verifytest.SignTag(t, host, "rekor/logged", logged, k, verifytest.Options{Rekor: rk})
	if res, err := v.Verify(context.Background(), host+"/rekor/logged", logged, false); err != nil || !res.Verified() {
		t.Fatalf("logged: %+v, %v", res, err)
	}
	// The image may be named with its tag (repo:tag@digest, cut at @).
	if res, err := v.Verify(context.Background(), host+"/rekor/logged:v1", logged, false); err != nil || !res.Verified() || res.Image != host+"/rekor/logged" {
		t.Fatalf("with a tag: %+v, %v", res, err)
	}
	unlogged := verifytest.PushImage(t, host, "rekor/unlogged", "v1")
	verifytest.SignTag(t, host, "rekor/unlogged", unlogged, k)
	_, err := v.Verify(context.Background(), host+"/rekor/unlogged", unlogged, false)
	if err == nil || !strings.Contains(err.Error(), "without the transparency-log entry the scope's Rekor key requires") {
		t.Fatalf("unlogged: %v", err)
	}
}

// TestMirror: a mirror's scope with signedAs accepts signatures naming the
// original registry, and only those.
func TestMirror(t *testing.T) {
	host := verifytest.NewRegistry(t, true)
	k := verifytest.NewKey(t, verifytest.RSA)
	repo := "redhat/openshift4/ose-operator-bundle"
	scope := verifytest.Scope(host+"/redhat", "enforce", k) + "  signedAs: registry.redhat.io\n"
	v := verify.New(verifytest.Policy(t, scope), verify.Options{})
	for fname, fm := range formats {
		t.Run(fname, func(t *testing.T) {
			good := verifytest.PushImage(t, host, repo+"-"+fname, "good")
			fm.sign(t, host, repo+"-"+fname, good, k, verifytest.Options{Ref: "registry.redhat.io/openshift4/ose-operator-bundle-" + fname})
			if res, err := v.Verify(context.Background(), host+"/"+repo+"-"+fname, good, false); err != nil || !res.Verified() {
				t.Fatalf("remapped: %+v, %v", res, err)
			}
			own := verifytest.PushImage(t, host, repo+"-"+fname, "own")
			fm.sign(t, host, repo+"-"+fname, own, k, verifytest.Options{Ref: host + "/" + repo + "-" + fname}) // names the mirror itself
			_, err := v.Verify(context.Background(), host+"/"+repo+"-"+fname, own, false)
			if err == nil || !strings.Contains(err.Error(), "expected registry.redhat.io/openshift4/ose-operator-bundle-"+fname) {
				t.Fatalf("mirror name: %v", err)
			}
		})
	}
}

// TestCache: a success is cached by policy hash and digest; a new policy
// checks again; failures are never cached.
func TestCache(t *testing.T) {
	host := verifytest.NewRegistry(t, true)
	k := verifytest.NewKey(t, verifytest.ECDSA)
	digest := verifytest.PushImage(t, host, "cache/op", "v1")
	p := verifytest.Policy(t, verifytest.Scope(host, "enforce", k))
	v := verify.New(p, verify.Options{})
	ctx := context.Background()
	if _, err := v.Verify(ctx, host+"/cache/op", digest, false); err == nil {
		t.Fatal("unsigned verified")
	}
	verifytest.SignTag(t, host, "cache/op", digest, k)
	first, err := v.Verify(ctx, host+"/cache/op", digest, false)
	if err != nil || first.Cached {
		t.Fatalf("first: %+v, %v", first, err)
	}
	second, err := v.Verify(ctx, host+"/cache/op", digest, false)
	if err != nil || !second.Cached || second.Signer != first.Signer {
		t.Fatalf("second: %+v, %v", second, err)
	}
	// A verifier of another policy (another key) checks for itself.
	other := verify.New(verifytest.Policy(t, verifytest.Scope(host, "enforce", verifytest.NewKey(t, verifytest.ECDSA))), verify.Options{})
	if _, err := other.Verify(ctx, host+"/cache/op", digest, false); err == nil {
		t.Fatal("another policy's key verified")
	}
}

// TestNoPolicy: without a policy nothing is checked, unless required.
func TestNoPolicy(t *testing.T) {
	v := verify.New(nil, verify.Options{})
	d := "sha256:" + strings.Repeat("a", 64)
	res, err := v.Verify(context.Background(), "quay.io/x/y", d, false)
	if err != nil || res.Mode != trust.Off || res.Annotation() != "unverified" {
		t.Fatalf("got %+v, %v", res, err)
	}
	_, err = v.Verify(context.Background(), "quay.io/x/y", d, true)
	var re *verify.RefusalError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "no trust policy is configured") {
		t.Fatalf("required: %v", err)
	}
	// A scope without keys in warn mode: unverified, says why.
	p := verifytest.Policy(t, verifytest.Scope("quay.io", "warn"))
	res, err = verify.New(p, verify.Options{}).Verify(context.Background(), "quay.io/x/y", d, false)
	if err != nil || res.Verified() || !strings.Contains(res.Problem, "no keys") {
		t.Fatalf("keyless warn: %+v, %v", res, err)
	}
	// Bad input is refused before any registry call.
	for _, c := range []struct{ repo, digest, want string }{
		{"quay.io/x/y", "sha256:abc", "is not a sha256 manifest digest"},
		{"Not A Repo", d, "is not an image repository"},
	} {
		if _, err := v.Verify(context.Background(), c.repo, c.digest, false); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s@%s: %v", c.repo, c.digest, err)
		}
	}
}

// TestDirectories: directory bundles are never verified; the policy's
// directories field, or the Application's demand, decides their fate.
func TestDirectories(t *testing.T) {
	for _, c := range []struct {
		field   string
		require bool
		mode    trust.Mode
		want    string // error text; "" for none
	}{
		{"", false, trust.Warn, ""},
		{"directories: allow\n", false, trust.Off, ""},
		{"directories: warn\n", false, trust.Warn, ""},
		{"directories: refuse\n", false, trust.Enforce, `signature check refused the directory bundle "bundles/widget" under trust.yaml (directories: refuse)`},
		{"directories: allow\n", true, trust.Enforce, "under the Application's demand for verification"},
	} {
		path := t.TempDir() + "/trust.yaml"
		p, err := trust.Parse([]byte(c.field+"apiVersion: olm-cmp.dev/v1alpha1\nkind: TrustPolicy\nscopes: []\n"), path)
		if err != nil {
			t.Fatal(err)
		}
		res, err := verify.New(p, verify.Options{}).CheckDirectory("bundles/widget", c.require)
		if res.Verified() || res.Mode != c.mode || (c.mode == trust.Warn) != (res.Problem != "") {
			t.Errorf("%q require=%v: %+v", c.field, c.require, res)
		}
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), path)) {
			t.Errorf("%q require=%v: error %v, want %q", c.field, c.require, err, c.want)
		}
	}
	if _, err := trust.Parse([]byte("directories: maybe\napiVersion: olm-cmp.dev/v1alpha1\nkind: TrustPolicy\n"), "p.yaml"); err == nil || !strings.Contains(err.Error(), "line 1: directories: expected allow, warn or refuse") {
		t.Errorf("bad directories: %v", err)
	}
}

// TestConcurrent: concurrent checks of one image share the registry reads
// and agree.
func TestConcurrent(t *testing.T) {
	var sigReads atomic.Int64
	host := verifytest.NewFaultyRegistry(t, true, func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, ".sig") {
			sigReads.Add(1)
			time.Sleep(50 * time.Millisecond) // keep the first check in flight
		}
		return false
	})
	k := verifytest.NewKey(t, verifytest.ECDSA)
	digest := verifytest.PushImage(t, host, "conc/op", "v1")
	verifytest.SignTag(t, host, "conc/op", digest, k)
	v := verify.New(verifytest.Policy(t, verifytest.Scope(host, "enforce", k)), verify.Options{})
	sigReads.Store(0) // signing read and wrote the tag
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			res, err := v.Verify(context.Background(), host+"/conc/op", digest, false)
			if err == nil && !res.Verified() {
				err = errors.New("not verified")
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// One check reads the tag once (a HEAD; the manifest is then read by
	// digest). A caller that found the cache empty just as the first check
	// finished may start a second.
	if n := sigReads.Load(); n > 2 {
		t.Errorf("%d reads of the .sig tag for 8 concurrent checks", n)
	}
	// A caller whose context ends stops waiting, with a refusal.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	other := verifytest.PushImage(t, host, "conc/op", "v2")
	if _, err := v.Verify(ctx, host+"/conc/op", other, false); err == nil || !strings.Contains(err.Error(), "cancelled or timed out") {
		t.Fatalf("cancelled: %v", err)
	}
}

// TestBundleRekor: with a Rekor key in the scope, a Sigstore bundle without
// a transparency-log entry is refused.
func TestBundleRekor(t *testing.T) {
	host := verifytest.NewRegistry(t, true)
	k := verifytest.NewKey(t, verifytest.ECDSA)
	digest := verifytest.PushImage(t, host, "rekor/bundle", "v1")
	verifytest.SignBundle(t, host, "rekor/bundle", digest, k)
	p := verifytest.Policy(t, verifytest.WithRekor(verifytest.Scope(host, "enforce", k), verifytest.NewRekor(t)))
	_, err := verify.New(p, verify.Options{}).Verify(context.Background(), host+"/rekor/bundle", digest, false)
	if err == nil || !strings.Contains(err.Error(), "a Sigstore bundle has no transparency-log entry, which the scope's Rekor key requires") {
		t.Fatalf("got %v", err)
	}
}
