package bundletest

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// FaultRegistry is go-containerregistry's in-memory registry behind a
// handler that breaks the requests a test selects, the way real registries
// and the networks in front of them fail:
//
//	fr := bundletest.NewFaultRegistry(t, bundletest.FaultOptions{})
//	fr.PushDir(t, "widget", "v1", "testdata/good")
//	fr.Inject(bundletest.Where{Path: bundletest.TagPath("v1")}, bundletest.Fault{Status: 429, Header: http.Header{"Retry-After": {"1"}}}, 1)
//	loader := &bundle.ImageLoader{Insecure: []string{fr.Host}}
//
// Images are pushed through a second, fault-free door to the same storage,
// so faults never get in the way of setting a test up. Without
// FaultOptions.TLS the registry speaks plain HTTP on 127.0.0.1 (loaders list
// Host in Insecure); with it, HTTPS with a test certificate that Transport
// trusts. Everything stops when the test ends, stalled requests included.
type FaultRegistry struct {
	// Host is the faulty registry's host:port, for image references.
	Host string
	// Requests records every request the faulty door received.
	Requests *Counter
	// Transport trusts the registry's certificate (TLS only; nil otherwise):
	// set it as ImageLoader.Transport.
	Transport *http.Transport

	direct string // fault-free plain-HTTP door to the same storage
	user   string
	pass   string
	stop   chan struct{}

	mu    sync.Mutex
	rules []*faultRule

	written atomic.Int64
}

// FaultOptions configure a FaultRegistry.
type FaultOptions struct {
	// TLS serves HTTPS instead of plain HTTP.
	TLS bool
	// User and Password, when User is set, make every request (faulty or
	// not) need HTTP basic authentication with them, so that clients send
	// their credentials and a test can check no error repeats them. Faults
	// apply to authenticated requests only: the unauthenticated ping gets
	// the Basic challenge.
	User, Password string
}

// Where selects requests. Empty fields match anything.
type Where struct {
	// Method is the HTTP method, e.g. "HEAD".
	Method string
	// Path is a regular expression matched against the URL path; see
	// PingPath, ManifestsPath, BlobsPath, TagPath and BlobPath.
	Path string
}

// Paths for Where.Path.
const (
	// PingPath is the API version check every client starts with.
	PingPath = `^/v2/$`
	// ManifestsPath is any manifest, by tag or digest.
	ManifestsPath = `/manifests/`
	// BlobsPath is any blob: image configs and layers.
	BlobsPath = `/blobs/`
)

// TagPath selects the manifest of one tag (or digest).
func TagPath(tag string) string { return `/manifests/` + regexp.QuoteMeta(tag) + `$` }

// BlobPath selects one blob by digest ("sha256:…").
func BlobPath(digest string) string { return `/blobs/` + regexp.QuoteMeta(digest) + `$` }

// Fault is what the registry does to a selected request. Reset and Stall
// act on the connection; otherwise, with Status set, the registry answers
// with Status, Header and a body (Body, BodySize filler bytes, or the
// echoed Authorization header); with neither, it serves the real answer,
// changed by Tamper when set.
type Fault struct {
	// Status is the HTTP status to answer with (401, 403, 404, 429, 500…).
	Status int
	// Header is added to the answer (WWW-Authenticate, Retry-After…).
	Header http.Header
	// Body is the answer's body. With EchoAuthorization, "$AUTHORIZATION"
	// in it is replaced by the request's Authorization header (an empty
	// Body becomes "Authorization: " and the header), as registries that
	// dump the request in their error pages do.
	Body              string
	EchoAuthorization bool
	// BodySize, when positive, streams that many filler bytes as the body
	// instead of Body, without holding them in memory (a huge error page).
	BodySize int64

	// Reset closes the TCP connection with a reset (RST). Stall keeps it
	// open and sends nothing more until the client gives up or the test
	// ends. Either happens before any answer, or, with AfterBytes > 0,
	// after the real answer's headers and its first AfterBytes body bytes
	// (a blob cut or stalled mid-stream).
	Reset, Stall bool
	AfterBytes   int64

	// Tamper rewrites the real answer's body (a manifest or layer whose
	// content does not match its digest). Headers, the digest header
	// included, are kept; Content-Length follows the new body.
	Tamper func(body []byte) []byte
}

type faultRule struct {
	method string
	path   *regexp.Regexp
	fault  Fault
	left   int // answers still to break; -1 = every one
}

// NewFaultRegistry starts a FaultRegistry on 127.0.0.1.
func NewFaultRegistry(t testing.TB, opts FaultOptions) *FaultRegistry {
	t.Helper()
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	fr := &FaultRegistry{Requests: &Counter{}, user: opts.User, pass: opts.Password, stop: make(chan struct{})}

	direct := httptest.NewServer(reg)
	t.Cleanup(direct.Close)
	fr.direct = strings.TrimPrefix(direct.URL, "http://")

	front := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fr.serve(w, r, reg)
	}))
	// Quiet: a reset or an abandoned stall makes the server log.
	front.Config.ErrorLog = log.New(io.Discard, "", 0)
	if opts.TLS {
		front.StartTLS()
		fr.Transport = front.Client().Transport.(*http.Transport).Clone()
	} else {
		front.Start()
	}
	// Cleanups run last-in first-out: release stalled handlers, then close.
	t.Cleanup(front.Close)
	t.Cleanup(func() { close(fr.stop) })
	fr.Host = strings.TrimPrefix(strings.TrimPrefix(front.URL, "http://"), "https://")
	return fr
}

