// Package checkproc runs the checks whose libraries are too heavy to link
// into every olm-cmp process in a second executable, olm-cmp-check, which
// ships beside olm-cmp (in the image, in `make build`).
//
// Why a process: Go runs every linked package's initialisation in every
// process. apiextensions-apiserver's validation (CEL, kube-openapi's
// validators, the apiserver's metrics registries) and sigstore-go's bundle
// verification (rekor's models, go-openapi's formats) cost about 7 ms and
// 3.5 MB before main, in `olm-cmp version` as in a render whose verdicts
// are all cached. Linked only into olm-cmp-check, they are paid by the
// renders that meet something new, once per render (one process, one batch
// of jobs), and a crash in those libraries stops that process, not the
// sidecar.
//
// The protocol is one JSON request on the helper's standard input (a list
// of jobs: an operation name and its input) and one JSON answer on its
// standard output (a result per job, in order). Both are bounded.
//
// This package must stay light: it imports nothing heavier than the
// standard library (and internal/safefile). The heavy packages list their
// operations in internal/checks, which cmd/olm-cmp-check serves.
//
// The pure checks' outputs are cached by content (Store), so a render that
// meets nothing new never starts the helper.
package checkproc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
)

// Executable is the helper's file name: beside olm-cmp, or on PATH.
const Executable = "olm-cmp-check"

// Bounds of one exchange. A request carries whole CRDs (sail-operator's
// largest is a few MB); an answer carries problems and verdicts only.
const (
	MaxRequestBytes = 256 << 20
	MaxAnswerBytes  = 16 << 20
	maxStderrBytes  = 4 << 10
	// waitDelay bounds how long a helper that ignores its kill may hold
	// its pipes open after the context ends.
	waitDelay = 2 * time.Second
)

// Job is one check: Op names the operation a package registered in
// olm-cmp-check, Input its argument.
type Job struct {
	Op    string          `json:"op"`
	Input json.RawMessage `json:"input"`
}

// Result is one job's answer: Output when the operation returned, Error
// (one line, already worded for the user) when it failed.
type Result struct {
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
}

type request struct {
	Jobs []Job `json:"jobs"`
}

type answer struct {
	Results []Result `json:"results"`
}

// Handler runs one operation in olm-cmp-check.
type Handler func(ctx context.Context, input json.RawMessage) (any, error)

// locate finds olm-cmp-check: beside this executable first (the image, `make
// build`, `go install ./cmd/...`), then on PATH (`go run ./cmd/olm-cmp`).
var locate = sync.OnceValues(find)

// find looks for olm-cmp-check where locate says.
func find() (string, error) {
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		p := filepath.Join(filepath.Dir(exe), Executable)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(Executable); err == nil {
		return p, nil
	}
	return "", ErrMissing
}

// ErrMissing is Run's error when there is no olm-cmp-check to run; its
// text says how to install one.
var ErrMissing = errors.New(Executable + ", which makes the checks of the API server and of signatures for olm-cmp, is neither beside olm-cmp nor on PATH: install both (make build, or go install ./cmd/... from the repository)")

// UseExecutable makes Run start the olm-cmp-check at path, or find none
// when path is "", instead of looking for it, and answer nothing in
// process, until restore: for tests of what users see when the helper is
// missing or fails. Not for use while Run runs.
func UseExecutable(path string) (restore func()) {
	oldLocate, oldIn := locate, inProcess.Swap(nil)
	locate = func() (string, error) {
		if path == "" {
			return "", ErrMissing
		}
		return path, nil
	}
	return func() { locate = oldLocate; inProcess.Store(oldIn) }
}

// Path is where olm-cmp-check was found, or why it was not.
func Path() (string, error) { return locate() }

// Run sends jobs to one olm-cmp-check process and returns a result per job,
// in order. An error means no job's result can be trusted: the helper is
// missing (ErrMissing), did not finish before ctx ended, stopped (a crash),
// or answered something that is not an answer to this request. It says
// what happened; the caller, who knows what went unchecked, adds the fix.
func Run(ctx context.Context, jobs []Job) ([]Result, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	if h := inProcess.Load(); h != nil {
		spawns.Add(1)
		return serveInProcess(ctx, *h, jobs), nil
	}
	path, err := locate()
	if err != nil {
		return nil, err
	}
	req, err := json.Marshal(request{Jobs: jobs})
	if err != nil {
		return nil, fmt.Errorf("the checks could not be written for %s: %v", Executable, err)
	}
	if len(req) > MaxRequestBytes {
		return nil, fmt.Errorf("the checks are %d bytes, over the %d-byte bound of one %s request", len(req), MaxRequestBytes, Executable)
	}
	cmd := exec.CommandContext(ctx, path)
	cmd.Env = helperEnv()
	cmd.Stdin = bytes.NewReader(req)
	var out, errOut capped
	out.max, errOut.max = MaxAnswerBytes, maxStderrBytes
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.WaitDelay = waitDelay
	spawns.Add(1)
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s did not finish its checks in time: %w", Executable, context.Cause(ctx))
	}
	if out.over {
		return nil, fmt.Errorf("%s answered more than %d bytes", Executable, MaxAnswerBytes)
	}
	if runErr != nil {
		return nil, fmt.Errorf("%s stopped before answering (%v)%s", Executable, runErr, firstLine(errOut.Bytes()))
	}
	var a answer
	if err := json.Unmarshal(out.Bytes(), &a); err != nil || len(a.Results) != len(jobs) {
		return nil, fmt.Errorf("%s answered something that is not the answer to %d checks: is it the same build as olm-cmp?", Executable, len(jobs))
	}
	return a.Results, nil
}

