package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/checks/inprocess"
	"github.com/olm-cmp/olm-cmp/internal/engine"
	"github.com/olm-cmp/olm-cmp/internal/httpapi"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/verify"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

func TestMain(m *testing.M) {
	inprocess.Install() // renders check what olm-cmp-check checks in this process
	goleak.VerifyTestMain(m)
}

// fakeRenderer answers two objects for bundle "good/bundle:1", fails
// otherwise, and records the last request and the number of calls.
type fakeRenderer struct {
	last    render.Request
	calls   atomic.Int32
	started chan struct{} // closed by the first slow render, when set
}

func (f *fakeRenderer) Render(ctx context.Context, req render.Request) (*render.Result, engine.Info, error) {
	f.last = req
	f.calls.Add(1)
	ref := req.Spec.Bundle
	if req.Spec.Catalog != "" {
		ref = "slow/bundle:1"
	}
	switch ref {
	case "good/bundle:1":
		return &render.Result{
			Origin:    bundle.Origin{Digest: "sha256:abc"},
			Manifests: []string{"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n"},
			Warnings:  []string{`dropped "Foo": the cluster does not serve example.com/v1`},
		}, engine.Info{Cache: "off", Digest: "sha256:abc"}, nil
	case "handler-panic/bundle:1":
		panic("boom in the handler")
	case "hostile/bundle:1":
		return &render.Result{
			Origin:    bundle.Origin{Digest: "sha256:abc"},
			Manifests: []string{"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n"},
			Warnings:  []string{"requirement from the bundle: \x1b[2J\x1b]0;owned\x07 line\r\nSet-Cookie: x=1 \u202eevil"},
		}, engine.Info{Cache: "off", Digest: "sha256:abc"}, nil
	case "panic/bundle:1":
		return nil, engine.Info{}, &engine.PanicError{Value: "boom", Stack: []byte("goroutine 1 [running]:\nmain.main()")}
	case "many/bundle:1":
		var lines []string
		for i := range 5000 {
			lines = append(lines, fmt.Sprintf("spec.clusterAPIs[%d] %q: not a group/version", i, strings.Repeat("x", 20)))
		}
		return nil, engine.Info{}, errors.New(strings.Join(lines, "\n"))
	case "slow/bundle:1":
		if f.started != nil {
			close(f.started)
		}
		<-ctx.Done()
		return nil, engine.Info{}, ctx.Err()
	case "stalling/bundle:1":
		<-ctx.Done()
		return nil, engine.Info{}, fmt.Errorf("resolving stalling/bundle:1: waiting for the registry's answer headers: %w", ctx.Err())
	}
	return nil, engine.Info{}, errors.New(`resolving bad/bundle:1: MANIFEST_UNKNOWN`)
}

// servers are the two listeners of one server: probes and metrics, and render.
type servers struct {
	ops, render *httptest.Server
	f           *fakeRenderer
	m           *engine.Metrics
}

func newServers(t *testing.T, ready func() error) servers {
	f := &fakeRenderer{}
	m := engine.NewMetrics()
	o := httpapi.Options{Renderer: f, Gatherer: m.Registry, Ready: ready, Observer: m}
	s := servers{ops: httptest.NewServer(httpapi.OpsHandler(o)), render: httptest.NewServer(httpapi.RenderHandler(o)), f: f, m: m}
	t.Cleanup(s.ops.Close)
	t.Cleanup(s.render.Close)
	return s
}

