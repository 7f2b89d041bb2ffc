package registry

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Defaults of Timeouts. A registry that takes longer than these to
// connect or to start answering is down or overloaded, not slow: failing
// names it, where waiting would stall every Argo CD refresh behind it.
const (
	DefaultDialTimeout           = 10 * time.Second
	DefaultTLSHandshakeTimeout   = 10 * time.Second
	DefaultResponseHeaderTimeout = 30 * time.Second
	DefaultReadIdleTimeout       = 30 * time.Second
)

// Timeouts bound each registry request. Zero fields take the
// defaults above. They apply when Options.Transport is nil or an
// *http.Transport (a clone gets them); any other RoundTripper keeps its own.
// The whole pull is bounded apart from these by PullTimeout and the caller's
// context.
type Timeouts struct {
	// Dial bounds opening the TCP connection.
	Dial time.Duration
	// TLSHandshake bounds the TLS handshake.
	TLSHandshake time.Duration
	// ResponseHeader bounds the wait for a response's headers once the
	// request is sent (the CLI's --registry-timeout).
	ResponseHeader time.Duration
	// ReadIdle bounds each silence while a response body is read: a blob
	// that stops arriving mid-stream fails instead of hanging (the CLI's
	// --registry-timeout).
	ReadIdle time.Duration
}

func (t Timeouts) withDefaults() Timeouts {
	set := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	set(&t.Dial, DefaultDialTimeout)
	set(&t.TLSHandshake, DefaultTLSHandshakeTimeout)
	set(&t.ResponseHeader, DefaultResponseHeaderTimeout)
	set(&t.ReadIdle, DefaultReadIdleTimeout)
	return t
}

const (
	// maxErrorBody is how much of a failed response's body is read: enough
	// for any registry's JSON error, small enough that a registry streaming
	// hundreds of megabytes of "error" costs nothing.
	maxErrorBody = 64 << 10
	// maxErrorText is how much of a registry's own message an error shows.
	maxErrorText = 200
	// maxSmallBody caps the answers that are not blobs (manifests, token
	// responses). Registries refuse manifests over 4 MiB, as the OCI
	// distribution spec allows.
	maxSmallBody = 4 << 20
	// maxAttempts bounds how often an idempotent request is sent when the
	// registry is rate-limiting, overloaded or drops the connection.
	maxAttempts = 4
	// maxRetryAfter is the longest Retry-After olm-cmp waits for; a registry
	// asking for longer is reported at once rather than blocking a render.
	maxRetryAfter = 10 * time.Second
	// defaultRetryWait is the first backoff; it doubles on each retry.
	defaultRetryWait = 500 * time.Millisecond
)

// withTimeouts returns a clone of t with the dial, TLS-handshake and
// response-header timeouts set, or t itself when it is not an
// *http.Transport it can clone.
func withTimeouts(t http.RoundTripper, to Timeouts) http.RoundTripper {
	ht, ok := t.(*http.Transport)
	if !ok {
		return t
	}
	c := ht.Clone()
	dial := c.DialContext
	if dial == nil {
		dial = (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext
	}
	c.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, to.Dial)
		defer cancel()
		return dial(ctx, network, addr)
	}
	c.TLSHandshakeTimeout = to.TLSHandshake
	c.ResponseHeaderTimeout = to.ResponseHeader
	return c
}

// skipVerify returns a copy of t that does not verify TLS certificates, or t
// itself when it is not an *http.Transport it can copy.
func skipVerify(t http.RoundTripper) http.RoundTripper {
	ht, ok := t.(*http.Transport)
	if !ok {
		return t
	}
	c := ht.Clone()
	if c.TLSClientConfig == nil {
		c.TLSClientConfig = &tls.Config{}
	}
	c.TLSClientConfig.InsecureSkipVerify = true //nolint:gosec // only for registries the user listed as insecure
	return c
}

