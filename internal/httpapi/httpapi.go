// Package httpapi serves olm-cmp's HTTP side: liveness and readiness probes
// for the sidecar, Prometheus metrics, and POST /v1/render for debugging a
// spec against the running server's cache and registry credentials. It binds
// to loopback by default: it is a debugging aid, not an API for the network.
package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/internal/engine"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// DefaultAddr is loopback: the render endpoint uses the server's registry
// credentials and must not be open to the cluster network by accident.
const DefaultAddr = "127.0.0.1:8080"

// Observer records requests and bytes (the plugin server's metrics).
type Observer interface {
	ObserveRequest(rpc, outcome string, d time.Duration)
	ObserveBytesServed(transport string, n int)
}

// Options configure the handler.
type Options struct {
	// Renderer renders: the engine the plugin's gRPC server shares.
	Renderer engine.Renderer
	// Gatherer serves /metrics; nil means no /metrics route.
	Gatherer prometheus.Gatherer
	// Ready returns nil when the server can take requests; nil means always ready.
	Ready    func() error
	Observer Observer
	Logger   *slog.Logger
	// MaxBody caps a render request body (default 1 MiB).
	MaxBody int64
	// Timeout bounds one render (default 60 s, Argo CD's default repo-server timeout).
	Timeout time.Duration
}

// RPC is the label HTTP renders carry in the request metrics.
const RPC = "http_render"

// New returns the router.
func New(o Options) http.Handler {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxBody <= 0 {
		o.MaxBody = 1 << 20
	}
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	h := &handler{o: o}
	r := mux.NewRouter()
	r.HandleFunc("/healthz", h.healthz).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/readyz", h.readyz).Methods(http.MethodGet, http.MethodHead)
	if o.Gatherer != nil {
		r.Handle("/metrics", promhttp.HandlerFor(o.Gatherer, promhttp.HandlerOpts{})).Methods(http.MethodGet)
	}
	r.HandleFunc("/v1/render", h.render).Methods(http.MethodPost)
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusMethodNotAllowed, "method not allowed")
	})
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusNotFound, "not found: the routes are /healthz, /readyz, /metrics and POST /v1/render")
	})
	return r
}

type handler struct{ o Options }

// healthz says the process is alive; it does not depend on anything else,
// so a slow registry never gets the sidecar restarted.
func (h *handler) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, "ok\n")
}

func (h *handler) readyz(w http.ResponseWriter, _ *http.Request) {
	if h.o.Ready != nil {
		if err := h.o.Ready(); err != nil {
			writeError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, "ok\n")
}

// render takes an olm-cmp.yaml document (YAML or JSON) or a bare spec object
// (JSON or YAML) and answers the YAML stream. Query parameter apiVersions
// (comma-separated) plays KUBE_API_VERSIONS. Only image bundles: a directory
// would read the server's own filesystem.
func (h *handler) render(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	outcome := "OK"
	defer func() {
		if h.o.Observer != nil {
			h.o.Observer.ObserveRequest(RPC, outcome, time.Since(start))
		}
	}()
	fail := func(code int, msg string) {
		outcome = strings.ReplaceAll(http.StatusText(code), " ", "")
		h.o.Logger.Warn("http render failed", "status", code, "error", msg, "duration_ms", float64(time.Since(start).Microseconds())/1000)
		writeError(w, code, msg)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.o.MaxBody))
	if err != nil {
		fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("reading the request body: %v", err))
		return
	}
	req, err := decodeRequest(body)
	if err != nil {
		fail(http.StatusBadRequest, err.Error())
		return
	}
	if v := r.URL.Query().Get("apiVersions"); v != "" {
		for _, gv := range strings.Split(v, ",") {
			if gv = strings.TrimSpace(gv); gv != "" {
				req.APIVersions = append(req.APIVersions, gv)
			}
		}
	}
	if h.o.Renderer == nil {
		fail(http.StatusServiceUnavailable, "no renderer configured")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.o.Timeout)
	defer cancel()
	res, info, err := h.o.Renderer.Render(ctx, req)
	if err != nil {
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			fail(http.StatusGatewayTimeout, err.Error())
		case errors.Is(err, context.Canceled):
			fail(499, err.Error()) // the client went away; nobody reads this
		default:
			// A render error is about the request (spec or bundle).
			fail(http.StatusUnprocessableEntity, err.Error())
		}
		return
	}
	out := res.YAML()
	w.Header().Set("Content-Type", "application/yaml")
	w.Header().Set("X-Olm-Cmp-Digest", res.Origin.Digest)
	for _, warn := range res.Warnings {
		// RFC 9111 Warning header form, as the Kubernetes API server uses.
		w.Header().Add("Warning", `299 - `+quoteWarning(warn))
	}
	w.Write(out)
	if h.o.Observer != nil {
		h.o.Observer.ObserveBytesServed("http", len(out))
	}
	h.o.Logger.Info("http render", "bundle", req.Spec.Bundle, "digest", res.Origin.Digest, "cache", info.Cache, "objects", len(res.Manifests),
		"bytes", len(out), "duration_ms", float64(time.Since(start).Microseconds())/1000)
}

// decodeRequest accepts a whole olm-cmp.yaml document or a bare spec.
func decodeRequest(body []byte) (render.Request, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return render.Request{}, errors.New("empty body: send an olm-cmp.yaml document or its spec, as JSON or YAML")
	}
	var probe map[string]json.RawMessage
	if err := yaml.Unmarshal(body, &probe); err != nil {
		return render.Request{}, fmt.Errorf("the body is not a JSON or YAML object: %v", err)
	}
	var req render.Request
	if _, ok := probe["apiVersion"]; ok {
		f, err := spec.Parse("request body", body)
		if err != nil {
			return req, err
		}
		req.Spec, req.Name = f.Spec, f.Metadata.Name
	} else {
		if err := yaml.UnmarshalStrict(body, &req.Spec); err != nil {
			return req, fmt.Errorf("request body (a bare spec): %v", strings.TrimPrefix(err.Error(), "error unmarshaling JSON: while decoding JSON: json: "))
		}
	}
	if b := req.Spec.Bundle; render.IsDirRef(b) {
		return req, fmt.Errorf("spec.bundle %q: POST /v1/render renders image bundles only; directory bundles are read from the Application's repository by the plugin", b)
	}
	if c := req.Spec.Catalog; render.IsDirRef(c) {
		return req, fmt.Errorf("spec.catalog %q: POST /v1/render reads catalog images only; catalog directories are read from the Application's repository by the plugin", c)
	}
	return req, nil
}

func quoteWarning(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// errorBody is every error answer: {"message": "..."}.
type errorBody struct {
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(errorBody{Message: msg})
}
