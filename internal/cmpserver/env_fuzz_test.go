package cmpserver_test

// Fuzz target for the plugin environment Argo CD builds from an Application:
// ARGOCD_ENV_* (plugin env), ARGOCD_APP_PARAMETERS (parameters as JSON) and
// the PARAM_* fallback. Every value is the Application author's, so none may
// crash the sidecar that serves every Application. Seeds: testdata/fuzz.

import (
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/cmpserver"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// FuzzParseEnv: environ is NUL-separated NAME=VALUE entries (as the CMP
// stream's EnvEntry list carries them); params, when not empty, is
// ARGOCD_APP_PARAMETERS. ParseEnv and ApplyOverrides on a valid spec must not
// panic; errors name what was wrong (the variable or the override's source);
// a spec that comes out validates and normalizes without panicking.
func FuzzParseEnv(f *testing.F) {
	f.Add([]byte("ARGOCD_ENV_NAMESPACE=x\x00ARGOCD_ENV_WATCH_NAMESPACES=a,b"), `[{"name":"namespace","string":"p"}]`)
	f.Add([]byte("PARAM_NAMESPACE=p\x00PARAM_WATCHNAMESPACES_1=y\x00PARAM_WATCHNAMESPACES_0=x"), "")
	f.Add([]byte("ARGOCD_ENV_images={\"a/\":\"b/\"}\x00KUBE_API_VERSIONS=v1,apps/v1"), `[{"name":"images","map":{"q/":"m/"}},{"name":"exclude","array":[]}]`)
	f.Add([]byte("ARGOCD_ENV_patches=- patch: '{}'\x00ARGOCD_ENV_config=env: []"), `[{"name":"syncWaves","string":"{crds: -9}"}]`)
	f.Fuzz(func(t *testing.T, environ []byte, params string) {
		vars := strings.Split(string(environ), "\x00")
		if params != "" {
			vars = append(vars, cmpserver.EnvParameters+"="+params)
		}
		env, err := cmpserver.ParseEnv(vars)
		if err != nil {
			checkMessage(t, err.Error(), string(environ)+params)
			if !strings.HasPrefix(err.Error(), cmpserver.EnvParameters) {
				t.Fatalf("error does not name %s: %q", cmpserver.EnvParameters, err)
			}
			return
		}
		for _, o := range env.Overrides {
			if o.Source == "" {
				t.Fatalf("override %q has no source to name in errors", o.Name)
			}
		}
		base := spec.Spec{Bundle: "quay.io/org/bundle:1.0", Namespace: "ns"}
		out, err := spec.ApplyOverrides(base, env.Overrides)
		if err != nil {
			checkMessage(t, err.Error(), string(environ)+params)
			named := false
			for _, o := range env.Overrides {
				named = named || strings.Contains(err.Error(), o.Source)
			}
			if !named {
				t.Fatalf("error names no override's source: %q", err)
			}
			return
		}
		if err := out.Validate(); err != nil {
			checkMessage(t, err.Error(), string(environ)+params)
		}
		_ = out.Normalized()
	})
}

// checkMessage holds what every error shown in the Argo CD UI must: some
// text, no blank lines, no panic text.
func checkMessage(t *testing.T, msg, input string) {
	t.Helper()
	if strings.TrimSpace(msg) == "" {
		t.Fatal("empty error message")
	}
	for _, bad := range []string{"panic", "runtime error", "goroutine "} {
		// A message may quote the input, which may hold anything.
		if strings.Contains(msg, bad) && !strings.Contains(input, bad) {
			t.Fatalf("error message holds %q: %q", bad, msg)
		}
	}
	for _, line := range strings.Split(msg, "\n") {
		if strings.TrimSpace(line) == "" {
			t.Fatalf("error message has a blank line: %q", msg)
		}
	}
}