// registryTransport is every registry request's path out. It
//   - enforces the Insecure opt-in: go-containerregistry falls back to plain
//     HTTP on its own for localhost and private addresses, which would let
//     anyone on the network path serve a bundle;
//   - retries idempotent requests (GET, HEAD) on 429, 502, 503, 504 and
//     dropped connections, a bounded number of times, honouring Retry-After
//     up to maxRetryAfter, never past the context's deadline;
//   - turns every failure into a *Error naming the host, the step
//     and, for a timeout, which limit fired;
//   - bounds what it reads: failed responses' bodies to maxErrorBody (then
//     shortened and stripped of credentials before go-containerregistry
//     makes an error of them), answers other than blobs to maxSmallBody,
//     and every body to ReadIdle of silence.
type registryTransport struct {
	secure, insecure http.RoundTripper
	allowed          func(host string) bool
	timeouts         Timeouts
	secrets          *secrets
	retryWait        time.Duration
}

func (t *registryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.secrets.addAuthorization(req.Header.Get("Authorization"))
	step := stepOf(req)
	base := t.secure
	if t.allowed(req.URL.Host) {
		base = t.insecure
	} else if req.URL.Scheme != "https" {
		return nil, &Error{Reason: ReasonPlainHTTP, Host: req.URL.Host, Step: step}
	}
	idempotent := req.Method == http.MethodGet || req.Method == http.MethodHead
	for attempt := 1; ; attempt++ {
		resp, err := t.attempt(base, req, step)
		wait, again := t.nextAttempt(req, resp, err, attempt, idempotent)
		if !again {
			return t.finish(req, step, resp, err, attempt)
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
			resp.Body.Close()
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-req.Context().Done():
			timer.Stop()
			return nil, t.failure(req, step, phaseWaiting, req.Context().Err(), attempt)
		}
	}
}

// attempt sends req once. It tracks how far the request got, so a timeout
// can be named, and gives the response a context of its own, so that the
// body reader can abort a stalled body.
func (t *registryTransport) attempt(base http.RoundTripper, req *http.Request, step string) (*http.Response, error) {
	var at atomic.Int32
	trace := &httptrace.ClientTrace{
		GetConn:              func(string) { at.Store(phaseDial) },
		TLSHandshakeStart:    func() { at.Store(phaseTLS) },
		GotConn:              func(httptrace.GotConnInfo) { at.Store(phaseSending) },
		WroteRequest:         func(httptrace.WroteRequestInfo) { at.Store(phaseWaiting) },
		GotFirstResponseByte: func() { at.Store(phaseHeaders) },
	}
	ctx, cancel := context.WithCancelCause(httptrace.WithClientTrace(req.Context(), trace))
	resp, err := base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel(nil)
		return nil, t.failure(req, step, phase(at.Load()), err, 1)
	}
	resp.Body = &bodyReader{
		rc: resp.Body, cancel: cancel, idle: t.timeouts.ReadIdle, limit: -1,
		t: t, req: req, step: step,
	}
	return resp, nil
}

// nextAttempt says whether and after how long to send req again.
func (t *registryTransport) nextAttempt(req *http.Request, resp *http.Response, err error, attempt int, idempotent bool) (time.Duration, bool) {
	if !idempotent || attempt >= maxAttempts {
		return 0, false
	}
	wait := t.retryWait << (attempt - 1)
	wait += time.Duration(rand.Int64N(int64(wait)/5 + 1)) // jitter: clients retrying in step hit the registry in step
	switch {
	case err != nil:
		var re *Error
		if !errors.As(err, &re) || re.Reason != ReasonReset {
			return 0, false
		}
	case resp.StatusCode == http.StatusTooManyRequests:
		if after, ok := retryAfter(resp.Header.Get("Retry-After")); ok {
			if after > maxRetryAfter {
				return 0, false
			}
			wait = max(after, t.retryWait)
		}
	case resp.StatusCode == http.StatusBadGateway, resp.StatusCode == http.StatusServiceUnavailable, resp.StatusCode == http.StatusGatewayTimeout:
	default:
		return 0, false
	}
	if deadline, ok := req.Context().Deadline(); ok && time.Until(deadline) < wait {
		return 0, false
	}
	return wait, true
}

// retryAfter parses a Retry-After header: seconds or an HTTP date.
func retryAfter(v string) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(min(s, 1<<30)) * time.Second, true // clamped: no overflow
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), 0), true
	}
	return 0, false
}

