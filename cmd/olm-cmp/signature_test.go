package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/inspect"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

// sigFixture: the demo bundle pushed signed (demo/signed:v1) and unsigned
// (demo/unsigned:v1), and a trust policy file with one scope over the
// registry in mode.
func sigFixture(t *testing.T, mode string) (host, policy, signer string) {
	t.Helper()
	host, _ = bundletest.NewRegistry(t)
	d := bundletest.PushDir(t, host, "demo/signed", "v1", "../../examples/demo/bundle")
	bundletest.PushDir(t, host, "demo/unsigned", "v1", "../../examples/demo/bundle")
	key := verifytest.NewKey(t, verifytest.ECDSA)
	verifytest.SignTag(t, host, "demo/signed", d, key)
	policy = filepath.Join(t.TempDir(), "trust.yaml")
	if err := os.WriteFile(policy, []byte(verifytest.PolicyText(verifytest.Scope(host, mode, key))), 0o644); err != nil {
		t.Fatal(err)
	}
	return host, policy, "key " + key.Name
}

func TestTrustPolicyRender(t *testing.T) {
	host, policy, signer := sigFixture(t, "enforce")
	out, _, err := run(t, "render", "--bundle", host+"/demo/signed:v1", "-n", "demo", "--insecure-registry", host, "--trust-policy", policy)
	if err != nil {
		t.Fatal(err)
	}
	if n, objs := strings.Count(out, "olm-cmp.dev/signature: '"+signer+"'"), strings.Count(out, "\nkind: "); n == 0 || n != objs {
		t.Errorf("%d of %d objects carry the signer", n, objs)
	}
	// Unsigned, the variable instead of the flag: refused, nothing printed.
	t.Setenv(EnvTrustPolicy, policy)
	out, _, err = run(t, "render", "--bundle", host+"/demo/unsigned:v1", "-n", "demo", "--insecure-registry", host)
	if err == nil || out != "" || !strings.Contains(err.Error(), "signature check refused "+host+"/demo/unsigned@sha256:") {
		t.Errorf("unsigned: %v\n%.300s", err, out)
	}
	// A policy that does not load is refused with its file and line.
	bad := filepath.Join(t.TempDir(), "trust.yaml")
	os.WriteFile(bad, []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: TrustPolicy\nscopes:\n- match: quay.io\n  mode: sometimes\n"), 0o644)
	if _, _, err := run(t, "render", "--bundle", host+"/demo/signed:v1", "-n", "demo", "--insecure-registry", host, "--trust-policy", bad); err == nil || !strings.Contains(err.Error(), "trust.yaml: line 5: scopes[0].mode") || strings.Contains(err.Error(), bad) {
		t.Errorf("bad policy: %v", err)
	}
}

func TestTrustPolicyInspect(t *testing.T) {
	host, policy, signer := sigFixture(t, "warn")
	out, _, err := run(t, "inspect", host+"/demo/signed:v1", "--insecure-registry", host, "--trust-policy", policy)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Signature (bundle):  "+signer+" (scope "+host+", mode warn, cosign-sig-tag)") {
		t.Errorf("inspect text:\n%s", out)
	}
	out, _, err = run(t, "inspect", host+"/demo/unsigned:v1", "-o", "json", "--insecure-registry", host, "--trust-policy", policy)
	if err != nil {
		t.Fatal(err)
	}
	var s inspect.Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Signatures) != 1 || s.Signatures[0].Signer != "unverified" || s.Signatures[0].Verified || s.Signatures[0].Problem == "" || s.Signatures[0].Image != host+"/demo/unsigned" {
		t.Errorf("signatures: %+v", s.Signatures)
	}
	found := false
	for _, f := range s.Requirements {
		found = found || f.Key() == "signature:"+host+"/demo/unsigned"
	}
	if !found {
		t.Errorf("no signature requirement: %+v", s.Requirements)
	}
	// --strict fails on it.
	if _, _, err := run(t, "inspect", host+"/demo/unsigned:v1", "--strict", "--insecure-registry", host, "--trust-policy", policy); err == nil {
		t.Error("inspect --strict passed an unverified image")
	}
}

func TestTrustPolicyDiffAndGenerate(t *testing.T) {
	host, policy, _ := sigFixture(t, "enforce")
	dir := specDir(t, host+"/demo/unsigned:v1", "demo")
	if _, stderr, code := runStatus(t, "diff", dir, "--to-bundle", host+"/demo/signed:v1", "--insecure-registry", host, "--trust-policy", policy); code != diffRenderError || !strings.Contains(stderr, "signature check refused") {
		t.Errorf("diff from an unsigned bundle: status %d\n%s", code, stderr)
	}
	t.Setenv(EnvTrustPolicy, policy)
	t.Setenv(EnvInsecureRegistries, host)
	out, _, err := run(t, "generate", dir)
	if err == nil || out != "" || !strings.Contains(err.Error(), "signature check refused") {
		t.Errorf("generate: %v\n%.200s", err, out)
	}
}

// TestTrustPolicyReload: serve's policy follows its file: a changed policy
// is the next render's (a new hash, so the render cache misses), a broken
// one fails renders with its error until fixed, never falling back.
func TestTrustPolicyReload(t *testing.T) {
	_, policy, _ := sigFixture(t, "warn")
	f := &registryFlags{trustPolicy: policy, registryTimeout: time.Second}
	loader, err := f.loader()
	if err != nil {
		t.Fatal(err)
	}
	ps, err := f.policySource(loader)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := ps.Get()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := ps.Get(); again != v1 {
		t.Error("an unchanged policy was loaded again")
	}
	text, _ := os.ReadFile(policy)
	os.WriteFile(policy, []byte(strings.Replace(string(text), "mode: warn", "mode: enforce", 1)), 0o644)
	v2, err := ps.Get()
	if err != nil || v2 == v1 || v2.Policy().Hash() == v1.Policy().Hash() {
		t.Fatalf("changed policy: %v (hash %s, was %s)", err, v2.Policy().Hash(), v1.Policy().Hash())
	}
	os.WriteFile(policy, []byte("kind: TrustPolicy\n"), 0o644)
	// The error names the file by its base name: a server-side path never
	// reaches Argo CD.
	if v, err := ps.Get(); err == nil || v != nil || !strings.Contains(err.Error(), filepath.Base(policy)) || strings.Contains(err.Error(), policy) {
		t.Errorf("broken policy: %v, %v", v, err)
	}
	os.WriteFile(policy, text, 0o644)
	if v, err := ps.Get(); err != nil || v.Policy().Hash() != v1.Policy().Hash() {
		t.Errorf("fixed policy: %v", err)
	}
}
