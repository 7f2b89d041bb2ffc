package cmpserver

import (
	"archive/tar"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/olm-cmp/olm-cmp/internal/cmpserver/pluginpb"
	"github.com/olm-cmp/olm-cmp/internal/engine"
	"github.com/olm-cmp/olm-cmp/internal/engine/enginetest"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/transform/jsontest"
)

// specEcho is a renderer that answers the effective request as JSON, to test
// what reaches the render function.
type specEcho struct{ calls atomic.Int32 }

func (e *specEcho) Render(_ context.Context, req render.Request) (*render.Result, engine.Info, error) {
	e.calls.Add(1)
	js, _ := json.Marshal(struct {
		Spec        spec.Spec
		Name        string
		APIVersions []string
		HasExtra    bool
	}{req.Spec, req.Name, req.APIVersions, fileExists(filepath.Join(req.SourceDir, "extra-config.yaml"))})
	return &render.Result{Manifests: []string{string(js)}, JSON: []string{string(js)}}, engine.Info{}, nil
}

// rendererFunc is a render function without cache information.
type rendererFunc func(context.Context, render.Request) (*render.Result, error)

func (f rendererFunc) Render(ctx context.Context, req render.Request) (*render.Result, engine.Info, error) {
	res, err := f(ctx, req)
	return res, engine.Info{}, err
}

