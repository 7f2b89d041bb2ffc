package cmpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/olm-cmp/olm-cmp/internal/cmpserver/pluginpb"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/engine"
	"github.com/olm-cmp/olm-cmp/internal/registry"
	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/tenancy"
	"github.com/olm-cmp/olm-cmp/internal/verify"
)

// DefaultSocketDir is where Argo CD's repo-server looks for plugin sockets
// unless ARGOCD_PLUGINSOCKFILEPATH says otherwise.
const DefaultSocketDir = "/home/argocd/cmp-server/plugins"

// MaxMessageSize is Argo CD's default gRPC message limit (ARGOCD_GRPC_MAX_SIZE_MB=100).
const MaxMessageSize = 100 * 1024 * 1024

// KeepaliveMinTime is the shortest ping interval the server tolerates. Argo
// CD pings every 20 s (10 s in some versions); a stricter server sends GOAWAY
// too_many_pings and kills long generations.
const KeepaliveMinTime = 5 * time.Second

// ServerOptions configure a Server.
type ServerOptions struct {
	// Config names the socket; nil means DefaultPluginConfig.
	Config *PluginConfig
	// SocketDir holds the socket. It must exist unless CreateSocketDir is
	// set: in the sidecar it is the repo-server's shared plugins volume, and a
	// socket made anywhere else is one the repo-server never finds.
	SocketDir       string
	CreateSocketDir bool
	// WorkDir is the base directory (default os.TempDir()) under which the
	// server makes its private work directory, olm-cmp-<random> (mode 0700),
	// and in it a fresh directory per request, removed when the request ends.
	// It must exist, and must not be $ARGOCD_CMP_WORKDIR/_cmp_server, which
	// the stock sidecar wipes.
	WorkDir string
	// RequestTimeout bounds a request whose caller set no deadline (default
	// DefaultRequestTimeout; negative: no bound). Argo CD always sets one.
	RequestTimeout time.Duration
	// Renderer renders: the engine, which HTTP renders share.
	Renderer engine.Renderer
	// Limits bound each request's tarball.
	Limits Limits
	// ReadyDirs must be writable for Ready to succeed (the bundle cache).
	ReadyDirs []string
	// DeadlineMargin is taken off the caller's deadline so an error can still
	// reach it (default 250 ms; Argo CD's own cmp-server takes 100 ms, which
	// a busy node can miss, and then the UI shows a bare "context deadline
	// exceeded" instead of olm-cmp's explanation).
	DeadlineMargin time.Duration
	Logger         *slog.Logger
	Metrics        *engine.Metrics
}

// DefaultRequestTimeout bounds a request that arrives without a deadline: a
// stalled registry must not hold a request, its goroutines and its temporary
// directory forever.
const DefaultRequestTimeout = 5 * time.Minute

// ErrNoSocketDir is returned by Listen when the socket directory does not
// exist and ServerOptions.CreateSocketDir is not set.
var ErrNoSocketDir = errors.New("the socket directory does not exist")

// Server serves Argo CD's ConfigManagementPluginService on a unix socket.
type Server struct {
	o         ServerOptions
	grpc      *grpc.Server
	health    *health.Server
	path      string
	work      *workDir // set by Listen
	listening atomic.Bool
	owned     atomic.Bool // the socket file is ours to remove
	stopOnce  sync.Once
}

// NewServer builds a server; Listen and Serve start it.
func NewServer(o ServerOptions) *Server {
	if o.Config == nil {
		o.Config = DefaultPluginConfig()
	}
	if o.SocketDir == "" {
		o.SocketDir = DefaultSocketDir
	}
	if o.WorkDir == "" {
		o.WorkDir = os.TempDir()
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.DeadlineMargin == 0 {
		o.DeadlineMargin = 250 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{o: o, path: filepath.Join(o.SocketDir, o.Config.SocketName()), health: health.NewServer()}
	s.grpc = grpc.NewServer(
		grpc.MaxRecvMsgSize(MaxMessageSize),
		grpc.MaxSendMsgSize(MaxMessageSize),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: KeepaliveMinTime, PermitWithoutStream: true}),
		grpc.ChainUnaryInterceptor(s.recoverUnary),
		grpc.ChainStreamInterceptor(s.recoverStream, s.defaultDeadline),
	)
	pluginpb.RegisterConfigManagementPluginServiceServer(s.grpc, &service{s: s})
	healthpb.RegisterHealthServer(s.grpc, s.health)
	return s
}

