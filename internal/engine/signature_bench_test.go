package engine

import (
	"context"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/verify"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

// BenchmarkSignatureRequest is what a trust policy adds to a plugin
// request for a bundle image whose render is cached (every Argo CD refresh
// after the first): the tag is resolved and the image verified on every
// request. none: no policy; cached: the verdict cache answers (the steady
// state); cold: a new verifier each request (the first request after a
// start or a policy change: the registry round trips and the signature
// check), the render itself still served from the cache.
func BenchmarkSignatureRequest(b *testing.B) {
	host, _ := bundletest.NewRegistry(b)
	digest := bundletest.PushDir(b, host, "bench/signed", "v1", "../../examples/demo/bundle")
	key := verifytest.NewKey(b, verifytest.RSA) // Red Hat's kind of key
	verifytest.SignTag(b, host, "bench/signed", digest, key)
	policy := verifytest.Policy(b, verifytest.Scope(host, "enforce", key))
	loader := &bundle.ImageLoader{CacheDir: b.TempDir(), Insecure: []string{host}}
	remote := loader.Registry().RemoteOptions(context.Background())
	req := render.Request{Spec: spec.Spec{Bundle: host + "/bench/signed:v1", Namespace: "bench"}}
	cached := verify.New(policy, verify.Options{Remote: remote})
	for _, c := range []struct {
		name     string
		verifier func() (*verify.Verifier, error)
	}{
		{"none", nil},
		{"cached", func() (*verify.Verifier, error) { return cached, nil }},
		{"cold", func() (*verify.Verifier, error) { return verify.New(policy, verify.Options{Remote: remote}), nil }},
	} {
		b.Run(c.name, func(b *testing.B) {
			e := NewEngine(EngineOptions{Loader: loader, Verifier: c.verifier})
			if _, _, err := e.Render(context.Background(), req); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, info, err := e.Render(context.Background(), req); err != nil || info.Cache != "hit" {
					b.Fatal(info.Cache, err)
				}
			}
		})
	}
}