func mustBuildRequest(t *testing.T, app, root string) render.Request {
	t.Helper()
	req, _, err := BuildRequest(app, root, &AppEnv{AppName: "tiny-app"})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

type echoed struct {
	Spec        spec.Spec
	Name        string
	APIVersions []string
	HasExtra    bool
}

func decodeEcho(t *testing.T, resp interface{ GetManifests() []string }) echoed {
	t.Helper()
	var e echoed
	if len(resp.GetManifests()) != 1 {
		t.Fatalf("want one manifest, got %d", len(resp.GetManifests()))
	}
	if err := json.Unmarshal([]byte(resp.GetManifests()[0]), &e); err != nil {
		t.Fatal(err)
	}
	return e
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestGenerateManifestRendersDirectoryBundle drives the real render engine
// through the socket: the repository's app renders its bundle from elsewhere
// in the repository, plus the extra manifest.
func TestGenerateManifestRendersDirectoryBundle(t *testing.T) {
	m := engine.NewMetrics()
	ts := startServer(t, engine.NewEngine(engine.EngineOptions{Metrics: m}), func(o *ServerOptions) { o.Metrics = m })
	ts.m = m
	tgz := tgzOf(t, repoDir)
	resp, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "apps/tiny"})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(resp.Manifests, "\n---\n")
	for _, want := range []string{`"kind":"Namespace"`, `"kind":"CustomResourceDefinition"`, `"kind":"Deployment"`, `"name":"tiny-extra"`, "pull-secret"} {
		if !strings.Contains(all, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	// Each manifest is one object in compact JSON (the repo-server parses
	// that faster than YAML), the very object the YAML render (the classic
	// mode's output) says.
	direct, err := (&render.Renderer{}).Render(ctxT(t), mustBuildRequest(t, filepath.Join(repoDir, "apps/tiny"), repoDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Manifests) != len(direct.Manifests) {
		t.Fatalf("%d manifests, the YAML render has %d", len(resp.Manifests), len(direct.Manifests))
	}
	for i, m := range resp.Manifests {
		if !strings.HasPrefix(m, "{") || strings.Contains(m, "\n") || !json.Valid([]byte(m)) {
			t.Errorf("manifest %d is not compact JSON:\n%s", i, m)
			continue
		}
		if a, b := jsontest.AsJSON(t, m), jsontest.AsRepoServerReads(t, direct.Manifests[i]); !reflect.DeepEqual(a, b) {
			t.Errorf("manifest %d differs from the YAML render:\n%s\n%s", i, m, direct.Manifests[i])
		}
	}
	// The same request again is served from the cache, byte-identical.
	again, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "apps/tiny"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(again.Manifests, "\n---\n") != all {
		t.Error("second render differs")
	}
	if got := metricValue(t, m, engine.MetricCacheHits, "render"); got != 1 {
		t.Errorf("cache hits = %v, want 1", got)
	}
	if got := metricValue(t, m, engine.MetricRequests, "OK", "GenerateManifest"); got != 2 {
		t.Errorf("GenerateManifest OK = %v, want 2", got)
	}
	logs := ts.logs.String()
	for _, want := range []string{`"app":"tiny-app"`, `"app_namespace":"argocd"`, `"duration_ms"`, `"wait_ms"`, `"cache":"hit"`, `"kept_yaml":0`} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %s:\n%s", want, logs)
		}
	}
	// Nothing of the request is left behind.
	if left, _ := filepath.Glob(filepath.Join(ts.srv.work.path, "req-*")); len(left) != 0 {
		t.Errorf("request directories left: %v", left)
	}
}

func TestGenerateManifestErrors(t *testing.T) {
	ts := startServer(t, engine.NewEngine(engine.EngineOptions{}))
	good := tgzOf(t, repoDir)

	t.Run("checksum mismatch", func(t *testing.T) {
		_, err := ts.generate(ctxT(t), t, call{tgz: good, appRelPath: "apps/tiny", checksum: strings.Repeat("0", 64)})
		wantStatus(t, err, codes.DataLoss, "checksum mismatch")
	})
	t.Run("path traversal", func(t *testing.T) {
		tgz := tgzEntries(t, []tar.Header{{Name: "../escaped.yaml", Typeflag: tar.TypeReg}}, map[string]string{"../escaped.yaml": "x"})
		_, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "."})
		wantStatus(t, err, codes.InvalidArgument, "path traversal")
		if fileExists(filepath.Join(ts.srv.work.path, "escaped.yaml")) || fileExists(filepath.Join(ts.srv.o.WorkDir, "escaped.yaml")) {
			t.Error("file written outside the work directory")
		}
	})
	t.Run("absolute path", func(t *testing.T) {
		tgz := tgzEntries(t, []tar.Header{{Name: "/etc/olm-cmp-test", Typeflag: tar.TypeReg}}, nil)
		_, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "."})
		wantStatus(t, err, codes.InvalidArgument, "absolute path")
	})
	t.Run("escaping symlink", func(t *testing.T) {
		tgz := tgzEntries(t, []tar.Header{
			{Name: "app/", Typeflag: tar.TypeDir, Mode: 0o755},
			{Name: "app/olm-cmp.yaml", Typeflag: tar.TypeSymlink, Linkname: "../../../../etc/passwd"},
		}, nil)
		_, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "app"})
		wantStatus(t, err, codes.InvalidArgument, "leaves the repository")
	})
	t.Run("symlink chain escaping", func(t *testing.T) {
		// Each target is inside lexically; only real resolution sees l2 leave.
		tgz := tgzEntries(t, []tar.Header{
			{Name: "a/b/c/", Typeflag: tar.TypeDir, Mode: 0o755},
			{Name: "a/b/c/l1", Typeflag: tar.TypeSymlink, Linkname: "../.."},
			{Name: "a/b/c/l2", Typeflag: tar.TypeSymlink, Linkname: "l1/../../.."},
		}, nil)
		_, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "."})
		wantStatus(t, err, codes.InvalidArgument, "resolves outside the repository")
	})
	t.Run("entry below a symlink", func(t *testing.T) {
		tgz := tgzEntries(t, []tar.Header{
			{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "."},
			{Name: "l/x.yaml", Typeflag: tar.TypeReg},
		}, map[string]string{"l/x.yaml": "x"})
		_, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "."})
		wantStatus(t, err, codes.InvalidArgument, "below the symbolic link")
	})
	t.Run("hard link", func(t *testing.T) {
		tgz := tgzEntries(t, []tar.Header{{Name: "h", Typeflag: tar.TypeLink, Linkname: "/etc/passwd"}}, nil)
		_, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "."})
		wantStatus(t, err, codes.InvalidArgument, "hard links")
	})
	t.Run("size cap", func(t *testing.T) {
		small := startServer(t, &specEcho{}, func(o *ServerOptions) { o.Limits.MaxExtracted = 100 })
		tgz := tgzEntries(t, []tar.Header{{Name: "big", Typeflag: tar.TypeReg}}, map[string]string{"big": strings.Repeat("x", 1000)})
		_, err := small.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "."})
		wantStatus(t, err, codes.InvalidArgument, "more than 100 bytes")
	})
	t.Run("appRelPath outside", func(t *testing.T) {
		_, err := ts.generate(ctxT(t), t, call{tgz: good, appRelPath: "../.."})
		wantStatus(t, err, codes.InvalidArgument, "outside the repository")
	})
	t.Run("no olm-cmp.yaml", func(t *testing.T) {
		_, err := ts.generate(ctxT(t), t, call{tgz: good, appRelPath: "bundles/tiny"})
		wantStatus(t, err, codes.InvalidArgument, "olm-cmp.yaml not found in bundles/tiny")
	})
	t.Run("render error is the message", func(t *testing.T) {
		_, err := ts.generate(ctxT(t), t, call{tgz: good, appRelPath: "apps/tiny", params: []map[string]any{{"name": "certificateProvider", "string": "bogus"}}})
		wantStatus(t, err, codes.InvalidArgument, `spec.certificateProvider "bogus": must be one of cert-manager, service-ca, none`)
		// The temporary directory never shows in what the user reads.
		if strings.Contains(status.Convert(err).Message(), ts.srv.o.WorkDir) {
			t.Errorf("message leaks the work directory: %v", err)
		}
	})
	t.Run("unknown parameter", func(t *testing.T) {
		_, err := ts.generate(ctxT(t), t, call{tgz: good, appRelPath: "apps/tiny", params: []map[string]any{{"name": "namespac", "string": "x"}}})
		wantStatus(t, err, codes.InvalidArgument, `parameter "namespac": unknown spec field "namespac"`)
	})
	t.Run("unknown plugin env", func(t *testing.T) {
		_, err := ts.generate(ctxT(t), t, call{tgz: good, appRelPath: "apps/tiny", env: map[string]string{"ARGOCD_ENV_NAME_SPACE_X": "x"}})
		wantStatus(t, err, codes.InvalidArgument, `plugin env ARGOCD_ENV_NAME_SPACE_X: unknown spec field`)
	})
}

