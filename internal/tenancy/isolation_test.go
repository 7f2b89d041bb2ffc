package tenancy_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/engine"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/tenancy"
)

const demoBundle = "../../examples/demo/bundle"

// world is two registries, each accepting one team's credentials only, the
// sidecar's own credentials reaching both (a platform team's pull secret),
// and a tenancy policy: team-a may render from registry A, team-b from
// registry B, and team-x from both by policy, but holds team-a's
// credentials.
type world struct {
	regA, regB     string
	reqsB          *bundletest.Counter
	digestB        string
	policyFile     string
	sidecar        string
	credsDir       string
	base           *bundle.ImageLoader
	rs             *tenancy.Renderers
	eng            *engine.Engine
	metrics        *engine.Metrics
	policyTemplate string
}

func dockerConfig(t testing.TB, file string, logins map[string]string) {
	t.Helper()
	var parts []string
	for host, login := range logins {
		parts = append(parts, fmt.Sprintf("%q:{\"auth\":%q}", host, base64.StdEncoding.EncodeToString([]byte(login))))
	}
	if err := os.WriteFile(file, []byte(`{"auths":{`+strings.Join(parts, ",")+`}}`), 0o600); err != nil {
		t.Fatal(err)
	}
}

const policyText = `apiVersion: olm-cmp.dev/v1alpha1
kind: TenancyPolicy
unlistedProjects: deny
credentialsDir: %[1]s
projects:
- name: team-a
  images: [%[2]s/team-a]
  catalogs:
  - image: %[2]s/team-a/catalog
    packages: [greeter-operator]
  registryConfig: team-a.json
- name: %[4]s
  images: [%[3]s/team-b]
  registryConfig: team-b.json
- name: team-x
  images: [%[2]s/team-a, %[3]s/team-b]
  registryConfig: team-a.json
`

func newWorld(t testing.TB) *world {
	t.Helper()
	// Independent of the machine's docker login.
	t.Setenv("HOME", t.TempDir())
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	t.Setenv("REGISTRY_AUTH_FILE", "")
	t.Setenv("XDG_RUNTIME_DIR", "")
	w := &world{}
	w.regA, _ = bundletest.NewAuthRegistry(t, "team-a", "pass-a")
	w.regB, w.reqsB = bundletest.NewAuthRegistry(t, "team-b", "pass-b")
	bundletest.PushDir(t, w.regA, "team-a/op", "v1", demoBundle)
	w.digestB = bundletest.PushDir(t, w.regB, "team-b/op", "v1", demoBundle)

	w.credsDir = t.TempDir()
	dockerConfig(t, filepath.Join(w.credsDir, "team-a.json"), map[string]string{w.regA: "team-a:pass-a"})
	dockerConfig(t, filepath.Join(w.credsDir, "team-b.json"), map[string]string{w.regB: "team-b:pass-b"})
	w.sidecar = filepath.Join(t.TempDir(), "sidecar.json")
	dockerConfig(t, w.sidecar, map[string]string{w.regA: "team-a:pass-a", w.regB: "team-b:pass-b"})

	w.policyFile = filepath.Join(t.TempDir(), "tenancy.yaml")
	w.writePolicy(t, "team-b")
	w.base = &bundle.ImageLoader{CacheDir: t.TempDir(), RegistryConfig: w.sidecar, Insecure: []string{w.regA, w.regB}}
	w.rs = &tenancy.Renderers{Base: w.base, Policy: func() (*tenancy.Policy, error) { return tenancy.Load(w.policyFile) }}
	w.metrics = engine.NewMetrics()
	w.eng = engine.NewEngine(engine.EngineOptions{Loader: w.base, Metrics: w.metrics, Tenancy: engine.TenantsOf(w.rs)})
	return w
}