// finish hands the last attempt's outcome to go-containerregistry: a
// response whose retries ran out becomes a *Error (the library
// would only say "unexpected status code"); another failed response gets a
// short, redacted body, from which the library makes its error; a success
// gets its size cap.
func (t *registryTransport) finish(req *http.Request, step string, resp *http.Response, err error, attempts int) (*http.Response, error) {
	if err != nil {
		var re *Error
		if errors.As(err, &re) {
			re.Attempts = attempts
		}
		return nil, err
	}
	body := resp.Body.(*bodyReader)
	switch {
	case resp.StatusCode < 300:
		if !isBlob(req) {
			body.limit = maxSmallBody
		}
		return resp, nil
	case resp.StatusCode < 400:
		return resp, nil // a redirect: the client follows it
	}
	raw, rerr := io.ReadAll(io.LimitReader(body, maxErrorBody))
	body.Close()
	if rerr != nil {
		return nil, rerr
	}
	if retryable(resp.StatusCode) {
		return nil, &Error{
			Reason: ReasonStatus, Host: req.URL.Host, Step: step, Status: resp.StatusCode,
			Detail: errorText(raw, t.secrets), Attempts: attempts, RetryAfter: resp.Header.Get("Retry-After"),
		}
	}
	short := shortErrorBody(raw, t.secrets)
	resp.Body = io.NopCloser(bytes.NewReader(short))
	resp.ContentLength = int64(len(short))
	resp.Header.Del("Content-Length")
	return resp, nil
}

