package tenancy_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/cmpserver"
	"github.com/olm-cmp/olm-cmp/internal/registry"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/tenancy"
	"github.com/olm-cmp/olm-cmp/internal/verify"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

// cleaningRegistry is go-containerregistry's registry behind Go's
// http.ServeMux, which answers a path with "..", "." or "//" with a
// redirect to the cleaned path: registry/team-a/../team-b/op is served
// team-b/op. It returns the host and the number of requests for team-b's
// repository (before or after cleaning) served.
func cleaningRegistry(t *testing.T) (string, *int) {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/", ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	n := new(int)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "team-b") {
			*n++
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), n
}

func uncleanRefused(t *testing.T, what string, err error, requests *int, before int) {
	t.Helper()
	if !errors.Is(err, registry.ErrUncleanPath) || strings.Contains(err.Error(), "\n") {
		t.Errorf("%s: got %v, want the unclean repository path refusal", what, err)
	}
	if *requests != before {
		t.Errorf("%s: the registry got %d requests for team-b", what, *requests-before)
	}
}

// TestUncleanPathsRefused: a repository path with "..", "." or an empty
// component is under team-a's prefix as a string but is team-b's image at a
// registry that cleans paths; it is refused before any registry call, named
// by spec.bundle, by a plugin parameter, or by a catalog's olm.bundle.
func TestUncleanPathsRefused(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	host, requests := cleaningRegistry(t)
	bundletest.PushDir(t, host, "team-b/op", "v1", demoBundle)
	dir := t.TempDir()
	fbc := fmt.Sprintf(`{"schema": "olm.package", "name": "greeter-operator"}
{"schema": "olm.channel", "name": "stable", "package": "greeter-operator", "entries": [{"name": "g.v1"}]}
{"schema": "olm.bundle", "name": "g.v1", "package": "greeter-operator", "image": "%s/team-a/../team-b/op:v1", "properties": [{"type": "olm.package", "value": {"packageName": "greeter-operator", "version": "0.2.0"}}]}
`, host)
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(fbc), 0o644); err != nil {
		t.Fatal(err)
	}
	bundletest.Push(t, host, "team-a/catalog", "v1", bundletest.CatalogImage(t, dir, "/configs"))
	policy := filepath.Join(t.TempDir(), "tenancy.yaml")
	if err := os.WriteFile(policy, fmt.Appendf(nil, `apiVersion: olm-cmp.dev/v1alpha1
kind: TenancyPolicy
unlistedProjects: deny
projects:
- name: team-a
  images: [%[1]s/team-a]
  catalogs:
  - image: %[1]s/team-a/catalog
    packages: ["*"]
`, host), 0o644); err != nil {
		t.Fatal(err)
	}
	base := &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}
	rs := &tenancy.Renderers{Base: base, Policy: func() (*tenancy.Policy, error) { return tenancy.Load(policy) }}
	r, _, err := rs.For("team-a")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{host + "/team-a/../team-b/op:v1", host + "/team-a/..//team-b/op:v1", host + "/team-a/./../team-b/op:v1"} {
		before := *requests
		_, err := r.Render(context.Background(), render.Request{Spec: spec.Spec{Bundle: ref, Namespace: "demo"}, Name: "demo"})
		uncleanRefused(t, "spec.bundle "+ref, err, requests, before)
	}

	before := *requests
	_, err = r.Render(context.Background(), render.Request{Spec: spec.Spec{Catalog: host + "/team-a/catalog:v1", Package: "greeter-operator", Namespace: "demo"}, Name: "demo"})
	uncleanRefused(t, "a catalog's olm.bundle image", err, requests, before)

	// A plugin parameter, as the repo-server sends it.
	app := t.TempDir()
	if err := os.WriteFile(filepath.Join(app, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  namespace: demo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before = *requests
	env := []string{cmpserver.EnvAppProject + "=team-a", cmpserver.EnvParamPrefix + "BUNDLE=" + host + "/team-a/../team-b/op:v1"}
	pick := func(project string) (*render.Renderer, error) { r, _, err := rs.For(project); return r, err }
	err = cmpserver.Generate(context.Background(), pick, app, env, io.Discard, io.Discard)
	uncleanRefused(t, "a plugin parameter", err, requests, before)
}

// TestUncleanPathPassesNoTrustScope: without the fix a reference under a
// scope the cluster left off (team-a) reached team-b's image, which the
// cluster's enforce scope covers: an unsigned image past enforce. It is
// refused before any registry call.
func TestUncleanPathPassesNoTrustScope(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	host, requests := cleaningRegistry(t)
	bundletest.PushDir(t, host, "team-b/op", "v1", demoBundle)
	key := verifytest.NewKey(t, verifytest.ECDSA)
	p := verifytest.Policy(t, verifytest.Scope(host+"/team-b", "enforce", key), verifytest.Scope(host+"/team-a", "off"))
	base := &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}
	v := verify.New(p, verify.Options{Remote: base.Registry().RemoteOptions(context.Background()), Insecure: base.Registry().IsInsecure})
	r := &render.Renderer{Loader: base, Verifier: v}
	if _, err := r.Render(context.Background(), render.Request{Spec: spec.Spec{Bundle: host + "/team-b/op:v1", Namespace: "demo"}, Name: "demo"}); err == nil {
		t.Fatal("team-b's unsigned image rendered under enforce")
	}
	before := *requests
	_, err := r.Render(context.Background(), render.Request{Spec: spec.Spec{Bundle: host + "/team-a/../team-b/op:v1", Namespace: "demo"}, Name: "demo"})
	uncleanRefused(t, "team-a/../team-b under team-a's off scope", err, requests, before)
}
