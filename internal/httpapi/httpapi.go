// Package httpapi serves olm-cmp's HTTP side on two listeners: one for the
// sidecar's liveness and readiness probes and Prometheus metrics
// (OpsHandler), and one, off unless asked for, for POST /v1/render
// (RenderHandler), which debugs a spec against the running server's cache
// and registry credentials. The render endpoint reads images only, never a
// path on the server, and binds to loopback unless told otherwise: it is a
// debugging aid, not an API for the network.
package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/engine"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/verify"
)

// DefaultAddr is where the probe and metrics listener binds by default:
// loopback, so nothing is open to the network unless asked for. The sidecar
// manifests pass :8080, for the kubelet's probes and Prometheus.
const DefaultAddr = "127.0.0.1:8080"

// Defaults of the render endpoint's limits (Options.MaxBody, Options.Timeout).
const (
	DefaultMaxBody = 1 << 20
	// DefaultTimeout is Argo CD's default repo-server timeout.
	DefaultTimeout = 60 * time.Second
)

// Limits of every HTTP server (NewServer). Requests are small (a spec of at
// most MaxBody bytes, or a probe); a client slower than these is dropped
// rather than allowed to hold a connection.
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 30 * time.Second
	IdleTimeout       = 120 * time.Second
	MaxHeaderBytes    = 64 << 10
	// OpsWriteTimeout bounds writing a probe or metrics answer; the render
	// listener's write timeout is its render timeout plus this.
	OpsWriteTimeout = 30 * time.Second
)

// Observer records requests and bytes (the plugin server's metrics).
type Observer interface {
	ObserveRequest(rpc, outcome string, d time.Duration)
	ObserveBytesServed(transport string, n int)
	InflightAdd(d float64)
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
	// MaxBody caps a render request body (default DefaultMaxBody).
	MaxBody int64
	// Timeout bounds one render (default DefaultTimeout).
	Timeout time.Duration
}

// RPC is the label HTTP renders carry in the request metrics.
const RPC = "http_render"

// OpsHandler serves the probe and metrics listener: /healthz, /readyz and
// (with a Gatherer) /metrics.
func OpsHandler(o Options) http.Handler {
	h := newHandler(o)
	r := newRouter("/healthz, /readyz and /metrics")
	r.HandleFunc("/healthz", h.healthz).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/readyz", h.readyz).Methods(http.MethodGet, http.MethodHead)
	if o.Gatherer != nil {
		r.Handle("/metrics", promhttp.HandlerFor(o.Gatherer, promhttp.HandlerOpts{})).Methods(http.MethodGet)
	}
	return r
}

// RenderHandler serves the render listener: POST /v1/render.
func RenderHandler(o Options) http.Handler {
	h := newHandler(o)
	r := newRouter("POST /v1/render")
	r.HandleFunc("/v1/render", h.render).Methods(http.MethodPost)
	return h.recoverPanics(r)
}

// recoverPanics answers a panic in a handler with 500 and one line, and
// logs its stack: net/http's own recovery would drop the connection, and
// the client would read nothing.
func (h *handler) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				h.o.Logger.Error("panic serving request", "method", r.Method+" "+r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				writeError(w, http.StatusInternalServerError, internalError(v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// internalError is the one line a client reads about a bug.
func internalError(v any) string {
	return fmt.Sprintf("olm-cmp internal error: %s (please report this with the olm-cmp version and the bundle; the stack is in the server's log)", echo.Short(fmt.Sprint(v)))
}

func newHandler(o Options) *handler {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return &handler{o: o}
}

func newRouter(routes string) *mux.Router {
	r := mux.NewRouter()
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusMethodNotAllowed, "method not allowed")
	})
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusNotFound, "not found: this listener serves "+routes)
	})
	return r
}

// NewServer is an http.Server for h with every limit set: header, read,
// write and idle timeouts and a header size cap. writeTimeout bounds
// producing and writing one answer (for the render listener, more than its
// render timeout, so the timeout error still reaches the client).
func NewServer(h http.Handler, writeTimeout time.Duration) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}

// ErrNotLoopback is returned by ListenLoopback for an address that is not on
// the loopback interface.
var ErrNotLoopback = errors.New("not a loopback address")

