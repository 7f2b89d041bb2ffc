package cmpserver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/olm-cmp/olm-cmp/internal/cmpserver/pluginpb"
	"github.com/olm-cmp/olm-cmp/internal/engine"
	"github.com/olm-cmp/olm-cmp/internal/render"
)

// TestWorkDirNameTakenByAFile: the server used to work under a fixed
// $TMPDIR/olm-cmp and failed to start when a file held that name. Now it
// makes a directory of its own with a random name and renders as usual.
func TestWorkDirNameTakenByAFile(t *testing.T) {
	base := t.TempDir()
	if err := os.WriteFile(filepath.Join(base, "olm-cmp"), []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, &specEcho{}, func(o *ServerOptions) { o.WorkDir = base })
	if _, err := ts.generate(ctxT(t), t, call{tgz: tgzOf(t, repoDir), appRelPath: "apps/tiny"}); err != nil {
		t.Fatalf("render with a file at the old fixed path: %v", err)
	}
	if filepath.Dir(ts.srv.work.path) != base || !strings.HasPrefix(filepath.Base(ts.srv.work.path), workDirPrefix) {
		t.Errorf("work directory %s is not a fresh %s* directory in %s", ts.srv.work.path, workDirPrefix, base)
	}
	if fi, err := os.Stat(ts.srv.work.path); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("work directory mode %v (%v), want 0700", fi.Mode(), err)
	}
}

// TestWorkDirBaseMustExist: a mistyped --work-dir is refused, not created.
func TestWorkDirBaseMustExist(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no", "such")
	srv := NewServer(ServerOptions{SocketDir: shortTempDir(t), WorkDir: missing, Renderer: &specEcho{}})
	if _, err := srv.Listen(); err == nil || !errors.As(err, new(*WorkDirError)) {
		t.Errorf("Listen with a missing work directory: %v", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the missing work directory was created: %v", err)
	}
}

// barrierRenderer holds every render until n have started, recording each
// request's repository root.
type barrierRenderer struct {
	n       int
	mu      sync.Mutex
	roots   []string
	modes   []os.FileMode
	arrived chan struct{}
	release chan struct{}
}

func (b *barrierRenderer) Render(ctx context.Context, req render.Request) (*render.Result, engine.Info, error) {
	fi, err := os.Stat(req.RootDir)
	if err != nil {
		return nil, engine.Info{}, err
	}
	b.mu.Lock()
	b.roots = append(b.roots, req.RootDir)
	b.modes = append(b.modes, fi.Mode().Perm())
	if len(b.roots) == b.n {
		close(b.arrived)
	}
	b.mu.Unlock()
	select {
	case <-b.release:
		return &render.Result{Manifests: []string{"kind: ConfigMap"}, JSON: []string{`{"kind":"ConfigMap"}`}}, engine.Info{}, nil
	case <-ctx.Done():
		return nil, engine.Info{}, ctx.Err()
	}
}

// TestConcurrentRequestsGetDistinctPrivateDirs: each request is extracted
// into its own fresh 0700 directory inside the server's work directory, and
// nothing is left once the requests end.
func TestConcurrentRequestsGetDistinctPrivateDirs(t *testing.T) {
	const n = 4
	b := &barrierRenderer{n: n, arrived: make(chan struct{}), release: make(chan struct{})}
	ts := startServer(t, b)
	tgz := tgzOf(t, repoDir)
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "apps/tiny"})
			errs <- err
		}()
	}
	select {
	case <-b.arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("the requests never ran concurrently")
	}
	seen := map[string]bool{}
	for i, root := range b.roots {
		if seen[root] {
			t.Errorf("two requests share %s", root)
		}
		seen[root] = true
		if filepath.Dir(root) != ts.srv.work.path || !strings.HasPrefix(filepath.Base(root), "req-") {
			t.Errorf("request directory %s is not a req-* directory of the work directory %s", root, ts.srv.work.path)
		}
		if b.modes[i] != 0o700 {
			t.Errorf("request directory %s has mode %v, want 0700", root, b.modes[i])
		}
	}
	close(b.release)
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	waitNoRequestDirs(t, ts)
}

