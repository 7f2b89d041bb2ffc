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
// The protocol is one JSON request on the helper's standard input (olm-cmp's
// build and a list of jobs: an operation name and its input) and, on its
// standard output, a JSON line with the helper's build, then a line per
// job as that job finishes (its index and its result), so a batch stopped
// at a render's deadline still hands over what it finished (RunEach). The
// request, the answer and the helper's standard error are bounded; at the
// deadline the helper's whole process group is killed.
//
// The builds are compared (buildID) so that a stale olm-cmp-check (an
// older `make install` on PATH, a helper copied from another image) is
// refused in one line instead of trusted. That is all the handshake does:
// olm-cmp-check is whatever file sits beside olm-cmp, and a fake one is
// arbitrary code run as the sidecar, which can answer anything, the
// handshake included. Protecting that file is the installation's job (the
// image is read-only; a user's PATH is theirs).
//
// At most MaxHelpers helpers run at once in one olm-cmp, each at most
// maxParallelJobs jobs at once, and a job identical to one already being
// computed (renders of one bundle at once) waits for that result.
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

// request is olm-cmp's side: its build (buildID) and the jobs.
type request struct {
	Build *buildID `json:"build,omitempty"`
	Jobs  []Job    `json:"jobs"`
}

// line is one line of olm-cmp-check's answer: first its build, then one
// per job as that job finishes, in any order (Job is the job's index), so
// a batch stopped at a deadline still hands over what it finished.
type line struct {
	Build  *buildID        `json:"build,omitempty"`
	Job    *int            `json:"job,omitempty"`
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
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
		if p, err := findBeside(filepath.Dir(exe)); p != "" || err != nil {
			return p, err
		}
	}
	if p, err := exec.LookPath(Executable); err == nil {
		return p, nil
	}
	return "", ErrMissing
}

// findBeside is olm-cmp-check in dir, "" when there is none. One that is
// there but not executable is an error, not a reason to run another from
// PATH (perhaps of another build).
func findBeside(dir string) (string, error) {
	p := filepath.Join(dir, Executable)
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return "", nil
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return "", fixedError{errNotExecutable}
	}
	return p, nil
}

// ErrMissing is Run's error when there is no olm-cmp-check to run; its
// text says how to install one.
var ErrMissing = errors.New(Executable + ", which makes the checks of the API server and of signatures for olm-cmp, is neither beside olm-cmp nor on PATH: install both (make build, or go install ./cmd/... from the repository)")

// fixed is an error that says its own fix; killed, a helper's end by a
// signal (the kernel's out-of-memory killer's, most often). Fix reads them.
type (
	fixedError  struct{ error }
	killedError struct{ error }
)

func (e fixedError) Unwrap() error  { return e.error }
func (e killedError) Unwrap() error { return e.error }

// Fix is what to do about err, one of Run's: "" when its line says it
// already (olm-cmp-check missing, not executable, of another build).
func Fix(err error) string {
	var f fixedError
	var k killedError
	switch {
	case errors.Is(err, ErrMissing) || errors.As(err, &f):
		return ""
	case errors.As(err, &k):
		return "give olm-cmp more memory (the sidecar container's limit; docs/operations.md gives olm-cmp-check's peaks), then retry"
	}
	return "install " + Executable + " from the same build beside olm-cmp (make build installs both), then retry; if it already is, report this line"
}

var errNotExecutable = errors.New(Executable + " beside olm-cmp is not executable: make it executable (chmod +x), or install both again (make build, or go install ./cmd/... from the repository)")

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
	out := make([]Result, len(jobs))
	if err := RunEach(ctx, jobs, func(i int, r Result) { out[i] = r }); err != nil {
		return nil, err
	}
	return out, nil
}

// RunEach is Run giving each job's result to fn as it arrives (fn is never
// called twice at once, nor twice for a job), so a caller keeps what
// finished when the batch does not: a render stopped at its deadline keeps
// the verdicts its helper made. The results fn got are the helper's
// answers even when RunEach then fails; the jobs fn did not get have none.
//
// A job identical to one another Run is computing (the same operation and
// input: renders of one bundle at once) waits for that one's result
// instead of being computed twice; if that computation fails, this Run
// makes it itself.
func RunEach(ctx context.Context, jobs []Job, fn func(i int, r Result)) error {
	if len(jobs) == 0 {
		return nil
	}
	if h := inProcess.Load(); h != nil {
		spawns.Add(1)
		return runInProcess(ctx, *h, jobs, fn)
	}
	path, err := locate()
	if err != nil {
		return err
	}
	keys := make([]Key, len(jobs))
	todo := make([]int, len(jobs))
	for i, j := range jobs {
		keys[i], todo[i] = KeyOf(j.Op, j.Input), i
	}
	for len(todo) > 0 {
		if todo, err = runRound(ctx, path, jobs, keys, todo, fn); err != nil {
			return err
		}
	}
	return nil
}