// SocketPath is <socket-dir>/<name>-<version>.sock.
func (s *Server) SocketPath() string { return s.path }

// Listen checks the socket directory, makes the private work directory
// (sweeping those of servers that are gone), removes a stale socket and
// listens. The socket is made connectable by any user (Argo CD's repo-server
// runs as uid 999, the server maybe not): the plugins volume, shared only by
// the repo-server pod's containers, is the access boundary, as for Argo CD's
// own sidecars.
func (s *Server) Listen() (net.Listener, error) {
	if err := s.checkSocketDir(); err != nil {
		return nil, err
	}
	work, err := openWorkDir(s.o.WorkDir, s.o.Logger)
	if err != nil {
		return nil, err
	}
	lis, err := s.listenSocket()
	if err != nil {
		work.close()
		return nil, err
	}
	s.work = work
	s.listening.Store(true)
	s.owned.Store(true)
	return lis, nil
}

// checkSocketDir refuses a socket directory that is missing (unless asked to
// create it) or not a directory.
func (s *Server) checkSocketDir() error {
	d := s.o.SocketDir
	if s.o.CreateSocketDir {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("creating the socket directory %s: %w", d, err)
		}
	}
	fi, err := os.Stat(d)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%w: %s", ErrNoSocketDir, d)
	case err != nil:
		return fmt.Errorf("socket directory %s: %w", d, err)
	case !fi.IsDir():
		return fmt.Errorf("socket directory %s is not a directory", d)
	}
	return nil
}

func (s *Server) listenSocket() (net.Listener, error) {
	if fi, err := os.Lstat(s.path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket: refusing to replace it", s.path)
		}
		if c, err := net.DialTimeout("unix", s.path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("another server is listening on %s", s.path)
		}
		if err := os.Remove(s.path); err != nil {
			return nil, fmt.Errorf("removing stale socket: %w", err)
		}
		s.o.Logger.Info("removed stale socket", "socket", s.path)
	}
	lis, err := net.Listen("unix", s.path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(s.path, 0o777); err != nil {
		lis.Close()
		return nil, fmt.Errorf("chmod socket: %w", err)
	}
	return lis, nil
}

// Serve serves lis until Shutdown.
func (s *Server) Serve(lis net.Listener) error {
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	c := s.o.Config
	s.o.Logger.Info("serving Argo CD config-management plugin", "socket", s.path, "plugin", c.Metadata.Name, "version", c.Spec.Version, "discovery", c.DiscoveryConfigured())
	if d := c.Spec.Discover; c.DiscoveryConfigured() && (d.FileName != spec.FileName || d.Find.Glob != "" || len(d.Find.Command) > 0) {
		s.o.Logger.Warn("plugin.yaml spec.discover names another rule: the native server discovers applications by " + spec.FileName + " only")
	}
	err := s.grpc.Serve(lis)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// Shutdown stops accepting connections, lets in-flight requests finish until
// ctx ends (then cancels them), and removes the socket.
func (s *Server) Shutdown(ctx context.Context) {
	s.stopOnce.Do(func() {
		s.listening.Store(false)
		s.health.Shutdown()
		done := make(chan struct{})
		go func() {
			s.grpc.GracefulStop()
			close(done)
		}()
		select {
		case <-done:
		case <-ctx.Done():
			s.o.Logger.Warn("shutdown timeout: cancelling in-flight requests")
			s.grpc.Stop()
			<-done
		}
		if s.work != nil {
			if err := s.work.close(); err != nil {
				s.o.Logger.Warn("removing the work directory", "dir", s.work.path, "error", err)
			}
		}
		// The listener unlinks its socket on close; this covers a listener
		// that was never served.
		if !s.owned.Load() {
			return
		}
		if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.o.Logger.Warn("removing socket", "socket", s.path, "error", err)
		}
	})
}

// Ready reports whether the server can take requests: the socket is
// listening and every directory it writes to is writable.
func (s *Server) Ready() error {
	if !s.listening.Load() {
		return errors.New("plugin socket not listening")
	}
	if fi, err := os.Lstat(s.path); err != nil || fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("plugin socket %s is gone", s.path)
	}
	for _, d := range append([]string{s.work.path}, s.o.ReadyDirs...) {
		if d == "" {
			continue
		}
		f, err := os.CreateTemp(d, ".ready-*")
		if err != nil {
			return fmt.Errorf("%s is not writable: %v", d, err)
		}
		f.Close()
		os.Remove(f.Name())
	}
	return nil
}