// TestCancelledClientFreesWork: a client that goes away, during the upload
// or during the render, leaves no request in flight and no directory behind.
func TestCancelledClientFreesWork(t *testing.T) {
	tgz := tgzOf(t, repoDir)
	t.Run("during the render", func(t *testing.T) {
		b := &blocking{started: make(chan struct{})}
		ts := startServer(t, b)
		ctx, cancel := context.WithCancel(context.Background())
		res := make(chan error, 1)
		go func() {
			_, err := ts.generate(ctx, t, call{tgz: tgz, appRelPath: "apps/tiny"})
			res <- err
		}()
		<-b.started
		if got := metricValue(t, ts.m, engine.MetricInflight); got != 1 {
			t.Errorf("in flight during the render = %v, want 1", got)
		}
		if left, _ := filepath.Glob(filepath.Join(ts.srv.work.path, "req-*")); len(left) != 1 {
			t.Errorf("request directories during the render: %v, want one", left)
		}
		cancel()
		if err := <-res; status.Code(err) != codes.Canceled {
			t.Errorf("client error %v, want Canceled", err)
		}
		waitInflightZero(t, ts)
		waitNoRequestDirs(t, ts)
	})
	t.Run("during the upload", func(t *testing.T) {
		ts := startServer(t, &specEcho{})
		ctx, cancel := context.WithCancel(context.Background())
		s, err := ts.client.GenerateManifest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The metadata and half the tarball, then the client goes away.
		c := call{appRelPath: "apps/tiny", checksum: sum(tgz)}
		c.send(t, s)
		if err := s.Send(&pluginpb.AppStreamRequest{Request: &pluginpb.AppStreamRequest_File{File: &pluginpb.File{Chunk: tgz[:len(tgz)/2]}}}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for metricValue(t, ts.m, engine.MetricInflight) != 1 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
		waitInflightZero(t, ts)
		waitNoRequestDirs(t, ts)
	})
}

// TestDefaultRequestTimeout: a call without a deadline gets the server's
// RequestTimeout, and the error names that timeout, not the repo-server's.
func TestDefaultRequestTimeout(t *testing.T) {
	b := &blocking{started: make(chan struct{})}
	ts := startServer(t, b, func(o *ServerOptions) { o.RequestTimeout = 300 * time.Millisecond })
	res := make(chan error, 1)
	go func() {
		_, err := ts.generate(context.Background(), t, call{tgz: tgzOf(t, repoDir), appRelPath: "apps/tiny"})
		res <- err
	}()
	var err error
	select {
	case err = <-res:
	case <-time.After(20 * time.Second):
		t.Fatal("a call without a deadline was not bounded by the server")
	}
	wantStatus(t, err, codes.DeadlineExceeded, "within olm-cmp's 300ms request timeout (the caller set no deadline; serve --request-timeout changes it)")
	waitInflightZero(t, ts)
	waitNoRequestDirs(t, ts)
}

// TestStaleWorkDirsSwept: the work directory of a server that is gone (its
// lock free) is removed at start; a live server's, and a directory that
// merely shares the prefix, are kept.
func TestStaleWorkDirsSwept(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, marker bool) string {
		d := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Join(d, "req-1"), 0o700); err != nil {
			t.Fatal(err)
		}
		if marker {
			os.WriteFile(filepath.Join(d, liveMarker), nil, 0o600)
		}
		return d
	}
	dead := mk(workDirPrefix+"dead", true)
	live := mk(workDirPrefix+"live", true)
	other := mk(workDirPrefix+"unmarked", false)
	lock, err := lockDir(live)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if l, err := tryLockDir(dead); err != nil || l == nil {
		t.Skipf("directory locks unavailable here (%v): nothing is swept", err)
	} else {
		l.Close()
	}
	ts := startServer(t, &specEcho{}, func(o *ServerOptions) { o.WorkDir = base })
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a gone server's work directory was kept: %v", err)
	}
	for _, d := range []string{live, other, ts.srv.work.path} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	// A second server sharing the base keeps the first one's work directory.
	second := NewServer(ServerOptions{SocketDir: shortTempDir(t), WorkDir: base, Renderer: &specEcho{}})
	lis, err := second.Listen()
	if err != nil {
		t.Fatal(err)
	}
	lis.Close()
	if _, err := os.Stat(ts.srv.work.path); err != nil {
		t.Errorf("a live server's work directory was swept: %v", err)
	}
	second.Shutdown(context.Background())
	if _, err := os.Stat(second.work.path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("shutdown left the work directory: %v", err)
	}
}

