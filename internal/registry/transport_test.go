package registry

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
)

// The canary credential: it is sent to every fault registry below and must
// never come back in an error, in any spelling.
const (
	canaryUser     = "canary-user"
	canaryPassword = "CANARY-SECRET-42"
)

// testTimeouts are short, so stalls fail fast; stall cases must fail within
// stallCeiling, ten times the longest of them.
var testTimeouts = Timeouts{
	Dial:           time.Second,
	TLSHandshake:   300 * time.Millisecond,
	ResponseHeader: 300 * time.Millisecond,
	ReadIdle:       300 * time.Millisecond,
}

const stallCeiling = 10 * time.Second

// canaryConfig writes a docker config.json holding the canary credential
// for host.
func canaryConfig(t *testing.T, host string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.json")
	auth := base64.StdEncoding.EncodeToString([]byte(canaryUser + ":" + canaryPassword))
	if err := os.WriteFile(p, fmt.Appendf(nil, `{"auths":{%q:{"auth":%q}}}`, host, auth), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// assertNoCanary fails if text holds the canary, literal or base64.
func assertNoCanary(t *testing.T, text string) {
	t.Helper()
	pair := []byte(canaryUser + ":" + canaryPassword)
	for _, s := range []string{
		canaryUser, canaryPassword,
		base64.StdEncoding.EncodeToString(pair), base64.RawStdEncoding.EncodeToString(pair),
		base64.URLEncoding.EncodeToString(pair),
		base64.StdEncoding.EncodeToString([]byte(canaryPassword)),
		base64.RawStdEncoding.EncodeToString([]byte(canaryPassword)),
	} {
		if strings.Contains(text, s) {
			t.Errorf("error text leaks the credential %q: %s", s, text)
		}
	}
}

// faultOptions are the options of a client of fr with the canary
// credential and short timeouts and retry waits.
func faultOptions(t *testing.T, fr *bundletest.FaultRegistry) Options {
	o := Options{
		RegistryConfig: canaryConfig(t, fr.Host),
		Timeouts:       testTimeouts,
		RetryWait:      10 * time.Millisecond,
	}
	if fr.Transport != nil {
		o.Transport = fr.Transport
	} else {
		o.Insecure = []string{fr.Host}
	}
	return o
}

// testImage is a small image: what it holds does not matter here.
func testImage(t *testing.T) v1.Image {
	return bundletest.Image(t, bundletest.Layer(t, bundletest.File("manifests/a.yaml", "kind: ConfigMap\n")))
}

// TestRegistryFaults: every registry fault, through Resolve or Pull, fails
// with one error naming the registry, the reference and the step (or, for
// passing faults, is retried into a success), in bounded time, and without
// the credential the client sent.
func TestRegistryFaults(t *testing.T) {
	echo := bundletest.Fault{Status: http.StatusUnauthorized, EchoAuthorization: true,
		Header: http.Header{"WWW-Authenticate": {`Basic realm="x"`}}}
	cases := []struct {
		name  string
		tls   bool
		where bundletest.Where
		fault bundletest.Fault
		times int
		// load: the fault hits Pull rather than Resolve.
		load bool
		tag  string // default v1

		ok      bool   // the fault is retried away
		reason  Reason // "" when the error is not a *Error
		status  int
		timeout string
		step    string // in Error.Step
		text    string // in the message
	}{
		{name: "401 with WWW-Authenticate", where: manifests, fault: bundletest.Fault{Status: 401, Header: http.Header{"WWW-Authenticate": {`Basic realm="x"`}},
			Body: `{"errors":[{"code":"UNAUTHORIZED","message":"token expired"}]}`},
			reason: ReasonStatus, status: 401, step: "resolving tag v1", text: "access denied"},
		{name: "401 without WWW-Authenticate", where: manifests, fault: bundletest.Fault{Status: 401},
			reason: ReasonStatus, status: 401, step: "resolving tag v1", text: "access denied"},
		{name: "403", load: true, where: manifestGets, fault: bundletest.Fault{Status: 403, Body: `{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}`},
			reason: ReasonStatus, status: 403, step: "fetching the manifest sha256:", text: "DENIED: requested access"},
		{name: "404 tag", tag: "v2", reason: ReasonStatus, status: 404, step: "resolving tag v2", text: "not found in the registry"},
		{name: "429 with Retry-After, then served", where: manifests, times: 1,
			fault: bundletest.Fault{Status: 429, Header: http.Header{"Retry-After": {"1"}}}, ok: true},
		{name: "429 on every attempt", where: manifests, fault: bundletest.Fault{Status: 429, Header: http.Header{"Retry-After": {"0"}}},
			reason: ReasonStatus, status: 429, step: "resolving tag v1", text: "tried 4 times"},
		{name: "429 asking for an hour", where: manifests, fault: bundletest.Fault{Status: 429, Header: http.Header{"Retry-After": {"3600"}}},
			reason: ReasonStatus, status: 429, step: "resolving tag v1", text: "asks to wait 1h0m0s"},
		{name: "500", where: manifests, fault: bundletest.Fault{Status: 500, Body: "upstream exploded"},
			reason: ReasonStatus, status: 500, step: "resolving tag v1", text: "upstream exploded"},
		{name: "503 twice, then served", where: manifests, times: 2, fault: bundletest.Fault{Status: 503}, ok: true},
		{name: "connection reset once, then served", where: manifests, times: 1, fault: bundletest.Fault{Reset: true}, ok: true},
		{name: "connection reset on every attempt", where: manifests, fault: bundletest.Fault{Reset: true},
			reason: ReasonReset, step: "resolving tag v1", text: "closed the connection"},
		{name: "manifest stalls (HTTP)", where: manifests, fault: bundletest.Fault{Stall: true},
			reason: ReasonTimeout, timeout: TimeoutResponseHeader, step: "resolving tag v1", text: "did not answer within 300ms"},
		{name: "manifest stalls (TLS)", tls: true, where: manifests, fault: bundletest.Fault{Stall: true},
			reason: ReasonTimeout, timeout: TimeoutResponseHeader, step: "resolving tag v1", text: "--registry-timeout"},
		{name: "manifest stalls mid-stream", load: true, where: manifestGets, fault: bundletest.Fault{Stall: true, AfterBytes: 10},
			reason: ReasonTimeout, timeout: TimeoutReadIdle, step: "fetching the manifest sha256:", text: "stopped sending for 300ms"},
		{name: "manifest cut mid-stream", load: true, where: manifestGets,
			fault:  bundletest.Fault{Reset: true, AfterBytes: 10},
			reason: ReasonReset, step: "fetching the manifest sha256:", text: "closed the connection"},
		{name: "manifest digest does not match", load: true, where: manifestGets,
			fault: bundletest.Fault{Tamper: func(b []byte) []byte { return append(b, ' ') }}, text: "does not match"},
		{name: "huge error body", where: manifests, fault: bundletest.Fault{Status: 500, BodySize: 200 << 20},
			reason: ReasonStatus, status: 500, step: "resolving tag v1"},
		// HEAD answers have no body: registries' messages come with GETs.
		{name: "error body echoes Authorization", load: true, where: manifestGets, fault: echo,
			reason: ReasonStatus, status: 401, step: "fetching the manifest sha256:", text: "Authorization: [redacted]"},
		{name: "JSON error echoes Authorization", load: true, where: manifestGets,
			fault:  bundletest.Fault{Status: 403, EchoAuthorization: true, Body: `{"errors":[{"code":"DENIED","message":"you sent $AUTHORIZATION"}]}`},
			reason: ReasonStatus, status: 403, step: "fetching the manifest sha256:", text: "DENIED: you sent Basic [redacted]"},
		{name: "plain error echoes password field", load: true, where: manifestGets,
			fault:  bundletest.Fault{Status: 500, Body: `login failed for password=` + canaryPassword + ` user ` + canaryUser},
			reason: ReasonStatus, status: 500, step: "fetching the manifest sha256:", text: "password=[redacted] user [redacted]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fr := bundletest.NewFaultRegistry(t, bundletest.FaultOptions{TLS: tc.tls, User: canaryUser, Password: canaryPassword})
			fr.Push(t, "widget", "v1", testImage(t))
			c := New(faultOptions(t, fr))
			ctx := context.Background()
			tag := tc.tag
			if tag == "" {
				tag = "v1"
			}
			ref := fr.Host + "/widget:" + tag

			var d name.Digest
			var err error
			if tc.load {
				if d, err = c.Resolve(ctx, ref); err != nil {
					t.Fatal(err)
				}
				ref = d.String()
			}
			fr.Inject(tc.where, tc.fault, tc.times)
			start := time.Now()
			if tc.load {
				_, _, err = c.Pull(ctx, d)
			} else {
				_, err = c.Resolve(ctx, ref)
			}
			elapsed := time.Since(start)
			if elapsed > stallCeiling {
				t.Errorf("took %s, over %s", elapsed, stallCeiling)
			}
			if tc.ok {
				if err != nil {
					t.Fatalf("not retried into a success: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			t.Logf("%s (%s)", msg, elapsed.Round(time.Millisecond))
			assertNoCanary(t, msg)
			if len(msg) > 1024 || strings.Contains(msg, "\n") {
				t.Errorf("error is not one short line (%d bytes)", len(msg))
			}
			for _, want := range []string{fr.Host, ref, tc.step, tc.text} {
				if !strings.Contains(msg, want) {
					t.Errorf("error lacks %q", want)
				}
			}
			var re *Error
			if !errors.As(err, &re) {
				if tc.reason != "" {
					t.Fatalf("not a *Error: %T", err)
				}
				return
			}
			if re.Reason != tc.reason || re.Status != tc.status || re.Timeout != tc.timeout || re.Host != fr.Host || !strings.HasPrefix(re.Step, tc.step) {
				t.Errorf("got %+v; want reason %q status %d timeout %q host %s step %q", re, tc.reason, tc.status, tc.timeout, fr.Host, tc.step)
			}
		})
	}
}

var (
	manifests    = bundletest.Where{Path: bundletest.ManifestsPath}
	manifestGets = bundletest.Where{Method: http.MethodGet, Path: bundletest.ManifestsPath}
)

// TestRegistryRetries: what is retried, and how often; a 500 is not.
func TestRegistryRetries(t *testing.T) {
	cases := []struct {
		name     string
		fault    bundletest.Fault
		times    int
		attempts int // 0: the call succeeds
	}{
		{"429 once", bundletest.Fault{Status: 429, Header: http.Header{"Retry-After": {"0"}}}, 1, 0},
		{"503 always", bundletest.Fault{Status: 503}, 0, maxAttempts},
		{"reset always", bundletest.Fault{Reset: true}, 0, maxAttempts},
		{"500", bundletest.Fault{Status: 500}, 0, 1},
		{"429 asking too long", bundletest.Fault{Status: 429, Header: http.Header{"Retry-After": {"3600"}}}, 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fr := bundletest.NewFaultRegistry(t, bundletest.FaultOptions{})
			fr.Push(t, "widget", "v1", testImage(t))
			c := New(faultOptions(t, fr))
			fr.Inject(manifests, tc.fault, tc.times)
			fr.Requests.Reset()
			_, err := c.Resolve(context.Background(), fr.Host+"/widget:v1")
			if tc.attempts == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var re *Error
			if !errors.As(err, &re) || re.Attempts != tc.attempts {
				t.Fatalf("got %v (%+v), want %d attempts", err, re, tc.attempts)
			}
			// net/http itself resends once a request whose reused
			// connection was closed; HEAD falls back to GET after a 500.
			heads := fr.Requests.Count(func(r bundletest.Request) bool { return strings.Contains(r.Path, "/manifests/") })
			if heads > 2*(tc.attempts+1) {
				t.Errorf("%d manifest requests for %d attempts", heads, tc.attempts)
			}
		})
	}
}

// TestRegistryBlobStallsMidStream: a blob that stops arriving fails after
// ReadIdle, naming the blob, rather than hanging.
func TestRegistryBlobStallsMidStream(t *testing.T) {
	fr := bundletest.NewFaultRegistry(t, bundletest.FaultOptions{})
	fr.Push(t, "widget", "v1", testImage(t))
	c := New(faultOptions(t, fr))
	ctx := context.Background()
	d, err := c.Resolve(ctx, fr.Host+"/widget:v1")
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(d, c.RemoteOptions(ctx)...)
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	digest, _ := layers[0].Digest()
	fr.Inject(bundletest.Where{Path: bundletest.BlobPath(digest.String())}, bundletest.Fault{Stall: true, AfterBytes: 10}, 0)
	rc, err := layers[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	start := time.Now()
	_, err = io.Copy(io.Discard, rc)
	var re *Error
	if !errors.As(err, &re) || re.Reason != ReasonTimeout || re.Timeout != TimeoutReadIdle || re.Step != "fetching blob "+digest.String() {
		t.Fatalf("got %v", err)
	}
	if elapsed := time.Since(start); elapsed > stallCeiling {
		t.Errorf("took %s", elapsed)
	}
}

// TestRegistryRetryStopsAtDeadline: a retry that would outlive the caller's
// deadline is not attempted.
func TestRegistryRetryStopsAtDeadline(t *testing.T) {
	fr := bundletest.NewFaultRegistry(t, bundletest.FaultOptions{})
	fr.Push(t, "widget", "v1", testImage(t))
	o := faultOptions(t, fr)
	o.RetryWait = 5 * time.Second
	c := New(o)
	fr.Inject(manifests, bundletest.Fault{Status: 503}, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := c.Resolve(ctx, fr.Host+"/widget:v1")
	var re *Error
	if !errors.As(err, &re) || re.Status != 503 || re.Attempts != 1 {
		t.Fatalf("got %v", err)
	}
	if elapsed := time.Since(start); elapsed > stallCeiling {
		t.Errorf("took %s", elapsed)
	}
}

// TestRegistryStalledHost: a registry that accepts connections and never
// says anything fails within the timeouts, over plain HTTP and over TLS,
// naming the host, the reference and the timeout.
func TestRegistryStalledHost(t *testing.T) {
	cases := []struct {
		name     string
		insecure bool
		timeout  string
	}{
		// go-containerregistry races HTTPS and HTTP for an insecure
		// registry: the HTTP half, which got further, is reported.
		{"plain HTTP", true, TimeoutResponseHeader},
		{"TLS", false, TimeoutTLSHandshake},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			host := bundletest.NewBlackHole(t)
			o := Options{Timeouts: testTimeouts, RegistryConfig: canaryConfig(t, host)}
			if tc.insecure {
				o.Insecure = []string{host}
			}
			ref := host + "/widget:v1"
			start := time.Now()
			_, err := New(o).Resolve(context.Background(), ref)
			elapsed := time.Since(start)
			if err == nil {
				t.Fatal("a silent registry resolved")
			}
			t.Logf("%v (%s)", err, elapsed.Round(time.Millisecond))
			if elapsed > stallCeiling {
				t.Errorf("took %s, over %s", elapsed, stallCeiling)
			}
			var re *Error
			if !errors.As(err, &re) || re.Reason != ReasonTimeout || re.Timeout != tc.timeout || re.Host != host || re.Step != "contacting the registry" {
				t.Errorf("got %#v", re)
			}
			for _, want := range []string{host, ref, "contacting the registry", tc.timeout + " timeout"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q", want)
				}
			}
			assertNoCanary(t, err.Error())
		})
	}
}

// TestRegistryDeadlineNamesItsCause: when the caller's deadline ends a
// stalled call first, the error says which step it stopped and carries the
// caller's cause, so the CLI can name its --timeout.
func TestRegistryDeadlineNamesItsCause(t *testing.T) {
	fr := bundletest.NewFaultRegistry(t, bundletest.FaultOptions{})
	fr.Push(t, "widget", "v1", testImage(t))
	o := faultOptions(t, fr)
	o.Timeouts.ResponseHeader = time.Minute
	fr.Inject(manifests, bundletest.Fault{Stall: true}, 0)
	cause := errors.New("the --timeout of 300ms expired")
	ctx, cancel := context.WithTimeoutCause(context.Background(), 300*time.Millisecond, cause)
	defer cancel()
	_, err := New(o).Resolve(ctx, fr.Host+"/widget:v1")
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, cause) {
		t.Fatalf("got %v", err)
	}
	for _, want := range []string{fr.Host, "resolving tag v1", cause.Error()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

// TestRegistryHugeErrorBody: a 200 MB error page is not read: the error is
// short, quick, and the memory it costs is not proportional to the page.
func TestRegistryHugeErrorBody(t *testing.T) {
	fr := bundletest.NewFaultRegistry(t, bundletest.FaultOptions{})
	fr.Push(t, "widget", "v1", testImage(t))
	c := New(faultOptions(t, fr))
	fr.Inject(manifests, bundletest.Fault{Status: 500, BodySize: 200 << 20}, 0)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := c.Resolve(context.Background(), fr.Host+"/widget:v1")
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("no error")
	}
	if len(err.Error()) >= 1024 {
		t.Errorf("error is %d bytes", len(err.Error()))
	}
	if sent := fr.FaultBytes(); sent > 64<<20 {
		t.Errorf("the client read on: the registry sent %d bytes", sent)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("allocated %d bytes for a 200 MB error body", alloc)
	}
	if elapsed > stallCeiling {
		t.Errorf("took %s", elapsed)
	}
}

// TestAllowedRegistries: a reference to a registry outside the allow-list
// is refused by Parse and Resolve before any request; Docker Hub is
// docker.io in the list, index.docker.io in references.
func TestAllowedRegistries(t *testing.T) {
	host, reqs := bundletest.NewRegistry(t)
	bundletest.Push(t, host, "widget", "v1", testImage(t))
	ctx := context.Background()

	open := New(Options{Insecure: []string{host}, AllowedRegistries: []string{" " + host + " "}})
	d, err := open.Resolve(ctx, host+"/widget:v1")
	if err != nil {
		t.Fatal(err)
	}

	closed := New(Options{Insecure: []string{host}, AllowedRegistries: []string{"quay.io", "docker.io"}})
	reqs.Reset()
	_, rerr := closed.Resolve(ctx, host+"/widget:v1")
	_, perr := closed.Parse(d.String())
	for _, err := range []error{rerr, perr} {
		if !errors.Is(err, ErrNotAllowed) {
			t.Errorf("not refused: %v", err)
			continue
		}
		for _, want := range []string{host, "quay.io, docker.io", "--allowed-registries"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%q lacks %q", err, want)
			}
		}
	}
	if n := reqs.Total(); n != 0 {
		t.Errorf("%d requests to a registry that is not allowed", n)
	}
	for _, ref := range []string{"busybox:1", "docker.io/library/busybox:1", "quay.io/x/y:1"} {
		if _, err := closed.Parse(ref); err != nil {
			t.Errorf("%s refused: %v", ref, err)
		}
	}
	if _, err := closed.Parse("ghcr.io/x/y:1"); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("ghcr.io allowed: %v", err)
	}
}