func (s *Server) recoverUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
	defer s.recoverPanic(info.FullMethod, &err)
	return h(ctx, req)
}

func (s *Server) recoverStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
	defer s.recoverPanic(info.FullMethod, &err)
	return h(srv, ss)
}

// defaultDeadline gives a streaming call whose caller set no deadline the
// server's RequestTimeout. Argo CD's repo-server always sets one (its
// repository timeout); another client, or a misconfigured one, must not be
// able to hold a request, and its work directory, forever.
func (s *Server) defaultDeadline(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ctx := ss.Context()
	if _, ok := ctx.Deadline(); ok || s.o.RequestTimeout < 0 {
		return h(srv, ss)
	}
	ctx, cancel := context.WithTimeout(context.WithValue(ctx, serverDeadlineKey{}, s.o.RequestTimeout), s.o.RequestTimeout)
	defer cancel()
	return h(srv, &deadlineStream{ServerStream: ss, ctx: ctx})
}

// serverDeadlineKey marks a request context whose deadline is the server's
// RequestTimeout rather than the caller's, so that the timeout error names
// the right knob.
type serverDeadlineKey struct{}

type deadlineStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (d *deadlineStream) Context() context.Context { return d.ctx }

// recoverPanic turns a panic in one request into that request's error: one
// bad bundle must not take the plugin down for every Application.
func (s *Server) recoverPanic(method string, err *error) {
	if r := recover(); r != nil {
		*err = status.Error(codes.Internal, s.internalError(method, r, debug.Stack()))
	}
}

// internalError logs a panic with its stack and returns the one line the
// user reads: no stack, no server path.
func (s *Server) internalError(method string, value any, stack []byte) string {
	s.o.Logger.Error("panic serving request", "method", method, "panic", fmt.Sprint(value), "stack", string(stack))
	return fmt.Sprintf("olm-cmp internal error: %s (please report this with the olm-cmp version and the bundle; the stack is in the plugin's log)", echo.Short(fmt.Sprint(value)))
}

// service adapts the protocol to BuildRequest and the renderer: receive the
// stream into a directory, call one function, send the result.
type service struct {
	pluginpb.UnimplementedConfigManagementPluginServiceServer
	s *Server
}

// request is the per-call state shared by the three streaming RPCs.
type request struct {
	rpc   string
	start time.Time
	// waited is how long the metadata took to arrive: Argo CD's repo-server
	// tars and compresses the whole repository before it sends anything.
	waited time.Duration
	dir    string // extraction root
	meta   *pluginpb.ManifestRequestMetadata
	env    *AppEnv
	attrs  []any
	// running, when set, is closed once no render reads dir any more
	// (engine.Info.Running): dir is removed only then.
	running <-chan struct{}
}

// begin receives the repository of a streaming call into a new directory.
// The returned cleanup removes it; call it even on error.
func (sv *service) begin(ctx context.Context, rpc string, stream streamReceiver) (*request, func(), error) {
	s := sv.s
	r := &request{rpc: rpc, start: time.Now()}
	s.o.Metrics.InflightAdd(1)
	cleanup := func() { s.o.Metrics.InflightAdd(-1) }
	dir, err := s.work.requestDir()
	if err != nil {
		// The user reads the cause, the operator the path (never shown in the UI).
		s.o.Logger.Error("creating a request directory", "rpc", rpc, "error", err)
		cause := err
		if pe := (*os.PathError)(nil); errors.As(err, &pe) {
			cause = pe.Err
		}
		return r, cleanup, coded(codes.Internal, fmt.Errorf("olm-cmp: the sidecar cannot create a work directory for this request (%v): check its temporary directory volume and its log", cause))
	}
	r.dir = dir
	cleanup = func() {
		remove := func() {
			if err := os.RemoveAll(dir); err != nil {
				s.o.Logger.Error("removing request directory", "dir", dir, "error", err)
			}
		}
		if r.running != nil {
			// The answer went out at the deadline while a render step still
			// reads the directory; it goes when that step ends.
			go func() { <-r.running; remove() }()
		} else {
			remove()
		}
		s.o.Metrics.InflightAdd(-1)
	}
	meta, err := receiveRepo(ctx, &timedReceiver{streamReceiver: stream, r: r}, dir, s.o.Limits, s.o.Metrics)
	return r, cleanup, sv.received(r, meta, err)
}