// writePolicy writes the policy with team B's entry named nameB.
func (w *world) writePolicy(t testing.TB, nameB string) {
	t.Helper()
	if err := os.WriteFile(w.policyFile, fmt.Appendf(nil, policyText, w.credsDir, w.regA, w.regB, nameB), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (w *world) render(project, image string) (*render.Result, engine.Info, error) {
	req := render.Request{
		Spec:    spec.Spec{Bundle: image, Namespace: "demo-system"},
		Name:    "demo",
		Project: project,
	}
	return w.eng.Render(context.Background(), req)
}

func refusal(t *testing.T, err error, want string) {
	t.Helper()
	var re *tenancy.RefusalError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got  %v\nwant a tenancy refusal containing %s", err, want)
	}
}

// TestOwnImagesRender: each team renders its own registry's image with its
// own credentials.
func TestOwnImagesRender(t *testing.T) {
	w := newWorld(t)
	for project, image := range map[string]string{"team-a": w.regA + "/team-a/op:v1", "team-b": w.regB + "/team-b/op:v1"} {
		res, _, err := w.render(project, image)
		if err != nil || len(res.Manifests) == 0 {
			t.Fatalf("%s: %v", project, err)
		}
	}
}

// pushCatalog pushes to registry A, as team-a/catalog:tag, a catalog whose
// greeter-operator 0.2.0 is the image bundleImage.
func (w *world) pushCatalog(t *testing.T, tag, bundleImage string) string {
	t.Helper()
	dir := t.TempDir()
	fbc := `{"schema": "olm.package", "name": "greeter-operator"}
{"schema": "olm.channel", "name": "stable", "package": "greeter-operator", "entries": [{"name": "g.v1"}]}
{"schema": "olm.bundle", "name": "g.v1", "package": "greeter-operator", "image": "` + bundleImage + `", "properties": [{"type": "olm.package", "value": {"packageName": "greeter-operator", "version": "0.2.0"}}]}
`
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(fbc), 0o644); err != nil {
		t.Fatal(err)
	}
	bundletest.Push(t, w.regA, "team-a/catalog", tag, bundletest.CatalogImage(t, dir, "/configs"))
	return w.regA + "/team-a/catalog:" + tag
}

func (w *world) renderCatalog(project, catalog, pkg string) (*render.Result, error) {
	req := render.Request{Spec: spec.Spec{Catalog: catalog, Package: pkg, Namespace: "demo-system"}, Name: "demo", Project: project}
	res, _, err := w.eng.Render(context.Background(), req)
	return res, err
}

// TestCatalogs: a project chooses from its catalogs the packages its entry
// lists, and a bundle the catalog chooses must be under its images too
// (refused before it is resolved: registry B hears nothing); a project
// without catalogs uses none.
func TestCatalogs(t *testing.T) {
	w := newWorld(t)
	good := w.pushCatalog(t, "good", w.regA+"/team-a/op:v1")
	evil := w.pushCatalog(t, "evil", w.regB+"/team-b/op@"+w.digestB)
	if res, err := w.renderCatalog("team-a", good, "greeter-operator"); err != nil || res.Catalog == nil {
		t.Fatalf("team-a's own catalog: %v", err)
	}
	_, err := w.renderCatalog("team-a", good, "cert-manager")
	refusal(t, err, fmt.Sprintf(`project "team-a" may not choose package "cert-manager" from spec.catalog "%s": tenancy policy tenancy.yaml line 6 (project "team-a") allows packages greeter-operator only; fix: choose one of those, or ask the cluster admin to add "cert-manager" to that entry's catalog packages`, good))
	before := w.reqsB.Total()
	_, err = w.renderCatalog("team-a", evil, "greeter-operator")
	refusal(t, err, fmt.Sprintf(`project "team-a" may not render bundle %s/team-b/op@%s (greeter-operator 0.2.0 from spec.catalog "%s"): tenancy policy tenancy.yaml line 6 (project "team-a") allows bundle images from %s/team-a only`, w.regB, w.digestB, evil, w.regA))
	if n := w.reqsB.Total() - before; n != 0 {
		t.Errorf("registry B got %d requests for a refused bundle", n)
	}
	_, err = w.renderCatalog("team-b", good, "greeter-operator")
	refusal(t, err, fmt.Sprintf(`project "team-b" may not use spec.catalog "%s": tenancy policy tenancy.yaml line 12 (project "team-b") allows no catalogs; fix:`, good))
}

