package cmpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/engine"
	"github.com/olm-cmp/olm-cmp/internal/engine/enginetest"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

const tinyDigest = "sha256:1111111111111111111111111111111111111111111111111111111111111111"

// tinyImageLoader serves the test bundle as the image writeImageApp names.
func tinyImageLoader(t *testing.T) *enginetest.Loader {
	abs, err := filepath.Abs(filepath.Join(repoDir, "bundles/tiny"))
	if err != nil {
		t.Fatal(err)
	}
	return enginetest.NewLoader("example.com/tiny-bundle:v1", abs, tinyDigest)
}

func requestDirs(t *testing.T, ts *testServer) int {
	left, _ := filepath.Glob(filepath.Join(ts.srv.work.path, "req-*"))
	return len(left)
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting until " + what)
		}
	}
}

// TestDeadlineAnswersWhileAStepIsBusy: a render step that does not check
// its context (a CPU-bound check) cannot hold the answer: the caller gets
// olm-cmp's explanation, naming the phase that was slow, before its own
// deadline; the request directory the step reads stays until the step ends,
// then goes.
func TestDeadlineAnswersWhileAStepIsBusy(t *testing.T) {
	loader := tinyImageLoader(t)
	release := make(chan struct{})
	loader.BeforeLoad = func(int32) error { <-release; return nil } // deaf to its context
	ts := startServer(t, engine.NewEngine(engine.EngineOptions{Loader: loader}), func(o *ServerOptions) { o.DeadlineMargin = 700 * time.Millisecond })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := ts.generate(ctx, t, call{tgz: tgzOf(t, writeImageApp(t)), appRelPath: "apps/img"})
	wantStatus(t, err, codes.DeadlineExceeded, "olm-cmp: rendering did not finish within the repo-server's ")
	msg := status.Convert(err).Message()
	t.Log(msg)
	if !strings.Contains(msg, `Cause: resolving spec.bundle "example.com/tiny-bundle" took `) || !strings.Contains(msg, "; still loading the bundle image example.com/tiny-bundle@"+tinyDigest+" after ") {
		t.Errorf("the message does not say what was slow: %s", msg)
	}
	if ctx.Err() != nil {
		t.Error("the answer came after the caller's own deadline")
	}
	if n := requestDirs(t, ts); n != 1 {
		t.Errorf("%d request directories while the step still runs, want 1", n)
	}
	close(release)
	waitUntil(t, "the request directory is removed", func() bool { return requestDirs(t, ts) == 0 })
}

// TestDeadlineStopsAStalledPull: against a registry that never answers, the
// caller gets olm-cmp's explanation before its deadline, and the request's
// work ends (its directory, kept while any of it runs, goes).
func TestDeadlineStopsAStalledPull(t *testing.T) {
	fr := bundletest.NewFaultRegistry(t, bundletest.FaultOptions{})
	fr.PushDir(t, "olm/tiny-bundle", "v1", filepath.Join(repoDir, "bundles/tiny"))
	fr.Inject(bundletest.Where{Path: bundletest.ManifestsPath}, bundletest.Fault{Stall: true}, -1)
	loader := &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{fr.Host}}
	ts := startServer(t, engine.NewEngine(engine.EngineOptions{Loader: loader}), func(o *ServerOptions) { o.DeadlineMargin = 700 * time.Millisecond })
	app := writeImageAppRef(t, fr.Host+"/olm/tiny-bundle:v1")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := ts.generate(ctx, t, call{tgz: tgzOf(t, app), appRelPath: "apps/img"})
	wantStatus(t, err, codes.DeadlineExceeded, "olm-cmp: rendering did not finish within the repo-server's ")
	msg := status.Convert(err).Message()
	t.Log(msg)
	if want := `Cause: still resolving spec.bundle "` + fr.Host + `/olm/tiny-bundle:v1" after `; !strings.Contains(msg, want) {
		t.Errorf("the message lacks %q", want)
	}
	if ctx.Err() != nil {
		t.Error("the answer came after the caller's own deadline")
	}
	waitUntil(t, "the request's work ends", func() bool { return requestDirs(t, ts) == 0 })
}

// TestPanicInTheEngineIsOneRequestsError: a panic in a shared render (on
// the engine's goroutine, out of the gRPC handler's reach) answers Internal
// with one line, logs the stack, and the server serves the next request.
func TestPanicInTheEngineIsOneRequestsError(t *testing.T) {
	loader := tinyImageLoader(t)
	loader.BeforeLoad = func(n int32) error {
		if n == 1 {
			var m map[string]int
			m["x"]++ // a nil map: a runtime panic, as a real bug would be
		}
		return nil
	}
	ts := startServer(t, engine.NewEngine(engine.EngineOptions{Loader: loader}))
	tgz := tgzOf(t, writeImageApp(t))
	_, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "apps/img"})
	wantStatus(t, err, codes.Internal, "olm-cmp internal error: assignment to entry in nil map (please report this with the olm-cmp version and the bundle; the stack is in the plugin's log)")
	if msg := status.Convert(err).Message(); strings.Contains(msg, "goroutine") || strings.Contains(msg, "\n") {
		t.Errorf("the user's message holds a stack: %s", msg)
	}
	if logs := ts.logs.String(); !strings.Contains(logs, `"msg":"panic serving request"`) || !strings.Contains(logs, "deadline_test.go") {
		t.Errorf("the log lacks the stack: %.2000s", logs)
	}
	if _, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "apps/img"}); err != nil {
		t.Fatalf("server broken after a panic: %v", err)
	}
}

// writeImageAppRef writes a repository whose app apps/img names the image ref.
func writeImageAppRef(t *testing.T, ref string) string {
	dir := t.TempDir()
	app := filepath.Join(dir, "apps", "img")
	os.MkdirAll(app, 0o755)
	os.WriteFile(filepath.Join(app, spec.FileName), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: tiny-operator}\nspec:\n  bundle: "+ref+"\n  namespace: tiny-system\n"), 0o644)
	return dir
}