func wantStatus(t *testing.T, err error, code codes.Code, msg string) {
	t.Helper()
	st := status.Convert(err)
	if err == nil || st.Code() != code || !strings.Contains(st.Message(), msg) {
		t.Fatalf("want %v containing %q, got %v", code, msg, err)
	}
}

func TestPrecedence(t *testing.T) {
	echo := &specEcho{}
	ts := startServer(t, echo)
	tgz := tgzOf(t, repoDir)
	ctx := ctxT(t)

	// olm-cmp.yaml alone.
	resp, err := ts.generate(ctx, t, call{tgz: tgz, appRelPath: "apps/tiny"})
	if err != nil {
		t.Fatal(err)
	}
	e := decodeEcho(t, resp)
	if e.Spec.Namespace != "tiny-system" || e.Name != "tiny-operator" || !e.HasExtra || e.APIVersions != nil {
		t.Errorf("file only: %+v", e)
	}

	// Plugin env beats the file; names in any case, '_' ignored.
	env := map[string]string{
		"ARGOCD_ENV_namespace":           "from-env",
		"ARGOCD_ENV_WATCH_NAMESPACES":    "a, b",
		"ARGOCD_ENV_createNamespace":     "false",
		"ARGOCD_ENV_IMAGES":              "quay.io/=mirror.example.com/",
		"ARGOCD_ENV_certificateProvider": "service-ca",
		"KUBE_API_VERSIONS":              "v1,apps/v1,apps/v1/Deployment",
	}
	resp, err = ts.generate(ctx, t, call{tgz: tgz, appRelPath: "apps/tiny", env: env})
	if err != nil {
		t.Fatal(err)
	}
	e = decodeEcho(t, resp)
	if e.Spec.Namespace != "from-env" || strings.Join(e.Spec.WatchNamespaces, ",") != "a,b" || e.Spec.CreatesNamespace() ||
		e.Spec.Images["quay.io/"] != "mirror.example.com/" || e.Spec.CertificateProvider != "service-ca" {
		t.Errorf("env: %+v", e.Spec)
	}
	if strings.Join(e.APIVersions, " ") != "v1 apps/v1 apps/v1/Deployment" {
		t.Errorf("APIVersions = %v", e.APIVersions)
	}

	// Parameters beat both; an empty array clears; "" leaves the value.
	params := []map[string]any{
		{"name": "namespace", "string": "from-param"},
		{"name": "watchNamespaces", "array": []string{"c"}},
		{"name": "imagePullSecrets", "array": []string{}},
		{"name": "images", "map": map[string]string{"registry.redhat.io/": "mirror/"}},
		{"name": "certificateProvider", "string": ""},
		{"name": "syncWaves", "string": "crds: -10"},
		{"name": "config", "string": `{"env":[{"name":"A","value":"b"}]}`},
	}
	resp, err = ts.generate(ctx, t, call{tgz: tgz, appRelPath: "apps/tiny", env: env, params: params})
	if err != nil {
		t.Fatal(err)
	}
	e = decodeEcho(t, resp)
	s := e.Spec
	if s.Namespace != "from-param" || strings.Join(s.WatchNamespaces, ",") != "c" || len(s.ImagePullSecrets) != 0 ||
		len(s.Images) != 1 || s.Images["registry.redhat.io/"] != "mirror/" || s.CertificateProvider != "service-ca" ||
		s.SyncWaves.CRDs == nil || *s.SyncWaves.CRDs != -10 || s.Config == nil || s.Config.Env[0].Name != "A" ||
		s.CreatesNamespace() {
		t.Errorf("params: %+v", s)
	}
	// Unset fields keep the file's values.
	if s.Bundle != "../../bundles/tiny" || strings.Join(s.Exclude, ",") != "ConsoleYAMLSample" {
		t.Errorf("file values lost: %+v", s)
	}

	// A value that does not fit its field names the parameter.
	_, err = ts.generate(ctx, t, call{tgz: tgz, appRelPath: "apps/tiny", params: []map[string]any{{"name": "createNamespace", "string": "maybe"}}})
	wantStatus(t, err, codes.InvalidArgument, `parameter "createNamespace": createNamespace must be true or false`)
	_, err = ts.generate(ctx, t, call{tgz: tgz, appRelPath: "apps/tiny", params: []map[string]any{{"name": "syncWaves", "string": "bogus: 1"}}})
	wantStatus(t, err, codes.InvalidArgument, `parameter "syncWaves": unknown field "syncWaves.bogus": known fields are crds, crs, operator, rbac, webhooks`)
}