func do(t *testing.T, method, url, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestProbes(t *testing.T) {
	var notReady error = errors.New("plugin socket not listening")
	s := newServers(t, func() error { return notReady })
	srv := s.ops
	if resp, body := do(t, "GET", srv.URL+"/healthz", ""); resp.StatusCode != 200 || body != "ok\n" {
		t.Errorf("healthz: %d %q", resp.StatusCode, body)
	}
	resp, body := do(t, "GET", srv.URL+"/readyz", "")
	if resp.StatusCode != 503 || !strings.Contains(body, `"message":"plugin socket not listening"`) {
		t.Errorf("readyz not ready: %d %s", resp.StatusCode, body)
	}
	notReady = nil
	if resp, _ := do(t, "GET", srv.URL+"/readyz", ""); resp.StatusCode != 200 {
		t.Errorf("readyz ready: %d", resp.StatusCode)
	}
	if resp, body := do(t, "GET", srv.URL+"/nope", ""); resp.StatusCode != 404 || !strings.Contains(body, "/healthz, /readyz and /metrics") {
		t.Errorf("404: %d %s", resp.StatusCode, body)
	}
	// The render endpoint is not on the probe and metrics listener, which
	// the sidecar exposes to the cluster network.
	if resp, _ := do(t, "POST", srv.URL+"/v1/render", `{"bundle":"good/bundle:1","namespace":"ns"}`); resp.StatusCode != 404 || s.f.calls.Load() != 0 {
		t.Errorf("POST /v1/render on the probe listener: %d, %d renders", resp.StatusCode, s.f.calls.Load())
	}
	// And the render listener serves nothing else.
	if resp, body := do(t, "GET", s.render.URL+"/metrics", ""); resp.StatusCode != 404 || !strings.Contains(body, "POST /v1/render") {
		t.Errorf("/metrics on the render listener: %d %s", resp.StatusCode, body)
	}
	if resp, _ := do(t, "GET", s.render.URL+"/v1/render", ""); resp.StatusCode != 405 {
		t.Errorf("GET /v1/render: %d", resp.StatusCode)
	}
}

func TestRender(t *testing.T) {
	s := newServers(t, nil)
	srv, f := s.render, s.f

	// A whole olm-cmp.yaml document, as YAML.
	doc := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: demo}\nspec:\n  bundle: good/bundle:1\n  namespace: ns\n"
	resp, body := do(t, "POST", srv.URL+"/v1/render?apiVersions=v1,apps/v1", doc)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/yaml" {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if body != "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n" {
		t.Errorf("body:\n%s", body)
	}
	if resp.Header.Get("X-Olm-Cmp-Digest") != "sha256:abc" || !strings.Contains(resp.Header.Get("Warning"), `299 - "dropped \"Foo\"`) {
		t.Errorf("headers: %v", resp.Header)
	}
	if f.last.Name != "demo" || f.last.Spec.Namespace != "ns" || strings.Join(f.last.APIVersions, " ") != "v1 apps/v1" || f.last.SourceDir != "" {
		t.Errorf("request: %+v", f.last)
	}

	// A bare spec, as JSON.
	if resp, body := do(t, "POST", srv.URL+"/v1/render", `{"bundle":"good/bundle:1","namespace":"ns2"}`); resp.StatusCode != 200 || f.last.Spec.Namespace != "ns2" {
		t.Errorf("bare spec: %d %s", resp.StatusCode, body)
	}

	for _, c := range []struct {
		body string
		code int
		msg  string
	}{
		{"", 400, "empty body"},
		{"[1,2]", 400, "not a JSON or YAML object"},
		{`{"bundle":"good/bundle:1","namespac":"x"}`, 400, `unknown field \"namespac\"`},
		{"apiVersion: v1\nkind: Pod\n", 400, `request body: line 2: kind: an olm-cmp spec starts with apiVersion: olm-cmp.dev/v1alpha1 and kind: OperatorBundle, got \"v1\" and \"Pod\"`},
		{`{"bundle":"./bundle","namespace":"x"}`, 400, "image bundles only"},
		{`{"catalog":"/etc","package":"x","namespace":"x"}`, 400, "catalog images only"},
		{`{"bundle":"bad/bundle:1","namespace":"x"}`, 422, "MANIFEST_UNKNOWN"},
	} {
		resp, body := do(t, "POST", srv.URL+"/v1/render", c.body)
		var e struct{ Message string }
		if resp.StatusCode != c.code || resp.Header.Get("Content-Type") != "application/json" || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(body, c.msg) {
			t.Errorf("%q: %d %s, want %d with %q", c.body, resp.StatusCode, body, c.code, c.msg)
		}
	}
}