// runRound computes the jobs todo no other Run is computing in one helper,
// then waits for the others' results; it returns the jobs whose other
// computation failed.
func runRound(ctx context.Context, path string, jobs []Job, keys []Key, todo []int, fn func(int, Result)) (again []int, err error) {
	mine := map[Key][]int{} // every job of this batch with a key this Run computes
	var lead []int          // the first of each: what the helper gets
	theirs := map[*flight][]int{}
	flights.mu.Lock()
	for _, i := range todo {
		k := keys[i]
		if _, ok := mine[k]; ok {
			mine[k] = append(mine[k], i)
		} else if f := flights.m[k]; f != nil {
			theirs[f] = append(theirs[f], i)
		} else {
			flights.m[k] = &flight{key: k, done: make(chan struct{})}
			mine[k], lead = []int{i}, append(lead, i)
		}
	}
	ours := map[Key]*flight{}
	for k := range mine {
		ours[k] = flights.m[k]
	}
	flights.mu.Unlock()
	if len(lead) > 0 {
		batch := make([]Job, len(lead))
		for n, i := range lead {
			batch[n] = jobs[i]
		}
		err := runHelper(ctx, path, batch, func(n int, r Result) {
			k := keys[lead[n]]
			ours[k].finish(r, true)
			for _, i := range mine[k] {
				fn(i, r)
			}
		})
		for _, f := range ours {
			f.finish(Result{}, false) // no-op for those finished
		}
		if err != nil {
			return nil, err
		}
	}
	for f, is := range theirs {
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("%s did not finish its checks in time: %w", Executable, context.Cause(ctx))
		}
		if !f.ok {
			again = append(again, is...)
			continue
		}
		for _, i := range is {
			fn(i, f.r)
		}
	}
	return again, nil
}

// flights are the jobs being computed, by key, process-wide.
var flights = struct {
	mu sync.Mutex
	m  map[Key]*flight
}{m: map[Key]*flight{}}

// flight is one job being computed: done closes when r is known (ok) or
// its computation failed.
type flight struct {
	key  Key
	done chan struct{}
	r    Result
	ok   bool
	once sync.Once
}

func (f *flight) finish(r Result, ok bool) {
	f.once.Do(func() {
		flights.mu.Lock()
		if flights.m[f.key] == f {
			delete(flights.m, f.key)
		}
		f.r, f.ok = r, ok
		flights.mu.Unlock()
		close(f.done)
	})
}

// MaxHelpers bounds the olm-cmp-check processes one olm-cmp runs at once
// (renders of a sidecar at once): each runs its jobs on every CPU already,
// and each holds its request's CRDs and their compiled rules in memory. A
// render waits for a place within its own deadline.
const MaxHelpers = 2

var helperSlots = make(chan struct{}, MaxHelpers)

// holderKey is the context key of WithHolder.
type holderKey struct{}

// WithHolder marks the helpers ctx's renders run as holder's (a tenant:
// the sidecar passes "project NAME" under a tenancy policy). A holder runs
// one helper at a time, so one tenant's slow cold renders hold at most
// one of the MaxHelpers places and never every one: a breaker's two
// renders of CRDs whose rules ran the server's whole cost budget kept a
// third tenant's one-rule CRD waiting past its deadline.
func WithHolder(ctx context.Context, holder string) context.Context {
	return context.WithValue(ctx, holderKey{}, holder)
}

// holders are the places of the holders with a render running or waiting,
// each with how many use it (dropped at zero).
var holders = struct {
	sync.Mutex
	m map[string]*holderPlace
}{m: map[string]*holderPlace{}}

type holderPlace struct {
	slot  chan struct{}
	users int
}

// holderSlot is h's one place, counted as used until releaseHolder.
func holderSlot(h string) chan struct{} {
	holders.Lock()
	defer holders.Unlock()
	p := holders.m[h]
	if p == nil {
		p = &holderPlace{slot: make(chan struct{}, 1)}
		holders.m[h] = p
	}
	p.users++
	return p.slot
}

