package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
)

// tenancyFixture: the demo bundle in team-a's and team-b's repositories of
// one registry, and a policy letting each team render its own.
func tenancyFixture(t *testing.T) (host, policy string) {
	t.Helper()
	host, _ = bundletest.NewRegistry(t)
	bundletest.PushDir(t, host, "team-a/demo", "v1", "../../examples/demo/bundle")
	bundletest.PushDir(t, host, "team-b/demo", "v1", "../../examples/demo/bundle")
	policy = filepath.Join(t.TempDir(), "tenancy.yaml")
	if err := os.WriteFile(policy, fmt.Appendf(nil, "apiVersion: olm-cmp.dev/v1alpha1\nkind: TenancyPolicy\nunlistedProjects: deny\nprojects:\n- name: team-a\n  images: [%[1]s/team-a]\n- name: team-b\n  images: [%[1]s/team-b]\n", host), 0o644); err != nil {
		t.Fatal(err)
	}
	return host, policy
}

// TestTenancyCommands: render, diff and upgrade refuse, before the sync,
// what the plugin would refuse the project; --project without a policy is
// a mistake said as such.
func TestTenancyCommands(t *testing.T) {
	host, policy := tenancyFixture(t)
	dir := specDir(t, host+"/team-b/demo:v1", "demo")
	want := fmt.Sprintf(`project "team-a" may not render spec.bundle "%s/team-b/demo:v1": tenancy policy tenancy.yaml line 5 (project "team-a") allows bundle images from %s/team-a only; fix:`, host, host)

	out, _, err := run(t, "render", dir, "--insecure-registry", host, "--tenancy-policy", policy, "--project", "team-a")
	if err == nil || out != "" || !strings.Contains(err.Error(), want) {
		t.Errorf("render as team-a: %v\n%.200s", err, out)
	}
	if _, _, err := run(t, "render", dir, "--insecure-registry", host, "--tenancy-policy", policy, "--project", "team-b"); err != nil {
		t.Errorf("render as team-b: %v", err)
	}
	t.Setenv(EnvTenancyPolicy, policy)
	if _, _, err := run(t, "render", dir, "--insecure-registry", host); err == nil || !strings.Contains(err.Error(), `project "" is no Argo CD project (the request named none)`) {
		t.Errorf("render without --project: %v", err)
	}
	t.Setenv(EnvTenancyPolicy, "")
	if _, _, err := run(t, "render", dir, "--insecure-registry", host, "--project", "team-a"); err == nil || err.Error() != "--project names the Argo CD project for a tenancy policy: give --tenancy-policy FILE (or OLM_CMP_TENANCY_POLICY)" {
		t.Errorf("--project without a policy: %v", err)
	}
	// A command without the flag never reads the variable.
	t.Setenv(EnvTenancyPolicy, policy)
	if _, _, err := run(t, "inspect", host+"/team-b/demo:v1", "--insecure-registry", host); err != nil {
		t.Errorf("inspect under the variable: %v", err)
	}
	t.Setenv(EnvTenancyPolicy, "")

	if _, stderr, code := runStatus(t, "diff", dir, "--to-bundle", host+"/team-a/demo:v1", "--insecure-registry", host, "--tenancy-policy", policy, "--project", "team-a"); code != diffRenderError || !strings.Contains(stderr, want) {
		t.Errorf("diff as team-a: status %d\n%s", code, stderr)
	}

	_, _, err = run(t, "upgrade", dir, "--apps-from", "none", "--repo-root", dir, "--insecure-registry", host, "--tenancy-policy", policy, "--project", "team-a", "-o", "json")
	if err == nil {
		t.Errorf("upgrade as team-a succeeded")
	}
	out, _, _ = run(t, "upgrade", dir, "--apps-from", "none", "--repo-root", dir, "--insecure-registry", host, "--tenancy-policy", policy, "--project", "team-a", "-o", "json")
	if !strings.Contains(out, `may not render spec.bundle`) {
		t.Errorf("upgrade as team-a does not say why:\n%.600s", out)
	}
	_, _, err = run(t, "upgrade", dir, "--apps-from", "none", "--repo-root", dir, "--insecure-registry", host, "--tenancy-policy", policy, "--project", "billing")
	if err == nil || !strings.Contains(err.Error(), `project "billing" may render nothing with olm-cmp`) {
		t.Errorf("upgrade as an unlisted project: %v", err)
	}
}