// beginScan receives the repository of a streaming call without writing it
// anywhere, and returns the index of its entries.
func (sv *service) beginScan(ctx context.Context, rpc string, stream streamReceiver) (*request, *tarIndex, func(), error) {
	s := sv.s
	r := &request{rpc: rpc, start: time.Now()}
	s.o.Metrics.InflightAdd(1)
	cleanup := func() { s.o.Metrics.InflightAdd(-1) }
	meta, idx, err := scanRepo(ctx, &timedReceiver{streamReceiver: stream, r: r}, s.o.Limits, s.o.Metrics)
	return r, idx, cleanup, sv.received(r, meta, err)
}

// timedReceiver notes in r when the first message arrived.
type timedReceiver struct {
	streamReceiver
	r    *request
	done bool
}

func (t *timedReceiver) Recv() (*pluginpb.AppStreamRequest, error) {
	m, err := t.streamReceiver.Recv()
	if !t.done {
		t.done = true
		t.r.waited = time.Since(t.r.start)
	}
	return m, err
}

// received completes r from the stream's metadata, or codes the receive error.
func (sv *service) received(r *request, meta *pluginpb.ManifestRequestMetadata, err error) error {
	if err != nil {
		code := codes.InvalidArgument
		if strings.Contains(err.Error(), "checksum mismatch") {
			code = codes.DataLoss
		}
		return coded(code, err)
	}
	r.meta = meta
	vars := make([]string, 0, len(meta.GetEnv()))
	for _, e := range meta.GetEnv() {
		vars = append(vars, e.GetName()+"="+e.GetValue())
	}
	env, err := ParseEnv(vars)
	if err != nil {
		return coded(codes.InvalidArgument, err)
	}
	r.env = env
	r.attrs = []any{"app", env.AppName, "app_namespace", env.AppNamespace, "path", meta.GetAppRelPath()}
	if env.Project != "" {
		// Escaped and cut: the name is the repo-server's, but a log line
		// must not carry 10 KB or a control character from anywhere.
		r.attrs = append(r.attrs, "project", echo.Short(env.Project))
	}
	return nil
}

// finish logs and measures a call and turns err into the status the repo-server shows.
func (sv *service) finish(ctx context.Context, r *request, err error, extra ...any) error {
	s := sv.s
	st := sv.status(ctx, r, err)
	if len(st.Message()) > echo.MaxMessage {
		// Argo CD stores the message in the Application's status.
		st = status.New(st.Code(), echo.Message(st.Message(), echo.MaxMessage))
	}
	d := time.Since(r.start)
	s.o.Metrics.ObserveRequest(r.rpc, st.Code().String(), d)
	attrs := []any{"rpc", r.rpc, "outcome", st.Code().String(), "duration_ms", float64(d.Microseconds()) / 1000}
	if r.waited > 0 {
		// Of duration_ms, the time the repo-server took to start streaming.
		attrs = append(attrs, "wait_ms", float64(r.waited.Microseconds())/1000)
	}
	attrs = append(attrs, r.attrs...)
	attrs = append(attrs, extra...)
	if err != nil {
		s.o.Logger.Warn("request failed", append(attrs, "error", st.Message())...)
		return st.Err()
	}
	s.o.Logger.Info("request", attrs...)
	return nil
}