// Inject makes the registry apply f to the next times requests that where
// selects (times <= 0: to every one). Rules are tried in the order given;
// the first that selects a request and has answers left applies.
func (fr *FaultRegistry) Inject(where Where, f Fault, times int) {
	if times <= 0 {
		times = -1
	}
	fr.mu.Lock()
	fr.rules = append(fr.rules, &faultRule{method: where.Method, path: regexp.MustCompile(where.Path), fault: f, left: times})
	fr.mu.Unlock()
}

// Clear removes every fault.
func (fr *FaultRegistry) Clear() {
	fr.mu.Lock()
	fr.rules = nil
	fr.mu.Unlock()
}

// FaultBytes is how many body bytes faults have written so far (filler,
// echoes and the real bytes before a mid-stream fault): a test of a huge
// error body can check the client stopped reading early.
func (fr *FaultRegistry) FaultBytes() int64 { return fr.written.Load() }

// Push pushes img to repo:tag, past the faults, and returns its digest.
func (fr *FaultRegistry) Push(t testing.TB, repo, tag string, img v1.Image) string {
	t.Helper()
	return Push(t, fr.direct, repo, tag, img)
}

// PushDir pushes the bundle in dir, past the faults (see PushDir).
func (fr *FaultRegistry) PushDir(t testing.TB, repo, tag, dir string) string {
	t.Helper()
	return Push(t, fr.direct, repo, tag, ImageFromDir(t, dir))
}

func (fr *FaultRegistry) fault(r *http.Request) (Fault, bool) {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	for _, rule := range fr.rules {
		if rule.left == 0 || (rule.method != "" && rule.method != r.Method) || !rule.path.MatchString(r.URL.Path) {
			continue
		}
		if rule.left > 0 {
			rule.left--
		}
		return rule.fault, true
	}
	return Fault{}, false
}

func (fr *FaultRegistry) serve(w http.ResponseWriter, r *http.Request, reg http.Handler) {
	fr.Requests.add(Request{Method: r.Method, Path: r.URL.Path})
	if fr.user != "" {
		if u, p, ok := r.BasicAuth(); !ok || u != fr.user || p != fr.pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="bundletest"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
	}
	f, ok := fr.fault(r)
	switch {
	case !ok:
		reg.ServeHTTP(w, r)
	case f.Reset || f.Stall:
		fr.breakConnection(w, r, reg, f)
	case f.Status != 0:
		fr.answer(w, r, f)
	default:
		rec := httptest.NewRecorder()
		reg.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if f.Tamper != nil && r.Method != http.MethodHead {
			body = f.Tamper(bytes.Clone(body))
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(rec.Code)
		w.Write(body)
	}
}

// answer writes a made-up error answer.
func (fr *FaultRegistry) answer(w http.ResponseWriter, r *http.Request, f Fault) {
	for k, v := range f.Header {
		w.Header()[k] = v
	}
	body := f.Body
	if f.EchoAuthorization {
		if body == "" {
			body = "Authorization: $AUTHORIZATION"
		}
		body = strings.ReplaceAll(body, "$AUTHORIZATION", r.Header.Get("Authorization"))
	}
	if f.BodySize <= 0 {
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(f.Status)
		if r.Method != http.MethodHead {
			n, _ := io.WriteString(w, body)
			fr.written.Add(int64(n))
		}
		return
	}
	w.Header().Set("Content-Length", fmt.Sprint(f.BodySize))
	w.WriteHeader(f.Status)
	if r.Method == http.MethodHead {
		return
	}
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	for left := f.BodySize; left > 0; {
		n, err := w.Write(chunk[:min(left, int64(len(chunk)))])
		fr.written.Add(int64(n))
		if err != nil {
			return // the client stopped reading
		}
		left -= int64(n)
	}
}

// breakConnection takes the connection over and resets or stalls it, after
// the real answer's first f.AfterBytes bytes when that is positive.
func (fr *FaultRegistry) breakConnection(w http.ResponseWriter, r *http.Request, reg http.Handler, f Fault) {
	var head, body []byte
	if f.AfterBytes > 0 {
		rec := httptest.NewRecorder()
		reg.ServeHTTP(rec, r)
		var b bytes.Buffer
		fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", rec.Code, http.StatusText(rec.Code))
		rec.Header().Set("Content-Length", fmt.Sprint(rec.Body.Len()))
		rec.Header().Write(&b)
		b.WriteString("\r\n")
		head, body = b.Bytes(), rec.Body.Bytes()[:min(f.AfterBytes, int64(rec.Body.Len()))]
	}
	conn, rw, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(fmt.Sprintf("bundletest: hijacking the connection: %v", err))
	}
	defer conn.Close()
	if head != nil {
		rw.Write(head)
		n, _ := rw.Write(body)
		fr.written.Add(int64(n))
		rw.Flush()
	}
	if f.Reset {
		resetOnClose(conn)
		return
	}
	// Stall: wait for the client to hang up (its read ends) or the test to end.
	gone := make(chan struct{})
	go func() {
		io.Copy(io.Discard, bufio.NewReader(conn))
		close(gone)
	}()
	select {
	case <-gone:
	case <-fr.stop:
	}
}

// resetOnClose makes closing conn send a TCP reset rather than an orderly
// end, as a crashing proxy or a middlebox dropping the flow does.
func resetOnClose(conn net.Conn) {
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn()
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
}

// NewBlackHole listens on 127.0.0.1 and returns its host:port. It accepts
// TCP connections and never reads or writes on them: a registry that
// stalls before anything is said, over plain HTTP (list the host as
// insecure) and over TLS (its handshake never completes). Connections are
// closed when the test ends.
func NewBlackHole(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}