// TestGenerateTenancy: classic mode judges the repo-server's project, from
// its environment, under OLM_CMP_TENANCY_POLICY (the plugin env's attempts
// are internal/cmpserver's TestProjectFromRepoServerOnly).
func TestGenerateTenancy(t *testing.T) {
	host, policy := tenancyFixture(t)
	dir := specDir(t, host+"/team-b/demo:v1", "demo")
	t.Setenv(EnvTenancyPolicy, policy)
	t.Setenv(EnvInsecureRegistries, host)
	t.Setenv("ARGOCD_APP_PROJECT_NAME", "team-a")
	out, _, err := run(t, "generate", dir)
	if err == nil || out != "" || !strings.Contains(err.Error(), `project "team-a" may not render spec.bundle "`+host+`/team-b/demo:v1"`) {
		t.Errorf("generate as team-a: %v\n%.200s", err, out)
	}
	t.Setenv("ARGOCD_APP_PROJECT_NAME", "team-b")
	if out, _, err := run(t, "generate", dir); err != nil || !strings.Contains(out, "kind: Deployment") {
		t.Errorf("generate as team-b: %v", err)
	}
}

// TestEmptyTenancyFlagUnderVariable: an explicitly empty --tenancy-policy
// while OLM_CMP_TENANCY_POLICY names a policy would turn the policy off
// (and let serve start --render-addr): refused at start, by every command
// that takes the flag.
func TestEmptyTenancyFlagUnderVariable(t *testing.T) {
	host, policy := tenancyFixture(t)
	dir := specDir(t, host+"/team-a/demo:v1", "demo")
	t.Setenv(EnvTenancyPolicy, policy)
	t.Setenv(EnvInsecureRegistries, host)
	t.Setenv("ARGOCD_APP_PROJECT_NAME", "team-a")
	want := "--tenancy-policy is empty but OLM_CMP_TENANCY_POLICY names a tenancy policy: an empty flag would turn the policy off; remove the flag (the variable's policy applies) or unset OLM_CMP_TENANCY_POLICY (docs/tenancy.md)"
	missing := filepath.Join(t.TempDir(), "no-such-dir")
	for _, args := range [][]string{
		{"serve", "--tenancy-policy", "", "--render-addr", "127.0.0.1:0", "--socket-dir", missing},
		{"serve", "--tenancy-policy=", "--socket-dir", missing},
		{"generate", dir, "--tenancy-policy", ""},
		{"render", dir, "--tenancy-policy", "", "--project", "team-a"},
	} {
		if out, _, err := run(t, args...); err == nil || err.Error() != want || out != "" {
			t.Errorf("%q: %v\n%.200s", args, err, out)
		}
	}
}

// TestEmptyTrustFlagUnderVariable: --trust-policy's twin of the rule above
// (an explicitly empty flag would turn signature checks off while
// OLM_CMP_TRUST_POLICY names a policy).
func TestEmptyTrustFlagUnderVariable(t *testing.T) {
	policy := filepath.Join(t.TempDir(), "trust.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: TrustPolicy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvTrustPolicy, policy)
	want := "--trust-policy is empty but OLM_CMP_TRUST_POLICY names a trust policy: an empty flag would turn signature checks off; remove the flag (the variable's policy applies) or unset OLM_CMP_TRUST_POLICY (docs/signatures.md)"
	demo := filepath.Join("..", "..", "examples", "demo")
	missing := filepath.Join(t.TempDir(), "no-such-dir")
	for _, args := range [][]string{
		{"serve", "--trust-policy", "", "--socket-dir", missing},
		{"generate", demo, "--trust-policy="},
		{"render", demo, "--trust-policy", ""},
	} {
		if out, _, err := run(t, args...); err == nil || err.Error() != want || out != "" {
			t.Errorf("%q: %v\n%.200s", args, err, out)
		}
	}
	// the variable alone still applies (no refusal for a policy without scopes)
	if out, _, err := run(t, "render", demo, "--quiet"); err != nil || !strings.Contains(out, "kind: Deployment") {
		t.Errorf("render under the variable alone: %v", err)
	}
}
