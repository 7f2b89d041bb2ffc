package tenancy_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/tenancy"
	"github.com/olm-cmp/olm-cmp/internal/verify"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

// TestProjectTrustStricterOnly: a project's trust policy is checked after
// the cluster's, so it can only refuse more: enforce under a cluster's warn
// refuses an unsigned image (and renders a signed one), off under a
// cluster's enforce still refuses it.
func TestProjectTrustStricterOnly(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	signed := bundletest.PushDir(t, host, "team/signed", "v1", demoBundle)
	bundletest.PushDir(t, host, "team/unsigned", "v1", demoBundle)
	key := verifytest.NewKey(t, verifytest.ECDSA)
	verifytest.SignTag(t, host, "team/signed", signed, key)

	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	write("strict.yaml", verifytest.PolicyText(verifytest.Scope(host, "enforce", key)))
	write("loose.yaml", verifytest.PolicyText(verifytest.Scope(host, "off")))
	policy := write("tenancy.yaml", fmt.Sprintf(`apiVersion: olm-cmp.dev/v1alpha1
kind: TenancyPolicy
unlistedProjects: deny
projects:
- name: strict
  images: [%[1]s/team]
  trustPolicy: strict.yaml
- name: loose
  images: [%[1]s/team]
  trustPolicy: loose.yaml
`, host))
	p, err := tenancy.Load(policy)
	if err != nil {
		t.Fatal(err)
	}
	base := &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}
	opts := func(l *bundle.ImageLoader) verify.Options {
		return verify.Options{Remote: l.Registry().RemoteOptions(context.Background()), Insecure: l.Registry().IsInsecure}
	}
	clusterWith := func(mode string) func() (*verify.Verifier, error) {
		cp := verifytest.Policy(t, verifytest.Scope(host, mode, key))
		return func() (*verify.Verifier, error) { return verify.New(cp, opts(base)), nil }
	}
	renderAs := func(cluster func() (*verify.Verifier, error), project, repo string) (*render.Result, error) {
		rs := &tenancy.Renderers{Base: base, Policy: func() (*tenancy.Policy, error) { return p, nil }, Trust: cluster, VerifyOptions: opts}
		r, _, err := rs.For(project)
		if err != nil {
			return nil, err
		}
		return r.Render(context.Background(), render.Request{Spec: spec.Spec{Bundle: host + "/" + repo + ":v1", Namespace: "demo"}, Name: "demo"})
	}
	var refused *verify.RefusalError

	// Cluster warn, project enforce: the project's refusal.
	_, err = renderAs(clusterWith("warn"), "strict", "team/unsigned")
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "strict.yaml") {
		t.Errorf("unsigned under the project's enforce: %v", err)
	}
	res, err := renderAs(clusterWith("warn"), "strict", "team/signed")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.YAML()), "olm-cmp.dev/signature: 'key "+key.Name+"'") {
		t.Errorf("signed: no signer annotation")
	}
	// Cluster enforce, project off: still refused, by the cluster.
	_, err = renderAs(clusterWith("enforce"), "loose", "team/unsigned")
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "trust.yaml") {
		t.Errorf("unsigned under the cluster's enforce, the project's off: %v", err)
	}
}