func TestAnnouncement(t *testing.T) {
	ts := startServer(t, &specEcho{})
	tgz := tgzOf(t, repoDir)
	resp, err := ts.announce(ctxT(t), t, call{tgz: tgz, appRelPath: "apps/tiny", env: map[string]string{"ARGOCD_ENV_EXAMPLES": "Widget"}})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	for i, a := range resp.ParameterAnnouncements {
		byName[a.Name] = i
		if a.Title == "" || a.Tooltip == "" || a.ItemType != "string" {
			t.Errorf("%s: incomplete announcement %+v", a.Name, a)
		}
	}
	for _, p := range spec.Params() {
		if _, ok := byName[p.Name]; !ok {
			t.Errorf("%s not announced", p.Name)
		}
	}
	if len(resp.ParameterAnnouncements) != len(spec.Params()) {
		t.Errorf("%d announcements for %d fields", len(resp.ParameterAnnouncements), len(spec.Params()))
	}
	get := func(n string) (str string, arr []string, m map[string]string, coll string, req bool) {
		a := resp.ParameterAnnouncements[byName[n]]
		return a.String_, a.Array, a.Map, a.CollectionType, a.Required
	}
	if s, _, _, c, req := get("namespace"); s != "tiny-system" || c != "string" || !req {
		t.Errorf("namespace: %q %q %v", s, c, req)
	}
	if _, a, _, c, _ := get("imagePullSecrets"); strings.Join(a, ",") != "pull-secret" || c != "array" {
		t.Errorf("imagePullSecrets: %v %q", a, c)
	}
	if _, a, _, _, _ := get("examples"); strings.Join(a, ",") != "Widget" {
		t.Errorf("examples (from plugin env): %v", a)
	}
	if _, _, m, c, _ := get("images"); c != "map" || m == nil && false {
		t.Errorf("images: %v %q", m, c)
	}
	if s, _, _, _, _ := get("createNamespace"); s != "true" {
		t.Errorf("createNamespace default: %q", s)
	}

	// Without olm-cmp.yaml every field is still announced, empty.
	resp, err = ts.announce(ctxT(t), t, call{tgz: tgz, appRelPath: "bundles"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ParameterAnnouncements) != len(spec.Params()) {
		t.Errorf("no file: %d announcements", len(resp.ParameterAnnouncements))
	}
}

func TestDiscovery(t *testing.T) {
	ts := startServer(t, &specEcho{})
	tgz := tgzOf(t, repoDir)
	ctx := ctxT(t)
	for path, want := range map[string]bool{"apps/tiny": true, "apps": false, "bundles/tiny": false, "no/such/dir": false} {
		resp, err := ts.match(ctx, t, call{tgz: tgz, appRelPath: path})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if resp.IsSupported != want || !resp.IsDiscoveryEnabled {
			t.Errorf("%s: %+v, want supported=%v", path, resp, want)
		}
	}
	cfg, err := ts.client.CheckPluginConfiguration(ctx, &emptypb.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.IsDiscoveryConfigured || cfg.ProvideGitCreds {
		t.Errorf("CheckPluginConfiguration: %+v", cfg)
	}
}

// blocking renders until its context ends.
type blocking struct{ started chan struct{} }

func (b *blocking) Render(ctx context.Context, _ render.Request) (*render.Result, engine.Info, error) {
	close(b.started)
	<-ctx.Done()
	return nil, engine.Info{}, fmt.Errorf("rendering: %w", ctx.Err())
}

func TestDeadlineHonoured(t *testing.T) {
	b := &blocking{started: make(chan struct{})}
	ts := startServer(t, b, func(o *ServerOptions) { o.DeadlineMargin = 700 * time.Millisecond })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := ts.generate(ctx, t, call{tgz: tgzOf(t, repoDir), appRelPath: "apps/tiny"})
	took := time.Since(start)
	wantStatus(t, err, codes.DeadlineExceeded, "did not finish within the repo-server's")
	// "within the repo-server's 2s deadline.", the caller's whole deadline.
	if msg := status.Convert(err).Message(); !regexp.MustCompile(`within the repo-server's [0-9.]+s deadline\. `).MatchString(msg) {
		t.Errorf("message does not name the deadline in plain words: %s", msg)
	}
	// The server answers before the caller's own deadline fires, so the
	// caller reads olm-cmp's explanation, not a bare "context deadline exceeded".
	if !strings.Contains(status.Convert(err).Message(), "raise the repo-server timeout") {
		t.Errorf("message: %v", err)
	}
	if took > 4*time.Second {
		t.Errorf("took %v", took)
	}
}

// writeImageApp writes a repository whose app names an image bundle.
func writeImageApp(t *testing.T) string {
	dir := t.TempDir()
	app := filepath.Join(dir, "apps", "img")
	os.MkdirAll(app, 0o755)
	os.WriteFile(filepath.Join(app, spec.FileName), []byte(`apiVersion: olm-cmp.dev/v1alpha1
kind: OperatorBundle
metadata: {name: tiny-operator}
spec:
  bundle: example.com/tiny-bundle
  version: v1
  namespace: tiny-system
`), 0o644)
	return dir
}

// TestConcurrentRequestsRenderOnce: 100 concurrent GenerateManifest calls for
// one bundle image pull once, render once and answer identically.
func TestConcurrentRequestsRenderOnce(t *testing.T) {
	abs, _ := filepath.Abs(filepath.Join(repoDir, "bundles/tiny"))
	loader := enginetest.NewLoader("example.com/tiny-bundle:v1", abs, "sha256:"+strings.Repeat("a", 64))
	loader.Delay = 300 * time.Millisecond
	m := engine.NewMetrics()
	eng := engine.NewEngine(engine.EngineOptions{Loader: loader, Metrics: m})
	ts := startServer(t, eng, func(o *ServerOptions) { o.Metrics = m })
	tgz := tgzOf(t, writeImageApp(t))

	const n = 100
	var wg sync.WaitGroup
	outs := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "apps/img"})
			errs[i] = err
			if err == nil {
				outs[i] = strings.Join(resp.Manifests, "\n---\n")
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if outs[i] != outs[0] {
			t.Fatalf("call %d answered differently", i)
		}
	}
	if !strings.Contains(outs[0], `"kind":"Deployment"`) {
		t.Fatalf("unexpected output:\n%s", outs[0])
	}
	if got := metricValue(t, m, engine.MetricRenders, "ok"); got != 1 {
		t.Errorf("%v renders, want 1", got)
	}
	if got := loader.Loads.Load(); got != 1 {
		t.Errorf("%d bundle loads, want 1", got)
	}
	// Tags are re-resolved per request (the image loader shares concurrent ones).
	if got := loader.Resolves.Load(); got < 1 || got > n {
		t.Errorf("%d resolves", got)
	}
	if got := metricValue(t, m, engine.MetricRequests, "OK", "GenerateManifest"); got != n {
		t.Errorf("requests metric = %v", got)
	}
}