func retryable(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// phase is how far a request got, to name the timeout that stopped it.
type phase = int32

const (
	phaseStart phase = iota
	phaseDial
	phaseTLS
	phaseSending
	phaseWaiting
	phaseHeaders
	phaseBody
)

// failure turns a transport error into a *Error.
func (t *registryTransport) failure(req *http.Request, step string, at phase, err error, attempts int) error {
	e := &Error{Host: req.URL.Host, Step: step, Attempts: attempts}
	var ne net.Error
	switch {
	case req.Context().Err() != nil:
		e.Reason, e.wrapped = ReasonStopped, []error{req.Context().Err(), context.Cause(req.Context())}
	case errors.As(err, &ne) && ne.Timeout():
		e.Reason = ReasonTimeout
		switch at {
		case phaseStart, phaseDial:
			e.Timeout, e.Limit = TimeoutDial, t.timeouts.Dial
		case phaseTLS:
			e.Timeout, e.Limit = TimeoutTLSHandshake, t.timeouts.TLSHandshake
		case phaseBody:
			e.Timeout, e.Limit = TimeoutReadIdle, t.timeouts.ReadIdle
		default:
			e.Timeout, e.Limit = TimeoutResponseHeader, t.timeouts.ResponseHeader
		}
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		e.Reason = ReasonReset
	default:
		e.Reason, e.Detail = ReasonNetwork, t.secrets.redact(err.Error())
	}
	return e
}

// bodyReader is every response body: it aborts a body that stays silent
// for idle (by cancelling the request's own context, the one way to
// interrupt a read in progress), caps its size when limit is not negative,
// and turns read failures into *Error.
type bodyReader struct {
	rc     io.ReadCloser
	cancel context.CancelCauseFunc
	idle   time.Duration
	limit  int64

	timer *time.Timer
	fired atomic.Bool

	t    *registryTransport
	req  *http.Request
	step string
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.timer == nil {
		b.timer = time.AfterFunc(b.idle, func() { b.fired.Store(true); b.cancel(errIdle) })
	} else {
		b.timer.Reset(b.idle)
	}
	n, err := b.rc.Read(p)
	b.timer.Stop()
	if b.limit >= 0 {
		if b.limit -= int64(n); b.limit < 0 {
			return n, &Error{Reason: ReasonTooLarge, Host: b.req.URL.Host, Step: b.step, Attempts: 1}
		}
	}
	switch {
	case err == nil || err == io.EOF:
		return n, err
	case b.fired.Load():
		return n, &Error{Reason: ReasonTimeout, Host: b.req.URL.Host, Step: b.step, Timeout: TimeoutReadIdle, Limit: b.idle, Attempts: 1}
	}
	return n, b.t.failure(b.req, b.step, phaseBody, err, 1)
}

func (b *bodyReader) Close() error {
	if b.timer != nil {
		b.timer.Stop()
	}
	err := b.rc.Close()
	b.cancel(nil)
	return err
}

var errIdle = errors.New("registry body read-idle timeout")

func isBlob(req *http.Request) bool {
	return strings.Contains(originalRequest(req).URL.Path, "/blobs/")
}

// originalRequest is the request a redirect chain started from: a blob
// redirected to a storage service is still that blob.
func originalRequest(req *http.Request) *http.Request {
	for req.Response != nil && req.Response.Request != nil {
		req = req.Response.Request
	}
	return req
}

// stepOf names what a registry request does, for error messages, from the
// path go-containerregistry built from the user's reference.
func stepOf(req *http.Request) string {
	orig := originalRequest(req)
	p := orig.URL.Path
	if p == "/v2/" || p == "/v2" {
		return "contacting the registry"
	}
	if _, ref, ok := strings.Cut(p, "/manifests/"); ok {
		if strings.Contains(ref, ":") {
			return "fetching the manifest " + ref
		}
		return "resolving tag " + ref
	}
	if _, digest, ok := strings.Cut(p, "/blobs/"); ok {
		return "fetching blob " + digest
	}
	if strings.HasSuffix(p, "/tags/list") {
		return "reading the tag list" // versions REF, a missing tag's neighbours
	}
	return "getting an access token from " + orig.URL.Host
}

// Reason is why a registry call failed.
type Reason string

const (
	// ReasonTimeout: one of Timeouts fired (Error.Timeout says which).
	ReasonTimeout Reason = "timeout"
	// ReasonStopped: the caller's context ended (its deadline, PullTimeout or a cancel).
	ReasonStopped Reason = "stopped"
	// ReasonReset: the registry closed the connection, on every attempt.
	ReasonReset Reason = "reset"
	// ReasonStatus: the registry answered with an error status.
	ReasonStatus Reason = "status"
	// ReasonTooLarge: an answer other than a blob was over maxSmallBody.
	ReasonTooLarge Reason = "too large"
	// ReasonNetwork: any other failure to reach the registry (refused, DNS, TLS).
	ReasonNetwork Reason = "network"
	// ReasonPlainHTTP: plain HTTP to a registry not listed as insecure.
	ReasonPlainHTTP Reason = "plain HTTP"
)

// The timeouts of Timeouts, as Error.Timeout names them.
const (
	TimeoutDial           = "dial"
	TimeoutTLSHandshake   = "TLS-handshake"
	TimeoutResponseHeader = "response-header"
	TimeoutReadIdle       = "read-idle"
)

// Error is a failed registry call: which host, what olm-cmp was
// doing there, and why. Its text never holds credentials, and at most a
// short excerpt of what the registry said.
type Error struct {
	Reason Reason
	// Host is the host:port that failed: the registry, or the service it
	// redirected to or sends clients to for tokens.
	Host string
	// Step is what the request did: "resolving tag v1", "fetching the
	// manifest sha256:…", "fetching blob sha256:…", "contacting the
	// registry" or "getting an access token from …".
	Step string
	// Timeout and Limit say which timeout fired and its value (ReasonTimeout).
	Timeout string
	Limit   time.Duration
	// Status is the HTTP status (ReasonStatus).
	Status int
	// Detail is the registry's message or the network error, shortened and
	// with credentials removed.
	Detail string
	// Attempts is how many times the request was sent.
	Attempts int
	// RetryAfter is the registry's Retry-After header, if any.
	RetryAfter string

	// wrapped is the chain: the context's error and cause (ReasonStopped),
	// or the library's status error (ReasonStatus, once the call is over).
	wrapped []error
}

func (e *Error) Error() string {
	host := "registry " + e.Host
	if e.Host == "" {
		host = "the registry"
	}
	tries := ""
	if e.Attempts > 1 {
		tries = fmt.Sprintf(" (tried %d times)", e.Attempts)
	}
	switch e.Reason {
	case ReasonTimeout:
		switch e.Timeout {
		case TimeoutDial:
			return fmt.Sprintf("could not connect to %s within %s while %s (dial timeout): check the address, and that the network, proxy or firewall lets olm-cmp reach it", host, e.Limit, e.Step)
		case TimeoutTLSHandshake:
			return fmt.Sprintf("%s did not complete the TLS handshake within %s while %s (TLS-handshake timeout): check that the address serves HTTPS and is not overloaded", host, e.Limit, e.Step)
		case TimeoutReadIdle:
			return fmt.Sprintf("%s stopped sending for %s while %s (read-idle timeout; raise it with --registry-timeout)", host, e.Limit, e.Step)
		}
		return fmt.Sprintf("%s did not answer within %s while %s (response-header timeout; raise it with --registry-timeout)", host, e.Limit, e.Step)
	case ReasonStopped:
		return fmt.Sprintf("gave up on %s while %s: %s", host, e.Step, stoppedText(e.wrapped))
	case ReasonReset:
		return fmt.Sprintf("%s closed the connection while %s%s", host, e.Step, tries)
	case ReasonPlainHTTP:
		return fmt.Sprintf("refusing plain HTTP to %s while %s: list it in the insecure registries (--insecure-registry) to allow it", host, e.Step)
	case ReasonTooLarge:
		return fmt.Sprintf("%s sent more than %d bytes while %s, far more than such an answer holds: the registry or a proxy in front of it is misbehaving", host, maxSmallBody, e.Step)
	case ReasonStatus:
		msg := fmt.Sprintf("%s answered %d %s while %s%s", host, e.Status, http.StatusText(e.Status), e.Step, tries)
		if e.Detail != "" {
			msg += ": " + e.Detail
		}
		return msg + statusHint(e)
	}
	return fmt.Sprintf("cannot reach %s while %s: %s", host, e.Step, e.Detail)
}

// Unwrap gives the context's error and cause of ReasonStopped, so callers
// can tell a deadline (errors.Is(err, context.DeadlineExceeded)) and which
// one (their own cause), and go-containerregistry's *transport.Error of a
// status. Network errors are left out on purpose: go-containerregistry
// retries errors that look temporary, which would repeat what this
// transport already decided.
func (e *Error) Unwrap() []error { return e.wrapped }

func stoppedText(errs []error) string {
	if len(errs) == 2 && errs[1] != nil && errs[1] != errs[0] {
		return errs[1].Error()
	}
	if len(errs) > 0 && errors.Is(errs[0], context.DeadlineExceeded) {
		return "the deadline of the operation expired"
	}
	return "the operation was cancelled"
}

func statusHint(e *Error) string {
	switch {
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		return "; access denied: log in to the registry (docker login) or pass a registry config with credentials (--registry-config)"
	case e.Status == http.StatusNotFound:
		return "; not found in the registry: check the image reference"
	case e.Status == http.StatusTooManyRequests:
		if after, ok := retryAfter(e.RetryAfter); ok && after > maxRetryAfter {
			return fmt.Sprintf("; the registry is rate-limiting and asks to wait %s, longer than olm-cmp waits (%s): try again later", after, maxRetryAfter)
		}
		return "; the registry is rate-limiting: try again later"
	case e.Status >= 500:
		return "; the registry failed: try again later"
	}
	return ""
}

// AsError finds the registry failure in err: a *Error, or
// go-containerregistry's error for a status this transport passed on. When
// err holds several (the library races HTTPS and plain HTTP when it pings a
// registry that may be insecure, and joins both failures), the most telling
// one wins: a stall over a refusal, a refusal over a status, a status over
// a connection failure, so that the HTTPS half failing on a plain-HTTP
// registry, as it must, does not hide what stopped the HTTP half.
func AsError(err error) *Error {
	set := &failureSet{}
	errors.As(err, &set)
	found := set.list
	var te *transport.Error
	if errors.As(err, &te) {
		re := &Error{Reason: ReasonStatus, Status: te.StatusCode, Detail: diagnostics(te), Attempts: 1, wrapped: []error{te}}
		if te.Request != nil {
			re.Host, re.Step = te.Request.URL.Host, stepOf(te.Request)
		}
		found = append(found, re)
	}
	var best *Error
	for _, re := range found {
		if best == nil || re.rank() > best.rank() {
			best = re
		}
	}
	return best
}

// rank orders failures by how much they tell the user; see AsError.
func (e *Error) rank() int {
	switch e.Reason {
	case ReasonStopped:
		return 100
	case ReasonTimeout:
		switch e.Timeout {
		case TimeoutDial:
			return 70
		case TimeoutTLSHandshake:
			return 80
		}
		return 90
	case ReasonPlainHTTP:
		return 60
	case ReasonStatus:
		return 50
	case ReasonTooLarge:
		return 45
	case ReasonReset:
		return 40
	}
	return 30
}

// failureSet collects every *Error of an error tree through
// Error.As, which sees them all, even inside errors that offer only
// As and no Unwrap (the library's joined ping failures).
type failureSet struct{ list []*Error }

func (*failureSet) Error() string { return "registry failures" }

// As adds e to a *failureSet target and reports false, so that errors.As
// goes on through the rest of the tree.
func (e *Error) As(target any) bool {
	if set, ok := target.(**failureSet); ok {
		(*set).list = append((*set).list, e)
	}
	return false
}

// diagnostics is the registry's message in te, shortened: its error codes
// and messages (already redacted and cut by shortErrorBody), else its body.
func diagnostics(te *transport.Error) string {
	var parts []string
	for _, d := range te.Errors {
		parts = append(parts, truncate(string(d.Code)+": "+d.Message, maxErrorText))
	}
	if len(parts) > 0 {
		return strings.Join(parts, "; ")
	}
	_, raw, ok := strings.Cut(te.Error(), http.StatusText(te.StatusCode)+": ")
	if !ok {
		return ""
	}
	return truncate(raw, maxErrorText)
}

// headFailureIsFinal reports whether a failed HEAD of a manifest should not
// be repeated as a GET: the registry refused or lacks the reference, or the
// transport already gave up on it (timeout, retries spent). The GET
// fallback is for registries that answer HEAD badly, not for dead ones.
func headFailureIsFinal(err error) bool {
	var re *Error
	if errors.As(err, &re) {
		return true
	}
	var te *transport.Error
	if errors.As(err, &te) {
		switch te.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
			return true
		}
	}
	return false
}

