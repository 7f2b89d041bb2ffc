package main

import (
	"context"
	"errors"
	"os"

	"github.com/spf13/pflag"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/safefile"
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

// trustPolicyPath is --trust-policy, else its variable; "" for none. An
// empty flag while the variable names a policy is refused: on the sidecar
// it would turn signature checks off without a word (a flag in plugin.yaml's
// args emptied by a template), as --tenancy-policy's twin rule says.
func (f *registryFlags) trustPolicyPath() (string, error) {
	env := os.Getenv(EnvTrustPolicy)
	if f.fs != nil && f.fs.Changed("trust-policy") {
		if f.trustPolicy == "" && env != "" {
			return "", errors.New("--trust-policy is empty but " + EnvTrustPolicy + " names a trust policy: an empty flag would turn signature checks off; remove the flag (the variable's policy applies) or unset " + EnvTrustPolicy + " (docs/signatures.md)")
		}
		return f.trustPolicy, nil
	}
	if env != "" {
		return env, nil
	}
	return f.trustPolicy, nil
}

// verifier loads the trust policy and returns the verifier that checks
// images with loader's registry client (its transport, credentials, limits
// and redaction); nil without a policy.
func (f *registryFlags) verifier(loader *bundle.ImageLoader) (*verify.Verifier, error) {
	path, err := f.trustPolicyPath()
	if err != nil {
		return nil, err
	}
	if path == "" {
		return nil, nil
	}
	p, err := trust.Load(path)
	if err != nil {
		return nil, err
	}
	return verify.New(p, verifyOptions(loader)), nil
}

// verifyOptions gives verification loader's registry access: its
// transport, credentials, limits and redaction for registry reads, its
// timeouts for GPG lookaside requests, and its insecure registries.
func verifyOptions(loader *bundle.ImageLoader) verify.Options {
	c := loader.Registry()
	return verify.Options{
		Remote:    c.RemoteOptions(context.Background()),
		Lookaside: c.HTTPTransport(),
		Insecure:  c.IsInsecure,
	}
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
	if r, err := f.projectRenderer(loader, v); err != nil || r != nil {
		return r, err
	}
	return &render.Renderer{Loader: loader, Verifier: v}, nil
}

// policySource is serve's trust policy: loaded at start (a policy that does
// not load stops serve from starting), then loaded again when its file
// changes (a ConfigMap update swaps the file), so a policy change takes
// effect on the next render without a restart. A policy that no longer loads
// fails every render with its error (one line naming the file, line and
// field) until it is fixed: never a silent fall back to the old policy or to
// none.
type policySource = safefile.Reloading[*verify.Verifier]

// policySource returns the registry flags' policy source, nil without a
// policy.
func (f *registryFlags) policySource(loader *bundle.ImageLoader) (*policySource, error) {
	path, err := f.trustPolicyPath()
	if err != nil {
		return nil, err
	}
	if path == "" {
		return nil, nil
	}
	opts := verifyOptions(loader)
	return safefile.NewReloading(path, func(path string) (*verify.Verifier, error) {
		p, err := trust.Load(path)
		if err != nil {
			return nil, err
		}
		return verify.New(p, opts), nil
	}, func(v *verify.Verifier) []string { return v.Policy().Files() })
}
