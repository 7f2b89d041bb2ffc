package engine

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/verify"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

// TestPolicyChangeTakesEffect: the engine asks for the verifier on every
// request and keys renders on the policy's hash and verdicts: a render
// cached under one policy is not served under another, an image refused
// under enforce renders once the policy says warn, and one rendered under
// warn is refused once it says enforce.
func TestPolicyChangeTakesEffect(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	bundletest.PushDir(t, host, "demo/unsigned", "v1", "../../examples/demo/bundle")
	key := verifytest.NewKey(t, verifytest.ECDSA)
	loader := &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}
	remote := loader.Registry().RemoteOptions(context.Background())
	policies := map[string]*verify.Verifier{}
	for _, mode := range []string{"warn", "enforce"} {
		policies[mode] = verify.New(verifytest.Policy(t, verifytest.Scope(host, mode, key)), verify.Options{Remote: remote})
	}
	// Another warn policy: the same scope, one more key (another hash).
	policies["warn2"] = verify.New(verifytest.Policy(t, verifytest.Scope(host, "warn", key, verifytest.NewKey(t, verifytest.ECDSA))), verify.Options{Remote: remote})
	current := "warn"
	e := NewEngine(EngineOptions{Loader: loader, Verifier: func() (*verify.Verifier, error) { return policies[current], nil }})
	req := render.Request{Spec: spec.Spec{Bundle: host + "/demo/unsigned:v1", Namespace: "demo"}}
	ctx := context.Background()

	for _, step := range []struct {
		policy, cache string
		refused       bool
	}{
		{"warn", "miss", false},
		{"warn", "hit", false},
		{"warn2", "miss", false}, // another policy: not the cached render
		{"enforce", "", true},
		{"warn", "hit", false},
	} {
		current = step.policy
		res, info, err := e.Render(ctx, req)
		if step.refused {
			if err == nil || res != nil || !strings.Contains(err.Error(), "signature check refused") {
				t.Errorf("%s: got %v", step.policy, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", step.policy, err)
		}
		if info.Cache != step.cache || !strings.Contains(string(res.YAML()), render.AnnotationSignature+": 'unverified'") {
			t.Errorf("%s: cache %s, want %s", step.policy, info.Cache, step.cache)
		}
	}
}

// TestDeadlineNamesSignatureCheck: a request whose deadline ends while the
// registry stalls on the signature says it was checking the signature (the
// image, its digest and the scope), not resolving spec.bundle.
func TestDeadlineNamesSignatureCheck(t *testing.T) {
	release := make(chan struct{})
	host := verifytest.NewFaultyRegistry(t, false, func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasSuffix(r.URL.Path, ".sig") {
			return false
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	})
	defer close(release)
	digest := bundletest.PushDir(t, host, "demo/stalled", "v1", "../../examples/demo/bundle")
	key := verifytest.NewKey(t, verifytest.ECDSA)
	loader := &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}
	v := verify.New(verifytest.Policy(t, verifytest.Scope(host, "enforce", key)), verify.Options{Remote: loader.Registry().RemoteOptions(context.Background())})
	e := NewEngine(EngineOptions{Loader: loader, MaxEntries: -1, Verifier: func() (*verify.Verifier, error) { return v, nil }})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, _, err := e.Render(ctx, render.Request{Spec: spec.Spec{Bundle: host + "/demo/stalled:v1", Namespace: "demo"}})
	want := "still checking the signature of " + host + "/demo/stalled@" + digest + ` under trust scope "` + host + `" (trust.yaml line 4) after `
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}
