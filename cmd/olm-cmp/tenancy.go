package main

import (
	"errors"
	"os"

	"github.com/spf13/pflag"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/safefile"
	"github.com/olm-cmp/olm-cmp/internal/tenancy"
	"github.com/olm-cmp/olm-cmp/internal/verify"
)

// EnvTenancyPolicy is --tenancy-policy's variable: the plugin sidecar's way
// to name the tenancy policy file its volume mounts (docs/tenancy.md).
const EnvTenancyPolicy = "OLM_CMP_TENANCY_POLICY"

// registerTenancy adds --tenancy-policy, and with withProject --project
// (render, diff, upgrade: a CI job refuses what the sidecar would). serve
// and generate take the project from the repo-server's environment only.
func (f *registryFlags) registerTenancy(fs *pflag.FlagSet, withProject bool) {
	fs.StringVar(&f.tenancyPolicy, "tenancy-policy", "", "tenancy policy file (docs/tenancy.md): what each Argo CD project may render, with which credentials (env "+EnvTenancyPolicy+")")
	if withProject {
		fs.StringVar(&f.project, "project", "", "the Argo CD project (AppProject) of the Application, judged by --tenancy-policy as the plugin judges it")
		f.projectFlag = true
	}
	f.tenancyOn = true
}

// tenancyPolicyPath is --tenancy-policy, else its variable; "" for none.
// An empty flag while the variable names a policy is refused: on the
// sidecar it would turn the tenancy policy off without a word (a flag in
// plugin.yaml's args emptied by a template), and serve would then even
// accept --render-addr. --project without a policy is refused too.
func (f *registryFlags) tenancyPolicyPath() (string, error) {
	if !f.tenancyOn {
		return "", nil // a command without the flag (inspect, resolve…) never reads the variable
	}
	env := os.Getenv(EnvTenancyPolicy)
	path := f.tenancyPolicy
	if f.fs != nil && f.fs.Changed("tenancy-policy") {
		if f.tenancyPolicy == "" && env != "" {
			return "", errors.New("--tenancy-policy is empty but " + EnvTenancyPolicy + " names a tenancy policy: an empty flag would turn the policy off; remove the flag (the variable's policy applies) or unset " + EnvTenancyPolicy + " (docs/tenancy.md)")
		}
	} else if env != "" {
		path = env
	}
	if path == "" && f.project != "" {
		return "", errors.New("--project names the Argo CD project for a tenancy policy: give --tenancy-policy FILE (or " + EnvTenancyPolicy + ")")
	}
	return path, nil
}

// tenantRenderers are the renderers of each project under the tenancy
// policy the flags name (reloaded when its file changes), over loader and
// the trust policy trust gives; nil without a tenancy policy.
func (f *registryFlags) tenantRenderers(loader *bundle.ImageLoader, trust func() (*verify.Verifier, error)) (*tenancy.Renderers, error) {
	path, err := f.tenancyPolicyPath()
	if err != nil {
		return nil, err
	}
	if path == "" {
		return nil, nil
	}
	src, err := safefile.NewReloading(path, tenancy.Load, (*tenancy.Policy).Files)
	if err != nil {
		return nil, err
	}
	return &tenancy.Renderers{Base: loader, Policy: src.Get, Trust: trust, VerifyOptions: verifyOptions}, nil
}

// projectRenderer is the renderer of the command's --project under the
// tenancy policy, or nil, nil without a policy.
func (f *registryFlags) projectRenderer(loader *bundle.ImageLoader, v *verify.Verifier) (*render.Renderer, error) {
	var trust func() (*verify.Verifier, error)
	if v != nil {
		trust = func() (*verify.Verifier, error) { return v, nil }
	}
	rs, err := f.tenantRenderers(loader, trust)
	if err != nil || rs == nil {
		return nil, err
	}
	r, _, err := rs.For(f.project)
	return r, err
}

// projectLoader is, under the tenancy policy, the loader of --project (its
// own credentials; base's for an unlisted project the policy allows) and
// its admission; base and nil without a policy.
func (f *registryFlags) projectLoader(base *bundle.ImageLoader) (*bundle.ImageLoader, render.Admission, error) {
	path, err := f.tenancyPolicyPath()
	if err != nil {
		return nil, nil, err
	}
	if path == "" {
		return base, nil, nil
	}
	return tenancy.ProjectLoader(path, f.project, base)
}
