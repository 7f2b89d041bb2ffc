package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/engine"
	"github.com/olm-cmp/olm-cmp/internal/httpapi"
	"github.com/olm-cmp/olm-cmp/internal/render"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeRenderer answers two objects for bundle "good/bundle:1", fails
// otherwise, and records the last request.
type fakeRenderer struct{ last render.Request }

func (f *fakeRenderer) Render(ctx context.Context, req render.Request) (*render.Result, engine.Info, error) {
	f.last = req
	switch req.Spec.Bundle {
	case "good/bundle:1":
		return &render.Result{
			Origin:    bundle.Origin{Digest: "sha256:abc"},
			Manifests: []string{"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n"},
			Warnings:  []string{`dropped "Foo": the cluster does not serve example.com/v1`},
		}, engine.Info{Cache: "off", Digest: "sha256:abc"}, nil
	case "slow/bundle:1":
		<-ctx.Done()
		return nil, engine.Info{}, ctx.Err()
	}
	return nil, engine.Info{}, errors.New(`resolving bad/bundle:1: MANIFEST_UNKNOWN`)
}

func newServer(t *testing.T, ready func() error) (*httptest.Server, *fakeRenderer, *engine.Metrics) {
	f := &fakeRenderer{}
	m := engine.NewMetrics()
	srv := httptest.NewServer(httpapi.New(httpapi.Options{Renderer: f, Gatherer: m.Registry, Ready: ready, Observer: m}))
	t.Cleanup(srv.Close)
	return srv, f, m
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
	srv, _, _ := newServer(t, func() error { return notReady })
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
	if resp, body := do(t, "GET", srv.URL+"/nope", ""); resp.StatusCode != 404 || !strings.Contains(body, "POST /v1/render") {
		t.Errorf("404: %d %s", resp.StatusCode, body)
	}
	if resp, _ := do(t, "GET", srv.URL+"/v1/render", ""); resp.StatusCode != 405 {
		t.Errorf("GET /v1/render: %d", resp.StatusCode)
	}
}

func TestRender(t *testing.T) {
	srv, f, _ := newServer(t, nil)

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
		{"apiVersion: v1\nkind: Pod\n", 400, "apiVersion/kind must be"},
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
	srv := httptest.NewServer(httpapi.New(httpapi.Options{Renderer: f, Timeout: 50_000_000}))
	defer srv.Close()
	resp, body := do(t, "POST", srv.URL+"/v1/render", `{"bundle":"slow/bundle:1","namespace":"x"}`)
	if resp.StatusCode != 504 || !strings.Contains(body, "deadline") {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
}

func TestMetrics(t *testing.T) {
	srv, _, m := newServer(t, nil)
	_, out := do(t, "POST", srv.URL+"/v1/render", `{"bundle":"good/bundle:1","namespace":"ns"}`)
	do(t, "POST", srv.URL+"/v1/render", `{"bundle":"bad/bundle:1","namespace":"ns"}`)
	m.ObserveRequest("GenerateManifest", "OK", 3_000_000)
	resp, body := do(t, "GET", srv.URL+"/metrics", "")
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
	srv := httptest.NewServer(httpapi.New(httpapi.Options{Renderer: e}))
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