func releaseHolder(h string) {
	holders.Lock()
	defer holders.Unlock()
	if p := holders.m[h]; p != nil {
		if p.users--; p.users == 0 {
			delete(holders.m, h)
		}
	}
}

// runHelper runs one olm-cmp-check on jobs, giving fn each result (by its
// index in jobs) as it arrives, until all have or it fails.
func runHelper(ctx context.Context, path string, jobs []Job, fn func(int, Result)) error {
	req, err := json.Marshal(request{Build: self(), Jobs: jobs})
	if err != nil {
		return fmt.Errorf("the checks could not be written for %s: %v", Executable, err)
	}
	if len(req) > MaxRequestBytes {
		return fmt.Errorf("the checks are %d bytes, over the %d-byte bound of one %s request", len(req), MaxRequestBytes, Executable)
	}
	if h, ok := ctx.Value(holderKey{}).(string); ok {
		own := holderSlot(h)
		defer releaseHolder(h)
		select {
		case own <- struct{}{}:
			defer func() { <-own }()
		case <-ctx.Done():
			return fmt.Errorf("%s did not finish its checks in time (it waited for another render of %s, which runs one at once): %w", Executable, h, context.Cause(ctx))
		}
	}
	select {
	case helperSlots <- struct{}{}:
		defer func() { <-helperSlots }()
	case <-ctx.Done():
		return fmt.Errorf("%s did not finish its checks in time (it waited for one of the %d that run at once): %w", Executable, MaxHelpers, context.Cause(ctx))
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("%s could not be started (%v)", Executable, err)
	}
	defer pr.Close()
	cmd := exec.Command(path)
	cmd.Env = helperEnv()
	cmd.Stdin = bytes.NewReader(req)
	cmd.Stdout = pw
	errOut := capped{max: maxStderrBytes}
	cmd.Stderr = &errOut
	cmd.WaitDelay = waitDelay
	ownGroup(cmd)
	spawns.Add(1)
	err = cmd.Start()
	pw.Close()
	if err != nil {
		return fmt.Errorf("%s could not be started: %s", Executable, execErrorLine(err))
	}
	// At the deadline: kill the helper and what it started, and stop
	// reading (a process that escaped the group may hold the pipe).
	killed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { killGroup(cmd); pr.Close(); close(killed) })
	in := &counter{r: pr, left: MaxAnswerBytes}
	readErr := readAnswer(in, len(jobs), fn)
	pr.Close() // a helper still writing gets EPIPE, not a full pipe to wait on
	if readErr == nil {
		killGroup(cmd) // done with it: nothing it started outlives it
	}
	// An answer that ended early: the helper's exit status says why (the
	// deadline still kills it).
	waitErr := cmd.Wait()
	if !stop() {
		<-killed
	}
	switch {
	case readErr == nil:
		return nil // every result came: how it then ended changes none
	case ctx.Err() != nil:
		return fmt.Errorf("%s did not finish its checks in time: %w", Executable, context.Cause(ctx))
	case in.over:
		return fmt.Errorf("%s answered more than %d bytes", Executable, MaxAnswerBytes)
	case errors.As(readErr, new(buildError)):
		return readErr.(buildError).err
	}
	// The answer ended (not: went wrong): how the helper ended says why.
	ended := errors.Is(readErr, io.EOF) || errors.Is(readErr, io.ErrUnexpectedEOF)
	var exit *exec.ExitError
	if errors.As(waitErr, &exit) && ended {
		if sig, kill, ok := killedBy(exit.ProcessState); kill {
			return killedError{fmt.Errorf("%s was killed (out of memory, or by a signal) before answering%s", Executable, firstLine(errOut.Bytes()))}
		} else if ok {
			return fmt.Errorf("%s was stopped by a signal (%s) before answering%s", Executable, sig, firstLine(errOut.Bytes()))
		}
		return fmt.Errorf("%s stopped before answering (exit status %d)%s", Executable, exit.ExitCode(), firstLine(errOut.Bytes()))
	}
	return fmt.Errorf("%s answered something that is not the answer to %d checks: is it the same build as olm-cmp?", Executable, len(jobs))
}

// buildError is readAnswer's error for a helper of another build.
type buildError struct{ err error }

func (e buildError) Error() string { return e.err.Error() }

