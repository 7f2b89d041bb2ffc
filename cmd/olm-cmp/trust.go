package main

import (
	"context"
	"os"

	"github.com/spf13/pflag"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/trust"
	"github.com/olm-cmp/olm-cmp/internal/verify"
)

// EnvTrustPolicy is --trust-policy's variable: the plugin sidecar's way to
// name the policy file its volume mounts (docs/plugin.md).
const EnvTrustPolicy = "OLM_CMP_TRUST_POLICY"

// registerTrust adds --trust-policy to the registry flags: every command
// that pulls images verifies them against the same policy.
func registerTrust(fs *pflag.FlagSet, path *string) {
	fs.StringVar(path, "trust-policy", "", "trust policy file (docs/signatures.md): catalog and bundle images are verified against it, by digest, before a byte of them is read (env "+EnvTrustPolicy+")")
}

// trustPolicyPath is --trust-policy, else its variable; "" for none.
func (f *registryFlags) trustPolicyPath() string {
	if f.fs != nil && f.fs.Changed("trust-policy") {
		return f.trustPolicy
	}
	if v := os.Getenv(EnvTrustPolicy); v != "" {
		return v
	}
	return f.trustPolicy
}

// verifier loads the trust policy and returns the verifier that checks
// images with loader's registry client (its transport, credentials, limits
// and redaction); nil without a policy.
func (f *registryFlags) verifier(loader *bundle.ImageLoader) (*verify.Verifier, error) {
	path := f.trustPolicyPath()
	if path == "" {
		return nil, nil
	}
	p, err := trust.Load(path)
	if err != nil {
		return nil, err
	}
	return verify.New(p, verify.Options{Remote: loader.Registry().RemoteOptions(context.Background())}), nil
}

// renderer is the renderer of the registry flags: their loader, and the
// trust policy's verifier.
func (f *registryFlags) renderer() (*render.Renderer, error) {
	loader, err := f.loader()
	if err != nil {
		return nil, err
	}
	v, err := f.verifier(loader)
	if err != nil {
		return nil, err
	}
	return &render.Renderer{Loader: loader, Verifier: v}, nil
}
