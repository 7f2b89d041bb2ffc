package cmpserver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/engine"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/tenancy"
)

// attackerEnv are the names an Application's author would try to make the
// plugin believe it belongs to another project: Argo CD passes plugin env as
// ARGOCD_ENV_<name> and parameters as PARAM_<NAME> or in
// ARGOCD_APP_PARAMETERS, so none of them is ARGOCD_APP_PROJECT_NAME.
var attackerEnv = []string{
	EnvPluginPrefix + EnvAppProject + "=team-b",
	EnvPluginPrefix + "argocd_app_project_name=team-b",
	EnvPluginPrefix + "PROJECT=team-b",
	EnvPluginPrefix + "project=team-b",
	EnvParamPrefix + EnvAppProject + "=team-b",
	EnvParamPrefix + "PROJECT=team-b",
	"argocd_app_project_name=team-b",
	EnvAppProject + " =team-b",
	" " + EnvAppProject + "=team-b",
	"ARGOCD_APP_PROJECT=team-b",
	"ARGOCD_PROJECT_NAME=team-b",
}

// TestProjectFromRepoServerOnly: the project is the repo-server's
// ARGOCD_APP_PROJECT_NAME and nothing else; sent twice, the environment is
// refused (one of them came from somewhere else).
func TestProjectFromRepoServerOnly(t *testing.T) {
	for _, withReal := range []bool{true, false} {
		vars := append([]string{}, attackerEnv...)
		want := ""
		if withReal {
			vars = append([]string{EnvAppProject + "=team-a"}, vars...)
			want = "team-a"
		}
		env, err := ParseEnv(vars)
		if err != nil {
			t.Fatal(err)
		}
		if env.Project != want {
			t.Errorf("with the repo-server's name %v: project %q, want %q", withReal, env.Project, want)
		}
	}
	_, err := ParseEnv([]string{EnvAppProject + "=team-a", EnvAppProject + "=team-b"})
	if err == nil || err.Error() != "the plugin environment names ARGOCD_APP_PROJECT_NAME 2 times: it is set once, by the repo-server; check what else adds it" {
		t.Errorf("twice: %v", err)
	}
}

// tenancyWorld is a registry with team-a's and team-b's images and a
// policy letting each team render its own.
func tenancyWorld(t *testing.T) (host string, rs *tenancy.Renderers) {
	t.Helper()
	host, _ = bundletest.NewRegistry(t)
	tiny := filepath.Join(repoDir, "bundles/tiny")
	bundletest.PushDir(t, host, "team-a/op", "v1", tiny)
	bundletest.PushDir(t, host, "team-b/op", "v1", tiny)
	file := filepath.Join(t.TempDir(), "tenancy.yaml")
	os.WriteFile(file, fmt.Appendf(nil, `apiVersion: olm-cmp.dev/v1alpha1
kind: TenancyPolicy
unlistedProjects: deny
projects:
- name: team-a
  images: [%[1]s/team-a]
- name: team-b
  images: [%[1]s/team-b]
`, host), 0o644)
	p, err := tenancy.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	loader := &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}
	return host, &tenancy.Renderers{Base: loader, Policy: func() (*tenancy.Policy, error) { return p, nil }}
}