func TestShutdownRemovesSocketAndFinishesInFlight(t *testing.T) {
	b := &slowRenderer{delay: 500 * time.Millisecond}
	ts := startServer(t, b)
	tgz := tgzOf(t, repoDir)
	res := make(chan error, 1)
	go func() {
		_, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "apps/tiny"})
		res <- err
	}()
	// Wait until the render is under way, then shut down.
	for b.started.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ts.srv.Shutdown(ctx)
	if err := <-res; err != nil {
		t.Errorf("in-flight request failed during graceful shutdown: %v", err)
	}
	if _, err := os.Lstat(ts.srv.SocketPath()); !os.IsNotExist(err) {
		t.Errorf("socket still there: %v", err)
	}
	if err := ts.srv.Ready(); err == nil {
		t.Error("ready after shutdown")
	}
}

type slowRenderer struct {
	delay   time.Duration
	started atomic.Int32
}

func (s *slowRenderer) Render(ctx context.Context, _ render.Request) (*render.Result, engine.Info, error) {
	s.started.Add(1)
	select {
	case <-time.After(s.delay):
		return &render.Result{Manifests: []string{"kind: ConfigMap"}}, engine.Info{}, nil
	case <-ctx.Done():
		return nil, engine.Info{}, ctx.Err()
	}
}