// shortErrorBody rewrites a failed response's body before
// go-containerregistry turns it into an error: a registry JSON error keeps
// its codes and messages, each shortened; anything else becomes one short
// line. Credentials are removed first, so a cut cannot leave half of one.
func shortErrorBody(raw []byte, s *secrets) []byte {
	var doc struct {
		Errors []transport.Diagnostic `json:"errors"`
	}
	if json.Unmarshal(raw, &doc) == nil && len(doc.Errors) > 0 {
		if len(doc.Errors) > 3 {
			doc.Errors = doc.Errors[:3]
		}
		for i := range doc.Errors {
			d := &doc.Errors[i]
			d.Code = transport.ErrorCode(truncate(s.redact(oneLine(string(d.Code))), 40))
			d.Message = truncate(s.redact(oneLine(d.Message)), maxErrorText)
			d.Detail = nil // free-form, may echo anything
		}
		if out, err := json.Marshal(doc); err == nil {
			return out
		}
	}
	return []byte(errorText(raw, s))
}

// errorText is a failed response's body as one short, redacted line.
func errorText(raw []byte, s *secrets) string {
	return truncate(s.redact(oneLine(string(raw))), maxErrorText)
}

// oneLine replaces runs of whitespace and control characters by one space,
// so a registry's body or a multi-line error stays one line.
func oneLine(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if r <= ' ' || r == 0x7f || r == '\u2028' || r == '\u2029' {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// ErrNotAllowed is the error (under errors.Is) for a reference to a
// registry outside Options.AllowedRegistries.
var ErrNotAllowed = errors.New("registry not allowed")

// normalRegistry spells an allowed registry as image references do
// (docker.io is index.docker.io).
func normalRegistry(s string) string {
	s = strings.TrimSpace(s)
	if r, err := name.NewRegistry(s); err == nil {
		return r.RegistryStr()
	}
	return s
}