func TestRenderTimeout(t *testing.T) {
	f := &fakeRenderer{}
	srv := httptest.NewServer(httpapi.RenderHandler(httpapi.Options{Renderer: f, Timeout: 50 * time.Millisecond}))
	defer srv.Close()
	// The message names what was rendered and the timeout that fired, and
	// what was under way when the renderer says so; never a bare "context
	// deadline exceeded".
	for bundle, want := range map[string]string{
		"slow/bundle:1":     `{"message":"olm-cmp: rendering \"slow/bundle:1\" did not finish within the 50ms render timeout (serve --render-timeout)"}` + "\n",
		"stalling/bundle:1": `{"message":"olm-cmp: rendering \"stalling/bundle:1\" did not finish within the 50ms render timeout (serve --render-timeout): resolving stalling/bundle:1: waiting for the registry's answer headers: context deadline exceeded"}` + "\n",
	} {
		resp, body := do(t, "POST", srv.URL+"/v1/render", `{"bundle":"`+bundle+`","namespace":"x"}`)
		if resp.StatusCode != 504 || body != want {
			t.Errorf("%s: %d %s, want 504 %s", bundle, resp.StatusCode, body, want)
		}
	}
	resp, body := do(t, "POST", srv.URL+"/v1/render", `{"catalog":"quay.io/x/catalog:1","package":"demo","namespace":"x"}`)
	if resp.StatusCode != 504 || !strings.Contains(body, `rendering package \"demo\" from catalog \"quay.io/x/catalog:1\" did not finish`) {
		t.Errorf("catalog: %d %s", resp.StatusCode, body)
	}
}