// TestTenancyThroughPlugin: an Application of team-a whose plugin env and
// parameters claim team-b, naming team-b's image, is refused as team-a with
// PermissionDenied and the policy's one line (what Argo CD shows as the
// ComparisonError), every time; its own image renders; the repo-server
// sending the project twice is refused.
func TestTenancyThroughPlugin(t *testing.T) {
	host, rs := tenancyWorld(t)
	eng := engine.NewEngine(engine.EngineOptions{Loader: rs.Base, Tenancy: engine.TenantsOf(rs)})
	ts := startServer(t, eng)
	dir := t.TempDir()
	for _, team := range []string{"team-a", "team-b"} {
		os.MkdirAll(filepath.Join(dir, team), 0o755)
		os.WriteFile(filepath.Join(dir, team, spec.FileName), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: "+host+"/"+team+"/op:v1\n  namespace: tiny-system\n"), 0o644)
	}
	tgz := tgzOf(t, dir)
	// The project's name as plugin env or a parameter is no spec field:
	// the request fails as such, and never as another project.
	for _, attack := range []call{
		{tgz: tgz, appRelPath: "team-b", rawEnv: []string{EnvAppProject + "=team-a", EnvPluginPrefix + EnvAppProject + "=team-b"}},
		{tgz: tgz, appRelPath: "team-b", rawEnv: []string{EnvAppProject + "=team-a"}, params: []map[string]any{{"name": EnvAppProject, "string": "team-b"}}},
	} {
		_, err := ts.generate(ctxT(t), t, attack)
		st, _ := status.FromError(err)
		if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), `unknown spec field "ARGOCD_APP_PROJECT_NAME"`) {
			t.Errorf("attack %v: %v", attack.rawEnv, err)
		}
	}
	for range 2 {
		resp, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "team-b", rawEnv: []string{EnvAppProject + "=team-a"}})
		st, _ := status.FromError(err)
		want := fmt.Sprintf(`project "team-a" may not render spec.bundle "%s/team-b/op:v1": tenancy policy tenancy.yaml line 5 (project "team-a") allows bundle images from %s/team-a only; fix:`, host, host)
		if resp != nil || st.Code() != codes.PermissionDenied || !strings.Contains(st.Message(), want) || strings.Contains(st.Message(), "\n") {
			t.Fatalf("team-a naming team-b's image: %v\nwant PermissionDenied: %s", err, want)
		}
	}
	if _, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "team-a", rawEnv: []string{EnvAppProject + "=team-a"}}); err != nil {
		t.Errorf("team-a's own image: %v", err)
	}
	_, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "team-a", rawEnv: []string{EnvAppProject + "=team-b", EnvAppProject + "=team-a"}})
	if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "names ARGOCD_APP_PROJECT_NAME 2 times") {
		t.Errorf("project sent twice: %v", err)
	}
	_, err = ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "team-a"})
	if st, _ := status.FromError(err); st.Code() != codes.PermissionDenied || !strings.Contains(st.Message(), `project "" is no Argo CD project (the request named none)`) {
		t.Errorf("no project: %v", err)
	}
	// Names no AppProject can have: refused in one escaped, bounded line.
	for _, name := range []string{"team-a\nteam-b", "team-a/../team-b", "team-\x1b[31ma", strings.Repeat("a", 10<<10)} {
		_, err = ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "team-a", rawEnv: []string{EnvAppProject + "=" + name}})
		st, _ := status.FromError(err)
		if st.Code() != codes.PermissionDenied || !strings.Contains(st.Message(), "is not an AppProject name") || strings.ContainsAny(st.Message(), "\n\x1b") || len(st.Message()) > 1024 {
			t.Errorf("project %.30q: %v", name, err)
		}
	}
}

// TestGenerateProjectFromEnvironment: classic mode picks the renderer of the
// repo-server's project, whatever the plugin env and parameters claim.
func TestGenerateProjectFromEnvironment(t *testing.T) {
	app := filepath.Join(repoDir, "apps/tiny")
	for _, real := range []string{"team-a", ""} {
		environ := append([]string{}, attackerEnv...)
		if real != "" {
			environ = append(environ, EnvAppProject+"="+real)
		}
		// Spec overrides of unknown fields fail the render after the
		// pick: the pick is what is asserted.
		var asked []string
		pick := func(project string) (*render.Renderer, error) {
			asked = append(asked, project)
			return nil, &tenancy.RefusalError{Project: project, Problem: "refused", Fix: "none"}
		}
		var out, errOut bytes.Buffer
		err := Generate(context.Background(), pick, app, environ, &out, &errOut)
		if len(asked) > 1 || len(asked) == 1 && asked[0] != real {
			t.Errorf("picked %q, want %q", asked, real)
		}
		if err == nil || out.Len() != 0 {
			t.Errorf("rendered: %v", err)
		}
	}
}

// TestPolicyGoneFailsClosed: a tenancy policy deleted while serve runs
// fails every request as FailedPrecondition, in one line saying who fixes
// it and how, and renders again once it is restored.
func TestPolicyGoneFailsClosed(t *testing.T) {
	host, rs := tenancyWorld(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "t.yaml")
	text := fmt.Sprintf("apiVersion: olm-cmp.dev/v1alpha1\nkind: TenancyPolicy\nunlistedProjects: deny\nprojects:\n- name: team-a\n  images: [%s/team-a]\n", host)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	rs.Policy = func() (*tenancy.Policy, error) { return tenancy.Load(file) }
	eng := engine.NewEngine(engine.EngineOptions{Loader: rs.Base, Tenancy: engine.TenantsOf(rs)})
	ts := startServer(t, eng)
	app := t.TempDir()
	os.WriteFile(filepath.Join(app, spec.FileName), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: "+host+"/team-a/op:v1\n  namespace: tiny-system\n"), 0o644)
	tgz := tgzOf(t, app)
	req := call{tgz: tgz, appRelPath: ".", rawEnv: []string{EnvAppProject + "=team-a"}}
	if _, err := ts.generate(ctxT(t), t, req); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	_, err := ts.generate(ctxT(t), t, req)
	st, _ := status.FromError(err)
	want := "olm-cmp renders nothing while its tenancy policy does not load: tenancy policy t.yaml: file does not exist; fix: the cluster admin must restore the olm-cmp-tenancy ConfigMap (docs/tenancy.md)"
	if st.Code() != codes.FailedPrecondition || st.Message() != want {
		t.Errorf("policy deleted: %v\nwant FailedPrecondition: %s", err, want)
	}
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.generate(ctxT(t), t, req); err != nil {
		t.Errorf("policy restored: %v", err)
	}
}