// ListenLoopback listens on addr and refuses (closing the listener) unless
// it is bound to a loopback address, whatever name addr used: "localhost" is
// fine, ":8081" or a pod IP is not. allowRemote lifts the check.
func ListenLoopback(addr string, allowRemote bool) (net.Listener, error) {
	if !allowRemote {
		// Refuse what is plainly not loopback before binding it, even briefly.
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if ip := net.ParseIP(host); host == "" || (ip != nil && !ip.IsLoopback()) {
			return nil, fmt.Errorf("%q: %w", addr, ErrNotLoopback)
		}
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if allowRemote {
		return l, nil
	}
	// A host name is judged by what it resolved to.
	if ta, ok := l.Addr().(*net.TCPAddr); !ok || !ta.IP.IsLoopback() {
		l.Close()
		return nil, fmt.Errorf("%q: %w", addr, ErrNotLoopback)
	}
	return l, nil
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
// (comma-separated) plays KUBE_API_VERSIONS. Only images: a bundle, catalog
// or patch path would read the server's own filesystem.
func (h *handler) render(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	outcome := "OK"
	if h.o.Observer != nil {
		h.o.Observer.InflightAdd(1)
	}
	defer func() {
		if h.o.Observer != nil {
			h.o.Observer.ObserveRequest(RPC, outcome, time.Since(start))
			h.o.Observer.InflightAdd(-1)
		}
	}()
	fail := func(code int, msg string) {
		outcome = strings.ReplaceAll(http.StatusText(code), " ", "")
		if code == statusClientClosed {
			outcome = "ClientClosedRequest"
		}
		h.o.Logger.Warn("http render failed", "status", code, "error", msg, "duration_ms", float64(time.Since(start).Microseconds())/1000)
		writeError(w, code, msg)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.o.MaxBody))
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is over the %d-byte limit (serve --render-max-body-bytes): send one olm-cmp.yaml document or spec", h.o.MaxBody))
		} else {
			fail(http.StatusBadRequest, "the request body could not be read whole: the client stopped sending it")
		}
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
		var pe *engine.PanicError
		switch {
		case errors.As(err, &pe):
			h.o.Logger.Error("panic serving request", "method", RPC, "panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
			fail(http.StatusInternalServerError, internalError(pe.Value))
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
			msg := fmt.Sprintf("olm-cmp: rendering %s did not finish within the %s render timeout (serve --render-timeout)", subject(req), h.o.Timeout)
			if err.Error() != context.DeadlineExceeded.Error() {
				msg += ": " + err.Error()
			}
			fail(http.StatusGatewayTimeout, msg)
		case errors.Is(err, context.Canceled):
			fail(statusClientClosed, err.Error()) // the client went away; nobody reads this
		case errors.As(err, new(*verify.RefusalError)):
			fail(http.StatusForbidden, err.Error()) // the trust policy refused an image
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
	h.o.Logger.Info("http render", "bundle", spec.Redact(req.Spec.Bundle), "digest", res.Origin.Digest, "cache", info.Cache, "objects", len(res.Manifests),
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
		// Decoded as olm-cmp.yaml is: YAML 1.2 scalars, every problem at once.
		if err := spec.DecodeStrict(body, &req.Spec); err != nil {
			const prefix = "request body (a bare spec): "
			return req, errors.New(prefix + strings.ReplaceAll(err.Error(), "\n", "\n"+prefix))
		}
	}
	return req, imagesOnly(req.Spec)
}

// statusClientClosed is nginx's code for a client that went away before the
// answer: nobody reads it, but the log and the metrics do.
const statusClientClosed = 499

// imagesOnly refuses a spec that names a path: this endpoint has no
// repository, so a bundle or catalog directory (by the render package's own
// rule) or a patch file would be read from the server's filesystem: its
// configuration, its cache, other requests' repositories.
func imagesOnly(s spec.Spec) error {
	if render.IsDirRef(s.Bundle) {
		return fmt.Errorf("spec.bundle %s: POST /v1/render renders image bundles only, never a path on the server; directory bundles are read from the Application's repository by the plugin", echo.Quote(s.Bundle))
	}
	if render.IsDirRef(s.Catalog) {
		return fmt.Errorf("spec.catalog %s: POST /v1/render reads catalog images only, never a path on the server; directory catalogs are read from the Application's repository by the plugin", echo.Quote(s.Catalog))
	}
	for i, p := range s.Patches {
		if p.Path != "" {
			return fmt.Errorf("spec.patches[%d].path %s: POST /v1/render takes inline patches only (patch:), never a file on the server", i, echo.Quote(p.Path))
		}
	}
	return nil
}

// subject names what a request renders, for the timeout message.
func subject(req render.Request) string {
	if s := req.Spec; s.Catalog != "" {
		return fmt.Sprintf("package %s from catalog %s", echo.Quote(s.Package), echo.Quote(spec.Redact(s.Catalog)))
	}
	return echo.Quote(spec.Redact(req.Spec.Bundle))
}

// quoteWarning is a warning as an RFC 9110 quoted-string: control and
// invisible characters from bundle content escaped (echo.Text), then
// backslashes and quotes.
func quoteWarning(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(echo.Text(s)) + `"`
}

// errorBody is every error answer: {"message": "..."}.
type errorBody struct {
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, code int, msg string) {
	msg = echo.Message(msg, echo.MaxMessage)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(errorBody{Message: msg})
}