// spawns counts the helper processes Run started (in tests, the batches
// answered in process), for tests that a render whose verdicts are cached
// starts none.
var spawns atomic.Int64

// Spawns is how many olm-cmp-check processes this process has started, or
// batches it answered in process (AnswerInProcess).
func Spawns() int64 { return spawns.Load() }

// helperEnv is the helper's environment: the Go runtime's settings and
// TMPDIR, nothing else. It reads no files the request does not carry and
// opens no connections, so it has no use for registry credentials, proxy
// settings or Argo CD's plugin environment (the application's parameters),
// and a crash report or a library's logging cannot repeat them.
func helperEnv() []string {
	// Never nil: exec.Cmd reads a nil Env as "inherit everything", which
	// would hand the helper registry credentials and ARGOCD_ENV_* whenever
	// none of these happens to be set (a breaker found it).
	env := []string{}
	for _, k := range []string{"GOGC", "GOMEMLIMIT", "GODEBUG", "GOMAXPROCS", "GOTRACEBACK", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// inProcess, when set, answers jobs in this process instead of running
// olm-cmp-check: for the tests of packages that render
// (internal/checks/inprocess), which link the heavy packages anyway.
// The olm-cmp executable never sets it.
var inProcess atomic.Pointer[map[string]Handler]

// AnswerInProcess makes Run answer jobs with handlers in this process,
// until the returned function restores the previous setting. Only tests
// call it (through internal/checks/inprocess); the binaries, the image
// and the e2e run olm-cmp-check as users do.
func AnswerInProcess(handlers map[string]Handler) (restore func()) {
	old := inProcess.Swap(&handlers)
	return func() { inProcess.Store(old) }
}

// serveInProcess answers jobs as Serve would, through the same JSON
// encoding, so a test sees what olm-cmp-check would have answered.
func serveInProcess(ctx context.Context, handlers map[string]Handler, jobs []Job) []Result {
	copied := make([]Job, len(jobs))
	for i, j := range jobs {
		in, _ := json.Marshal(j.Input)
		copied[i] = Job{Op: j.Op, Input: in}
	}
	return runJobs(ctx, handlers, copied)
}

// runJobs runs jobs several at once (a cold render's CRDs, whose CEL rules
// are most of its check, each take their own time) and returns their
// results in order. A job not begun when ctx ends is not begun.
func runJobs(ctx context.Context, handlers map[string]Handler, jobs []Job) []Result {
	out := make([]Result, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Go(func() {
			for i := range next {
				if err := ctx.Err(); err != nil {
					out[i] = Result{Error: fmt.Sprintf("%s stopped before this check: %v", Executable, context.Cause(ctx))}
					continue
				}
				out[i] = runJob(ctx, handlers, jobs[i])
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// firstLine is ": " and the first line of a helper's standard error, if
// any, printable and at most maxLineBytes: a Go crash begins with what
// happened ("panic: …", "fatal error: …") and ends with a stack trace,
// whose file paths are no one's business; the helper's own failures are
// one line.
func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsGraphic(r) {
			return r
		}
		return -1
	}, strings.ToValidUTF8(s, ""))
	if len(s) > maxLineBytes {
		s = strings.ToValidUTF8(s[:maxLineBytes], "") + "…"
	}
	if s == "" {
		return ""
	}
	return ": " + s
}

// maxLineBytes bounds the helper's line in an error.
const maxLineBytes = 200

// capped is a buffer that keeps at most max bytes and remembers that more
// came. It does not embed bytes.Buffer: Buffer's ReadFrom, promoted, would
// let exec's copy bypass Write and the bound with it.
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); len(p) > room {
		c.over = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capped) Bytes() []byte { return c.buf.Bytes() }

// Serve is olm-cmp-check's main loop: it reads one request from in, runs
// each job with the handler registered for its Op, and writes the answer to
// out. A job whose handler panics gets an error result; the others are
// still answered. It returns an error only when the request cannot be read
// or the answer cannot be written.
func Serve(ctx context.Context, in io.Reader, out io.Writer, handlers map[string]Handler) error {
	data, err := io.ReadAll(io.LimitReader(in, MaxRequestBytes+1))
	if err != nil {
		return fmt.Errorf("reading the request: %v", err)
	}
	if len(data) > MaxRequestBytes {
		return fmt.Errorf("the request is over %d bytes", MaxRequestBytes)
	}
	var req request
	if err := json.Unmarshal(data, &req); err != nil {
		return fmt.Errorf("the request is not a list of checks: %v", err)
	}
	a := answer{Results: runJobs(ctx, handlers, req.Jobs)}
	enc, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("writing the answer: %v", err)
	}
	_, err = out.Write(enc)
	return err
}

func runJob(ctx context.Context, handlers map[string]Handler, j Job) (r Result) {
	h, ok := handlers[j.Op]
	if !ok {
		return Result{Error: fmt.Sprintf("%s does not know the check %q: is it the same build as olm-cmp?", Executable, j.Op)}
	}
	defer func() {
		if p := recover(); p != nil {
			r = Result{Error: fmt.Sprintf("internal error in the check %s (please report it): %v", j.Op, p)}
		}
	}()
	v, err := h(ctx, j.Input)
	if err != nil {
		return Result{Error: err.Error()}
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return Result{Error: fmt.Sprintf("internal error in the check %s (please report it): %v", j.Op, err)}
	}
	return Result{Output: enc}
}