// TestSocketDirMustExist: a missing socket directory is refused (it would be
// a socket the repo-server never finds), unless CreateSocketDir asks for it.
func TestSocketDirMustExist(t *testing.T) {
	missing := filepath.Join(shortTempDir(t), "x", "y")
	srv := NewServer(ServerOptions{SocketDir: missing, WorkDir: t.TempDir(), Renderer: &specEcho{}})
	if _, err := srv.Listen(); !errors.Is(err, ErrNoSocketDir) {
		t.Errorf("Listen with a missing socket directory: %v, want ErrNoSocketDir", err)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the missing socket directory was created: %v", err)
	}
	file := filepath.Join(shortTempDir(t), "file")
	os.WriteFile(file, nil, 0o600)
	srv = NewServer(ServerOptions{SocketDir: file, WorkDir: t.TempDir(), Renderer: &specEcho{}})
	if _, err := srv.Listen(); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("Listen with a file as socket directory: %v", err)
	}

	ts := startServer(t, &specEcho{}, func(o *ServerOptions) { o.SocketDir, o.CreateSocketDir = missing, true })
	if _, err := ts.generate(ctxT(t), t, call{tgz: tgzOf(t, repoDir), appRelPath: "apps/tiny"}); err != nil {
		t.Fatalf("with CreateSocketDir: %v", err)
	}
}

// shortTempDir is a temporary directory with a path short enough for a
// socket (~108 bytes; t.TempDir() can be longer).
func shortTempDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "olmcmp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// waitInflightZero waits (generously) for the in-flight gauge to drop to 0:
// the handler returns shortly after the client's cancellation reaches it.
func waitInflightZero(t *testing.T, ts *testServer) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for metricValue(t, ts.m, engine.MetricInflight) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("requests in flight stayed at %v", metricValue(t, ts.m, engine.MetricInflight))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func waitNoRequestDirs(t *testing.T, ts *testServer) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left, _ := filepath.Glob(filepath.Join(ts.srv.work.path, "req-*"))
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("request directories left: %v", left)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestWorkDirUnusableIsOneClearError: when the request directory cannot be
// made (a full or broken temporary volume), the user reads why, without the
// server's paths.
func TestWorkDirUnusableIsOneClearError(t *testing.T) {
	ts := startServer(t, &specEcho{})
	if err := os.RemoveAll(ts.srv.work.path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ts.srv.work.path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ts.generate(ctxT(t), t, call{tgz: tgzOf(t, repoDir), appRelPath: "apps/tiny"})
	wantStatus(t, err, codes.Internal, "olm-cmp: the sidecar cannot create a work directory for this request (not a directory): check its temporary directory volume and its log")
	if msg := status.Convert(err).Message(); strings.Contains(msg, ts.srv.o.WorkDir) {
		t.Errorf("message shows a server path: %s", msg)
	}
	if !strings.Contains(ts.logs.String(), ts.srv.work.path) {
		t.Errorf("the log does not name the directory for the operator:\n%s", ts.logs.String())
	}
}