// status maps an error to a gRPC status whose message is what the user reads
// in the Argo CD UI: the render error itself, with the temporary directory
// taken out of paths.
func (sv *service) status(ctx context.Context, r *request, err error) *status.Status {
	if err == nil {
		return status.New(codes.OK, "")
	}
	var pe *engine.PanicError
	if errors.As(err, &pe) {
		return status.New(codes.Internal, sv.s.internalError(r.rpc, pe.Value, pe.Stack))
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		if d, ok := ctx.Value(serverDeadlineKey{}).(time.Duration); ok {
			return status.Newf(codes.DeadlineExceeded, "olm-cmp: rendering did not finish within olm-cmp's %s request timeout (the caller set no deadline; serve --request-timeout changes it). Cause: %s", d, sv.clean(r, err.Error()))
		}
		total := "deadline"
		if dl, ok := ctx.Deadline(); ok {
			total = fmt.Sprintf("%s deadline", (dl.Sub(r.start) + sv.s.o.DeadlineMargin).Round(100*time.Millisecond))
		}
		return status.Newf(codes.DeadlineExceeded, "olm-cmp: rendering did not finish within the repo-server's %s. A first pull of a large bundle can take that long and goes on in the background: retry shortly, or raise the repo-server timeout (controller.repo.server.timeout.seconds, server.repo.server.timeout.seconds). Cause: %s", total, sv.clean(r, err.Error()))
	}
	if errors.Is(err, context.Canceled) {
		return status.New(codes.Canceled, sv.clean(r, err.Error()))
	}
	if st, ok := status.FromError(err); ok && st.Code() != codes.Unknown {
		return status.New(st.Code(), sv.clean(r, st.Message()))
	}
	code := codes.InvalidArgument
	var ce *codedError
	var refused *verify.RefusalError
	var tenant *tenancy.RefusalError
	var noPolicy *tenancy.PolicyError
	if errors.As(err, &ce) {
		code = ce.code
	} else if errors.As(err, &noPolicy) {
		// The sidecar's tenancy policy does not load: no request can be
		// judged until the admin restores it; retrying the same request
		// does not help (Unavailable would invite retries).
		code = codes.FailedPrecondition
	} else if errors.As(err, &refused) || errors.As(err, &tenant) {
		// The cluster's trust policy refused the image, or the tenancy
		// policy refused the project what it asked for: not the request's
		// fault, and no retry helps until the image is signed or the
		// policy grants it.
		code = codes.PermissionDenied
	} else if c, ok := registryCode(err); ok {
		code = c
	}
	return status.New(code, sv.clean(r, err.Error()))
}

// registryCode maps a registry failure to the gRPC code that tells the
// caller what to do: Unavailable when trying again later may work (a
// timeout, a reset, 429, 5xx), NotFound, PermissionDenied or Unauthenticated
// when the reference or the credentials must change. Everything else a
// render reports is about the request: InvalidArgument.
func registryCode(err error) (codes.Code, bool) {
	var re *registry.Error
	if !errors.As(err, &re) {
		return 0, false
	}
	switch re.Reason {
	case registry.ReasonTimeout, registry.ReasonReset, registry.ReasonNetwork:
		return codes.Unavailable, true
	case registry.ReasonStatus:
		switch {
		case re.Status == 401:
			return codes.Unauthenticated, true
		case re.Status == 403:
			return codes.PermissionDenied, true
		case re.Status == 404:
			return codes.NotFound, true
		case re.Status == 429 || re.Status >= 500:
			return codes.Unavailable, true
		}
	}
	return 0, false
}

// clean replaces the request's temporary directory in messages by nothing,
// leaving repository-relative paths.
func (sv *service) clean(r *request, msg string) string {
	if r == nil || r.dir == "" {
		return msg
	}
	roots := []string{r.dir}
	if real, err := filepath.EvalSymlinks(r.dir); err == nil && real != r.dir {
		roots = append(roots, real)
	}
	for _, d := range roots {
		msg = strings.ReplaceAll(msg, d+string(filepath.Separator), "")
		msg = strings.ReplaceAll(msg, d, ".")
	}
	return msg
}

type codedError struct {
	code codes.Code
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

func coded(c codes.Code, err error) error { return &codedError{code: c, err: err} }

// earlierDeadline shortens ctx's deadline by margin, so that the work stops
// while there is still time to tell the caller why.
func earlierDeadline(ctx context.Context, margin time.Duration) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) > 2*margin {
		return context.WithDeadline(ctx, dl.Add(-margin))
	}
	return context.WithCancel(ctx)
}