// TestRenderCancelledClient: a client that goes away mid-render leaves no
// request in flight.
func TestRenderCancelledClient(t *testing.T) {
	s := newServers(t, nil)
	s.f.started = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", s.render.URL+"/v1/render", strings.NewReader(`{"bundle":"slow/bundle:1","namespace":"x"}`))
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-s.f.started
	if got := gauge(t, s.m, engine.MetricInflight); got != 1 {
		t.Errorf("in flight during the render = %v, want 1", got)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("client: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for gauge(t, s.m, engine.MetricInflight) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("requests in flight stayed at %v after the client went away", gauge(t, s.m, engine.MetricInflight))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func gauge(t *testing.T, m *engine.Metrics, name string) float64 {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}

func TestMetrics(t *testing.T) {
	s := newServers(t, nil)
	m := s.m
	_, out := do(t, "POST", s.render.URL+"/v1/render", `{"bundle":"good/bundle:1","namespace":"ns"}`)
	do(t, "POST", s.render.URL+"/v1/render", `{"bundle":"bad/bundle:1","namespace":"ns"}`)
	m.ObserveRequest("GenerateManifest", "OK", 3_000_000)
	resp, body := do(t, "GET", s.ops.URL+"/metrics", "")
	if resp.StatusCode != 200 {
		t.Fatal(resp.StatusCode)
	}
	for _, want := range []string{
		`olm_cmp_requests_total{outcome="OK",rpc="http_render"} 1`,
		`olm_cmp_requests_total{outcome="UnprocessableEntity",rpc="http_render"} 1`,
		`olm_cmp_requests_total{outcome="OK",rpc="GenerateManifest"} 1`,
		`olm_cmp_request_duration_seconds_bucket{outcome="OK",rpc="GenerateManifest",le="0.005"} 1`,
		`olm_cmp_bytes_served_total{transport="http"} ` + strconv.Itoa(len(out)) + "\n",
		"# TYPE olm_cmp_cache_hits_total counter",
		"# TYPE olm_cmp_cache_misses_total counter",
		"# TYPE olm_cmp_registry_pulls_total counter",
		"# TYPE olm_cmp_registry_resolves_total counter",
		"# TYPE olm_cmp_requests_in_flight gauge",
		"# TYPE olm_cmp_stream_bytes_received_total counter",
		"go_goroutines",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestRenderThroughEngineIsYAML: the plugin server's engine caches each
// render as YAML and as the JSON the repo-server gets; POST /v1/render, for
// people, answers YAML, on a miss and on a hit alike.
func TestRenderThroughEngineIsYAML(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	bundletest.PushDir(t, host, "olm/tiny-bundle", "v1", "../cmpserver/testdata/repo/bundles/tiny")
	e := engine.NewEngine(engine.EngineOptions{Loader: &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}})
	srv := httptest.NewServer(httpapi.RenderHandler(httpapi.Options{Renderer: e}))
	t.Cleanup(srv.Close)
	doc := "bundle: " + host + "/olm/tiny-bundle:v1\nnamespace: tiny-system\n"
	var first string
	for i := range 2 {
		resp, body := do(t, "POST", srv.URL+"/v1/render", doc)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/yaml" {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		if !strings.HasPrefix(body, "---\napiVersion: ") || !strings.Contains(body, "\nkind: Deployment\n") || strings.Contains(body, "---\n{") {
			t.Errorf("call %d: not the YAML stream:\n%s", i, body)
		}
		if i == 0 {
			first = body
		} else if body != first {
			t.Error("the cached answer differs")
		}
	}
}

// TestRenderRefusesLocalPaths: the endpoint has no repository, so a bundle,
// catalog or patch path would read the server's own filesystem (`catalog: /`
// used to walk all of it). Each is refused with a 400 and one line, before
// anything is rendered.
func TestRenderRefusesLocalPaths(t *testing.T) {
	s := newServers(t, nil)
	for _, c := range []struct{ body, msg string }{
		{`{"catalog":"/etc","package":"test","namespace":"x"}`, `spec.catalog "/etc": POST /v1/render reads catalog images only, never a path on the server`},
		{`{"catalog":"/","package":"test","namespace":"x"}`, `spec.catalog "/": POST /v1/render reads catalog images only`},
		{`{"catalog":"./x","package":"test","namespace":"x"}`, `spec.catalog "./x": POST /v1/render reads catalog images only`},
		{`{"catalog":"..","package":"test","namespace":"x"}`, `spec.catalog "..": POST /v1/render reads catalog images only`},
		{`{"bundle":"./x","namespace":"x"}`, `spec.bundle "./x": POST /v1/render renders image bundles only, never a path on the server`},
		{`{"bundle":"/etc","namespace":"x"}`, `spec.bundle "/etc": POST /v1/render renders image bundles only`},
		{"apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  catalog: /etc\n  package: test\n  namespace: x\n", `spec.catalog "/etc": POST /v1/render reads catalog images only`},
		{`{"bundle":"good/bundle:1","namespace":"x","patches":[{"path":"/etc/passwd"}]}`, `spec.patches[0].path "/etc/passwd": POST /v1/render takes inline patches only`},
	} {
		resp, body := do(t, "POST", s.render.URL+"/v1/render", c.body)
		var e struct{ Message string }
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			t.Errorf("%s: not a JSON error: %s", c.body, body)
			continue
		}
		if resp.StatusCode != 400 || !strings.HasPrefix(e.Message, c.msg) || strings.Contains(e.Message, "\n") {
			t.Errorf("%s: %d %q, want 400 and one line starting %q", c.body, resp.StatusCode, e.Message, c.msg)
		}
	}
	if n := s.f.calls.Load(); n != 0 {
		t.Errorf("%d renders ran for refused requests", n)
	}
}

func TestRenderBodyLimit(t *testing.T) {
	f := &fakeRenderer{}
	srv := httptest.NewServer(httpapi.RenderHandler(httpapi.Options{Renderer: f, MaxBody: 64}))
	defer srv.Close()
	resp, body := do(t, "POST", srv.URL+"/v1/render", `{"bundle":"good/bundle:1","namespace":"`+strings.Repeat("x", 100)+`"}`)
	if resp.StatusCode != 413 || !strings.Contains(body, "over the 64-byte limit (serve --render-max-body-bytes)") || f.calls.Load() != 0 {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
}

// TestListenLoopback: the render listener binds loopback only, unless told
// otherwise. Addresses that are plainly not loopback are refused without
// being bound.
func TestListenLoopback(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		l, err := httpapi.ListenLoopback(addr, false)
		if err != nil {
			t.Errorf("%s: %v", addr, err)
			continue
		}
		if !l.Addr().(*net.TCPAddr).IP.IsLoopback() {
			t.Errorf("%s bound %v", addr, l.Addr())
		}
		l.Close()
	}
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "10.1.2.3:0"} {
		if _, err := httpapi.ListenLoopback(addr, false); !errors.Is(err, httpapi.ErrNotLoopback) {
			t.Errorf("%s: %v, want ErrNotLoopback", addr, err)
		}
	}
}

// TestNewServerLimits: every server has every limit set, and the render
// listener's write timeout outlasts its render timeout.
func TestNewServerLimits(t *testing.T) {
	s := httpapi.NewServer(http.NotFoundHandler(), httpapi.DefaultTimeout+httpapi.OpsWriteTimeout)
	if s.ReadHeaderTimeout <= 0 || s.ReadTimeout <= 0 || s.IdleTimeout <= 0 || s.MaxHeaderBytes <= 0 || s.WriteTimeout <= httpapi.DefaultTimeout {
		t.Errorf("limits: %+v", s)
	}
}

// TestHostileEchoes: what reaches the client is bounded and escaped: a
// warning's control characters (from bundle content) in the Warning header,
// a huge value in an error, an error of thousands of problems, a panic's
// stack (logged, never sent).
func TestHostileEchoes(t *testing.T) {
	s := newServers(t, nil)
	resp, body := do(t, "POST", s.render.URL+"/v1/render", `{"bundle":"hostile/bundle:1","namespace":"x"}`)
	w := resp.Header.Get("Warning")
	if resp.StatusCode != 200 || w != `299 - "requirement from the bundle: \\x1b[2J\\x1b]0;owned\\a line\\r\\nSet-Cookie: x=1 \\u202eevil"` || resp.Header.Get("Set-Cookie") != "" {
		t.Errorf("%d %s; Warning %s", resp.StatusCode, body, w)
	}
	resp, body = do(t, "POST", s.render.URL+"/v1/render", `{"bundle":"panic/bundle:1","namespace":"x"}`)
	if want := `{"message":"olm-cmp internal error: boom (please report this with the olm-cmp version and the bundle; the stack is in the server's log)"}` + "\n"; resp.StatusCode != 500 || body != want {
		t.Errorf("panic: %d %s", resp.StatusCode, body)
	}
	resp, body = do(t, "POST", s.render.URL+"/v1/render", `{"bundle":"handler-panic/bundle:1","namespace":"x"}`)
	if want := `{"message":"olm-cmp internal error: boom in the handler (please report this with the olm-cmp version and the bundle; the stack is in the server's log)"}` + "\n"; resp.StatusCode != 500 || body != want {
		t.Errorf("panic in the handler: %d %s", resp.StatusCode, body)
	}
	resp, body = do(t, "POST", s.render.URL+"/v1/render", `{"bundle":"many/bundle:1","namespace":"x"}`)
	var e struct{ Message string }
	json.Unmarshal([]byte(body), &e)
	if resp.StatusCode != 422 || len(e.Message) > 4096 || !strings.HasPrefix(e.Message, "spec.clusterAPIs[0]") || !strings.Contains(e.Message, "more problems") {
		t.Errorf("5,000 problems: %d, %d bytes: %.300s", resp.StatusCode, len(body), body)
	}
	big := strings.Repeat("a", 200000)
	resp, body = do(t, "POST", s.render.URL+"/v1/render", `{"bundle":"./`+big+`","namespace":"x"}`)
	if resp.StatusCode != 400 || len(body) > 1000 || !strings.Contains(body, "… (200002 bytes)") {
		t.Errorf("200 KB bundle: %d, %d bytes: %.300s", resp.StatusCode, len(body), body)
	}
}

// TestRenderTimeoutThroughEngine: against a registry that never answers,
// the engine answers at the render timeout with the phase that was slow,
// and its work ends (TestMain's goleak finds no goroutine left).
func TestRenderTimeoutThroughEngine(t *testing.T) {
	fr := bundletest.NewFaultRegistry(t, bundletest.FaultOptions{})
	fr.PushDir(t, "olm/tiny-bundle", "v1", "../cmpserver/testdata/repo/bundles/tiny")
	fr.Inject(bundletest.Where{Path: bundletest.ManifestsPath}, bundletest.Fault{Stall: true}, -1)
	e := engine.NewEngine(engine.EngineOptions{Loader: &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{fr.Host}}})
	srv := httptest.NewServer(httpapi.RenderHandler(httpapi.Options{Renderer: e, Timeout: 300 * time.Millisecond}))
	t.Cleanup(srv.Close)
	ref := fr.Host + "/olm/tiny-bundle:v1"
	resp, body := do(t, "POST", srv.URL+"/v1/render", "bundle: "+ref+"\nnamespace: tiny-system\n")
	want := `olm-cmp: rendering \"` + ref + `\" did not finish within the 300ms render timeout (serve --render-timeout): still resolving spec.bundle \"` + ref + `\" after `
	if resp.StatusCode != 504 || !strings.Contains(body, want) {
		t.Errorf("%d %s, want 504 with %s", resp.StatusCode, body, want)
	}
}

// TestRenderSignatures: POST /v1/render verifies as the plugin does: a
// signed bundle renders with its signer annotated, an unsigned one under
// enforce is a 403 with the policy's one-line refusal and no manifests.
func TestRenderSignatures(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	tiny := "../cmpserver/testdata/repo/bundles/tiny"
	signed := bundletest.PushDir(t, host, "olm/signed", "v1", tiny)
	bundletest.PushDir(t, host, "olm/unsigned", "v1", tiny)
	key := verifytest.NewKey(t, verifytest.ECDSA)
	verifytest.SignTag(t, host, "olm/signed", signed, key)
	loader := &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}
	v := verify.New(verifytest.Policy(t, verifytest.Scope(host, "enforce", key)), verify.Options{Remote: loader.Registry().RemoteOptions(context.Background())})
	e := engine.NewEngine(engine.EngineOptions{Loader: loader, Verifier: func() (*verify.Verifier, error) { return v, nil }})
	srv := httptest.NewServer(httpapi.RenderHandler(httpapi.Options{Renderer: e}))
	t.Cleanup(srv.Close)

	resp, body := do(t, "POST", srv.URL+"/v1/render", "bundle: "+host+"/olm/signed:v1\nnamespace: tiny-system\n")
	if resp.StatusCode != 200 || strings.Count(body, "olm-cmp.dev/signature: 'key "+key.Name+"'") != strings.Count(body, "\nkind: ") {
		t.Fatalf("signed: %d\n%s", resp.StatusCode, body)
	}
	resp, body = do(t, "POST", srv.URL+"/v1/render", "bundle: "+host+"/olm/unsigned:v1\nnamespace: tiny-system\n")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "signature check refused "+host+"/olm/unsigned@"+signed) || strings.Contains(body, "kind:") {
		t.Errorf("unsigned: %d\n%s", resp.StatusCode, body)
	}
}