// TestOtherRegistryRefusedBeforeAnyRequest: team A naming team B's registry
// is refused by the policy before a request reaches registry B, and the
// refusal names project, image, entry and fix.
func TestOtherRegistryRefusedBeforeAnyRequest(t *testing.T) {
	w := newWorld(t)
	before := w.reqsB.Total()
	_, _, err := w.render("team-a", w.regB+"/team-b/op:v1")
	refusal(t, err, fmt.Sprintf(`project "team-a" may not render spec.bundle "%s/team-b/op:v1": tenancy policy tenancy.yaml line 6 (project "team-a") allows bundle images from %s/team-a only; fix: use an image from there, or ask the cluster admin to add %s/team-b/op (or its registry) to that entry's images`, w.regB, w.regA, w.regB))
	if n := w.reqsB.Total() - before; n != 0 {
		t.Errorf("registry B got %d requests for a refused render", n)
	}
}

// TestCachedImageNeedsOwnCredentials: after team B's render put its private
// image in both caches (rendered output, extracted bundle), team X, whose
// policy allows the repository but whose credentials cannot read it, is
// refused by tag and by digest, every time (a refusal is never cached as a
// success), while team B keeps being served from the cache. The sidecar's
// own credentials, which could read it, are never used for team X.
func TestCachedImageNeedsOwnCredentials(t *testing.T) {
	w := newWorld(t)
	byDigest := w.regB + "/team-b/op@" + w.digestB
	if _, _, err := w.render("team-b", byDigest); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`cannot read image %s with its registryConfig "team-a.json" (tenancy policy tenancy.yaml line 15 (project "team-x")): the registry %s answered 401; fix: add credentials for %s to that entry's registryConfig`, byDigest, w.regB, w.regB)
	for range 2 {
		_, info, err := w.render("team-x", byDigest)
		refusal(t, err, `project "team-x" `+want)
		if info.Cache == "hit" {
			t.Fatal("served from the cache")
		}
		_, _, err = w.render("team-x", w.regB+"/team-b/op:v1")
		refusal(t, err, `project "team-x" cannot read image `+w.regB+"/team-b/op:v1")
	}
	if _, info, err := w.render("team-b", byDigest); err != nil || info.Cache != "hit" {
		t.Fatalf("team-b again: %v, cache %s", err, info.Cache)
	}
	// The verdict for team B's credentials is kept: its cache hit asked
	// registry B nothing.
	before := w.reqsB.Total()
	if _, _, err := w.render("team-b", byDigest); err != nil {
		t.Fatal(err)
	}
	if n := w.reqsB.Total() - before; n != 0 {
		t.Errorf("a cached verdict still sent %d requests", n)
	}
	if got := w.projectCount(t, "team-x", "refused"); got != 4 {
		t.Errorf("team-x refusals counted %v, want 4", got)
	}
}

// TestUnlistedAllowedStillGated: under unlistedProjects: allow, a project
// no entry names renders as without tenancy, with the sidecar's
// credentials, but is served a cached image only if those credentials read
// it: team B's private image, cached by team B's render, is refused to it
// once the sidecar's credentials no longer reach registry B.
func TestUnlistedAllowedStillGated(t *testing.T) {
	w := newWorld(t)
	text, err := os.ReadFile(w.policyFile)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(w.policyFile, []byte(strings.Replace(string(text), "unlistedProjects: deny", "unlistedProjects: allow", 1)), 0o644)
	byDigest := w.regB + "/team-b/op@" + w.digestB
	if _, _, err := w.render("team-b", byDigest); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.render("someone", w.regA+"/team-a/op:v1"); err != nil {
		t.Fatalf("an unlisted project, any image, the sidecar's credentials: %v", err)
	}
	dockerConfig(t, w.sidecar, map[string]string{w.regA: "team-a:pass-a"})
	_, info, err := w.render("someone", byDigest)
	refusal(t, err, `project "someone" cannot read image `+byDigest+` with the sidecar's registry credentials (tenancy policy tenancy.yaml, unlistedProjects: allow): the registry `+w.regB+` answered 401; fix: add credentials for `+w.regB+` to the sidecar's registry config, or ask the cluster admin for an entry for this project with its own`)
	if info.Cache == "hit" {
		t.Error("served from the cache")
	}
}