func TestSocketSetup(t *testing.T) {
	dir, err := os.MkdirTemp("", "olmcmp")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cfg := DefaultPluginConfig()
	path := filepath.Join(dir, "olm-cmp-v1.sock")

	// A stale socket (nobody listening) is replaced.
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	srv := NewServer(ServerOptions{Config: cfg, SocketDir: dir, WorkDir: t.TempDir(), Renderer: &specEcho{}})
	lis, err := srv.Listen()
	if err != nil {
		t.Fatalf("stale socket not replaced: %v", err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o777 {
		t.Errorf("socket mode %v (%v): uid 999 must be able to connect", fi.Mode(), err)
	}
	if err := srv.Ready(); err != nil {
		t.Errorf("not ready: %v", err)
	}
	// A live socket is not stolen.
	other := NewServer(ServerOptions{Config: cfg, SocketDir: dir, WorkDir: t.TempDir(), Renderer: &specEcho{}})
	if _, err := other.Listen(); err == nil || !strings.Contains(err.Error(), "another server") {
		t.Errorf("live socket: %v", err)
	}
	lis.Close()
	srv.Shutdown(context.Background())
	other.Shutdown(context.Background())

	// A file that is not a socket is never deleted.
	os.WriteFile(path, []byte("keep"), 0o644)
	srv = NewServer(ServerOptions{Config: cfg, SocketDir: dir, WorkDir: t.TempDir(), Renderer: &specEcho{}})
	if _, err := srv.Listen(); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("non-socket: %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "keep" {
		t.Error("non-socket file replaced")
	}
}

// TestLargeMessages: Argo CD may send chunks up to its 100 MB message limit
// (ARGOCD_CMP_CHUNK_SIZE); gRPC's default 4 MB receive limit would refuse them.
func TestLargeMessages(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, repoDir, dir)
	noise := make([]byte, 6<<20)
	rand.NewChaCha8([32]byte{1}).Read(noise) // incompressible
	os.WriteFile(filepath.Join(dir, "noise.bin"), noise, 0o644)
	tgz := tgzOf(t, dir)
	if len(tgz) < 5<<20 {
		t.Fatalf("tarball only %d bytes", len(tgz))
	}
	ts := startServer(t, &specEcho{})
	s, err := ts.client.GenerateManifest(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	c := call{tgz: nil, appRelPath: "apps/tiny", checksum: sum(tgz)}
	c.send(t, s) // metadata only
	if err := s.Send(&pluginpb.AppStreamRequest{Request: &pluginpb.AppStreamRequest_File{File: &pluginpb.File{Chunk: tgz}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CloseAndRecv(); err != nil {
		t.Fatalf("one %d-byte chunk: %v", len(tgz), err)
	}
}

// TestPanicIsOneRequestsError: a panic while rendering one application
// answers that request with Internal and leaves the server serving.
func TestPanicIsOneRequestsError(t *testing.T) {
	var n atomic.Int32
	ts := startServer(t, rendererFunc(func(context.Context, render.Request) (*render.Result, error) {
		if n.Add(1) == 1 {
			panic("boom")
		}
		return &render.Result{Manifests: []string{"kind: ConfigMap"}}, nil
	}))
	tgz := tgzOf(t, repoDir)
	_, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "apps/tiny"})
	wantStatus(t, err, codes.Internal, "olm-cmp internal error: boom")
	if _, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "apps/tiny"}); err != nil {
		t.Fatalf("server broken after a panic: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(ts.srv.work.path, "req-*")); len(left) != 0 {
		t.Errorf("request directories left after the panic: %v", left)
	}
}