// GenerateManifest renders the application at appRelPath.
func (sv *service) GenerateManifest(stream pluginpb.ConfigManagementPluginService_GenerateManifestServer) error {
	ctx, cancel := earlierDeadline(stream.Context(), sv.s.o.DeadlineMargin)
	defer cancel()
	r, cleanup, err := sv.begin(ctx, "GenerateManifest", stream)
	defer cleanup()
	if err != nil {
		return sv.finish(ctx, r, err)
	}
	app, err := appDir(r.dir, r.meta.GetAppRelPath())
	if err != nil {
		return sv.finish(ctx, r, err)
	}
	req, notes, err := BuildRequest(app, r.dir, r.env)
	if err != nil {
		return sv.finish(ctx, r, err)
	}
	for _, n := range notes {
		sv.s.o.Logger.Warn("render warning", append([]any{"warning", echo.Text(n), "severity", "warning"}, r.attrs...)...)
	}
	res, info, err := sv.s.o.Renderer.Render(ctx, req)
	r.running = info.Running
	if err != nil {
		return sv.finish(ctx, r, locateError(req, err), "bundle", spec.Redact(req.Spec.Bundle), "digest", info.Digest)
	}
	for _, n := range res.Notes() {
		// severity: a requirement finding's own (required or warning), as the CLI prints it.
		sv.s.o.Logger.Warn("render warning", append([]any{"warning", echo.Text(n.Text), "severity", string(n.Severity)}, r.attrs...)...)
	}
	// JSON: the repo-server parses it faster than YAML.
	if err := stream.SendAndClose(&pluginpb.ManifestResponse{Manifests: res.JSON}); err != nil {
		return sv.finish(ctx, r, err)
	}
	n := 0
	for _, m := range res.JSON {
		n += len(m)
	}
	sv.s.o.Metrics.ObserveBytesServed("grpc", n)
	bundleRef, catalog := req.Spec.Bundle, []any{}
	if c := res.Catalog; c != nil {
		// A catalog spec names no bundle: log the one the catalog chose.
		bundleRef, catalog = c.Bundle, []any{"catalog", c.Ref, "catalog_image", c.Image}
	}
	return sv.finish(ctx, r, nil, append([]any{"bundle", bundleRef, "digest", res.Origin.Digest, "package", res.Package,
		"bundle_version", res.Version, "cache", info.Cache, "objects", len(res.JSON), "bytes", n, "kept_yaml", res.KeptYAML, "warnings", len(res.Warnings)}, catalog...)...)
}

// MatchRepository claims applications whose directory holds olm-cmp.yaml. It
// answers from the tarball's entry names as they stream by (checksum, entry
// checks and limits as for GenerateManifest), writing nothing to disk: a
// regular file <appRelPath>/olm-cmp.yaml, or a symbolic link that leads to
// one inside the repository.
func (sv *service) MatchRepository(stream pluginpb.ConfigManagementPluginService_MatchRepositoryServer) error {
	ctx, cancel := earlierDeadline(stream.Context(), sv.s.o.DeadlineMargin)
	defer cancel()
	r, idx, cleanup, err := sv.beginScan(ctx, "MatchRepository", stream)
	defer cleanup()
	if err != nil {
		return sv.finish(ctx, r, err)
	}
	ok := idx.hasSpec(r.meta.GetAppRelPath())
	if err := stream.SendAndClose(&pluginpb.RepositoryResponse{IsSupported: ok, IsDiscoveryEnabled: sv.s.o.Config.DiscoveryConfigured()}); err != nil {
		return sv.finish(ctx, r, err)
	}
	return sv.finish(ctx, r, nil, "supported", ok)
}

// GetParametersAnnouncement announces every spec field with its current value.
func (sv *service) GetParametersAnnouncement(stream pluginpb.ConfigManagementPluginService_GetParametersAnnouncementServer) error {
	ctx, cancel := earlierDeadline(stream.Context(), sv.s.o.DeadlineMargin)
	defer cancel()
	r, cleanup, err := sv.begin(ctx, "GetParametersAnnouncement", stream)
	defer cleanup()
	if err != nil {
		return sv.finish(ctx, r, err)
	}
	app, err := appDir(r.dir, r.meta.GetAppRelPath())
	if err != nil {
		return sv.finish(ctx, r, err)
	}
	as, err := Announce(app, r.env)
	if err != nil {
		return sv.finish(ctx, r, err)
	}
	if err := stream.SendAndClose(&pluginpb.ParametersAnnouncementResponse{ParameterAnnouncements: toProto(as)}); err != nil {
		return sv.finish(ctx, r, err)
	}
	return sv.finish(ctx, r, nil)
}

// CheckPluginConfiguration is Argo CD's pre-flight. Discovery is configured
// when plugin.yaml has a spec.discover section (the built-in configuration
// has one): then Argo CD calls MatchRepository, a second tarball of the
// repository, even for Applications that name the plugin. Without it, only
// Applications that name the plugin use it, with one tarball per refresh.
// Git credentials are passed when plugin.yaml asks for them.
func (sv *service) CheckPluginConfiguration(ctx context.Context, _ *emptypb.Empty) (*pluginpb.CheckPluginConfigurationResponse, error) {
	c := sv.s.o.Config
	// Counted with the other RPCs; it reads two fields, so there is no time to measure.
	sv.s.o.Metrics.ObserveRequest("CheckPluginConfiguration", codes.OK.String(), 0)
	return &pluginpb.CheckPluginConfigurationResponse{IsDiscoveryConfigured: c.DiscoveryConfigured(), ProvideGitCreds: c.Spec.ProvideGitCreds}, nil
}