// readAnswer reads the helper's build, then n results, giving fn each.
func readAnswer(r io.Reader, n int, fn func(int, Result)) error {
	dec := json.NewDecoder(r)
	var hello line
	if err := dec.Decode(&hello); err != nil {
		return err
	}
	if err := errOtherBuild(hello.Build); err != nil {
		return buildError{err}
	}
	seen := make([]bool, n)
	for range n {
		var l line
		if err := dec.Decode(&l); err != nil {
			return err
		}
		if l.Job == nil || *l.Job < 0 || *l.Job >= n || seen[*l.Job] || l.Build != nil {
			return errors.New("not an answer")
		}
		seen[*l.Job] = true
		fn(*l.Job, Result{Output: l.Output, Error: l.Error})
	}
	return nil
}

// counter reads at most left bytes of r, and remembers that more came.
type counter struct {
	r    io.Reader
	left int
	over bool
}

func (c *counter) Read(p []byte) (int, error) {
	if c.left <= 0 {
		c.over = true
		return 0, errors.New("over the bound")
	}
	if len(p) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= n
	return n, err
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

// runInProcess answers jobs as Serve would, through the same JSON
// encoding, so a test sees what olm-cmp-check would have answered; results
// that come after ctx ends are dropped, as a killed helper's would be.
func runInProcess(ctx context.Context, handlers map[string]Handler, jobs []Job, fn func(int, Result)) error {
	copied := make([]Job, len(jobs))
	for i, j := range jobs {
		in, _ := json.Marshal(j.Input)
		copied[i] = Job{Op: j.Op, Input: in}
	}
	var mu sync.Mutex
	runJobs(ctx, handlers, copied, func(i int, r Result) {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() == nil {
			fn(i, r)
		}
	})
	if ctx.Err() != nil {
		return fmt.Errorf("%s did not finish its checks in time: %w", Executable, context.Cause(ctx))
	}
	return nil
}

// maxParallelJobs bounds the jobs olm-cmp-check runs at once, whatever
// the number of CPUs: compiling a large CRD's CEL rules holds ~170 MB
// until it is done, so the helper's memory grows with the jobs in flight
// (4 CRDs of 4,999 rules each, GOMAXPROCS=8: 654 MB peak with 8 at once,
// 380 MB with 2; a soft GOMEMLIMIT of 384 MiB instead cut it to 484 MB for
// twice the CPU). With at most MaxHelpers helpers, that bounds the
// sidecar's checks to about 2 x 2 CRDs compiled at once.
const maxParallelJobs = 2

// runJobs runs jobs several at once (a cold render's CRDs, whose CEL rules
// are most of its check, each take their own time) and gives emit each
// result as it is made (from several goroutines). A job not begun when ctx
// ends is not begun.
func runJobs(ctx context.Context, handlers map[string]Handler, jobs []Job, emit func(int, Result)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), maxParallelJobs, len(jobs)) {
		wg.Go(func() {
			for i := range next {
				if err := ctx.Err(); err != nil {
					emit(i, Result{Error: fmt.Sprintf("%s stopped before this check: %v", Executable, context.Cause(ctx))})
					continue
				}
				emit(i, runJob(ctx, handlers, jobs[i]))
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
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

// Serve is olm-cmp-check's main loop: it reads one request from in, answers
// its build (buildID) on out, then runs each job with the handler
// registered for its Op and writes each result on out as its job finishes,
// a line each. A job whose handler panics gets an error result; the others
// are still answered. A request from another build of olm-cmp gets the
// build only (olm-cmp words the refusal); one without jobs is a probe (the
// packaging tests' "does it run"). It returns an error only when the
// request cannot be read, is from another build, or the answer cannot be
// written.
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
	enc := json.NewEncoder(out) // a line per value, written at once
	if err := enc.Encode(line{Build: self()}); err != nil {
		return fmt.Errorf("writing the answer: %v", err)
	}
	if len(req.Jobs) == 0 {
		return nil
	}
	if req.Build == nil || self().differs(req.Build) != "" {
		return errors.New("the request is from another build of olm-cmp: install both from the same build")
	}
	var mu sync.Mutex
	var werr error
	runJobs(ctx, handlers, req.Jobs, func(i int, r Result) {
		mu.Lock()
		defer mu.Unlock()
		if werr == nil {
			if err := enc.Encode(line{Job: &i, Output: r.Output, Error: r.Error}); err != nil {
				werr = fmt.Errorf("writing the answer: %v", err)
			}
		}
	})
	return werr
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