// TestRaceForOneImage: two projects racing for one uncached private image:
// every render of the project that may read it succeeds, every render of
// the one that may not is refused, whichever pulled first.
func TestRaceForOneImage(t *testing.T) {
	w := newWorld(t)
	byDigest := w.regB + "/team-b/op@" + w.digestB
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 16 {
		project := []string{"team-b", "team-x"}[i%2]
		wg.Go(func() {
			_, _, err := w.render(project, byDigest)
			var re *tenancy.RefusalError
			switch {
			case project == "team-b" && err != nil:
				errs <- fmt.Errorf("team-b: %v", err)
			case project == "team-x" && !errors.As(err, &re):
				errs <- fmt.Errorf("team-x was not refused: %v", err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestRenamedEntry: a policy edited while renders are cached (team-b's
// entry renamed) takes effect on the next request: the old name is refused,
// the new one renders anew (the cache key carries the policy's hash).
func TestRenamedEntry(t *testing.T) {
	w := newWorld(t)
	image := w.regB + "/team-b/op:v1"
	if _, _, err := w.render("team-b", image); err != nil {
		t.Fatal(err)
	}
	if _, info, err := w.render("team-b", image); err != nil || info.Cache != "hit" {
		t.Fatalf("second render: %v %s", err, info.Cache)
	}
	w.writePolicy(t, "team-b2")
	_, _, err := w.render("team-b", image)
	refusal(t, err, `project "team-b" may render nothing with olm-cmp: no entry of tenancy policy tenancy.yaml names it, and unlistedProjects is deny`)
	if _, info, err := w.render("team-b2", image); err != nil || info.Cache != "miss" {
		t.Fatalf("renamed entry: %v, cache %q (want a miss: another policy)", err, info.Cache)
	}
}

// TestProjectLabelsBounded: the metrics name policy entries, never project
// names: a thousand unknown projects are one series.
func TestProjectLabelsBounded(t *testing.T) {
	w := newWorld(t)
	for i := range 1000 {
		w.render(fmt.Sprintf("unknown-%d", i), w.regA+"/team-a/op:v1")
	}
	if n := testutil.CollectAndCount(w.metrics.Registry, engine.MetricProjects); n != 1 {
		t.Errorf("%d series for 1000 unknown projects", n)
	}
	if got := w.projectCount(t, "(unlisted)", "refused"); got != 1000 {
		t.Errorf("refusals counted %v", got)
	}
}

// projectCount reads engine.MetricProjects{entry, outcome} from the
// metrics registry, as a scrape would.
func (w *world) projectCount(t *testing.T, entry, outcome string) float64 {
	t.Helper()
	mfs, err := w.metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != engine.MetricProjects {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["entry"] == entry && labels["outcome"] == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestMissingRegistryConfigNamed: an entry whose registryConfig is not in
// credentialsDir pulls without credentials; the registry's 401 is reported
// as the missing file, naming the entry and the fix.
func TestMissingRegistryConfigNamed(t *testing.T) {
	w := newWorld(t)
	if err := os.Remove(filepath.Join(w.credsDir, "team-b.json")); err != nil {
		t.Fatal(err)
	}
	_, _, err := w.render("team-b", w.regB+"/team-b/op:v1")
	refusal(t, err, fmt.Sprintf(`project "team-b" cannot read image %s/team-b/op:v1: its registryConfig "team-b.json" (tenancy policy tenancy.yaml line 12 (project "team-b")) is missing from credentialsDir, so the pull had no credentials and the registry %s answered 401; fix: ask the cluster admin to add the key team-b.json with credentials for %s to the credentials Secret mounted at credentialsDir (olm-cmp-tenant-registry), or to correct that entry's registryConfig`, w.regB, w.regB, w.regB))
}