// TestRedact: recorded credentials go in every spelling; header and
// field values go by their shape.
func TestRedact(t *testing.T) {
	var s secrets
	s.addBasic(canaryUser, canaryPassword)
	s.addAuthorization("Bearer tok-123456789")
	pair := base64.StdEncoding.EncodeToString([]byte(canaryUser + ":" + canaryPassword))
	cases := []struct{ in, want string }{
		{"denied for " + canaryUser, "denied for [redacted]"},
		{"Authorization: Basic " + pair, "Authorization: [redacted] [redacted]"},
		{`{"Authorization":["Bearer abc.def.ghi"]}`, `{"Authorization":["Bearer [redacted]"]}`},
		{"got " + pair + " and " + base64.RawStdEncoding.EncodeToString([]byte(canaryPassword)), "got [redacted] and [redacted]"},
		{"tok-123456789 was revoked", "[redacted] was revoked"},
		{"password=hunter22&user=x", "password=[redacted]&user=x"},
		{`"refresh_token": "r1-abcdef"`, `"refresh_token": "[redacted]"`},
		{"manifest unknown", "manifest unknown"},
	}
	for _, tc := range cases {
		if got := s.redact(tc.in); got != tc.want {
			t.Errorf("redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestShortErrorBody: a failed response's body is cut to one short line; a
// registry's JSON keeps its codes and messages.
func TestShortErrorBody(t *testing.T) {
	var s secrets
	long := bytes.Repeat([]byte("word "), 10000)
	if got := shortErrorBody(long, &s); len(got) > maxErrorText+4 {
		t.Errorf("%d bytes", len(got))
	}
	got := string(shortErrorBody([]byte(`{"errors":[{"code":"DENIED","message":"no\nway","detail":{"x":"`+strings.Repeat("y", 5000)+`"}}]}`), &s))
	if got != `{"errors":[{"code":"DENIED","message":"no way"}]}` {
		t.Errorf("got %s", got)
	}
}
