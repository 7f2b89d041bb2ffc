package checkproc

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A batch stopped at the deadline hands over the results of the jobs that
// finished before it: each result comes as its job ends.
func TestRunEachGivesWhatFinishedBeforeTheDeadline(t *testing.T) {
	helper(t, "serve")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	batch := []Job{jobs[0], {Op: "hang", Input: json.RawMessage(`1`)}, {Op: "echo", Input: json.RawMessage(`2`)}}
	got := map[int]string{}
	err := RunEach(ctx, batch, func(i int, r Result) { got[i] = string(r.Output) })
	if err == nil || !strings.HasPrefix(err.Error(), "olm-cmp-check did not finish its checks in time") {
		t.Errorf("error %v", err)
	}
	if len(got) != 2 || got[0] != `{"a":1}` || got[2] != "2" {
		t.Errorf("results given: %v", got)
	}
}

// A helper of another build (an older `make install` on PATH, an image
// whose helper was copied from elsewhere), or one from before builds were
// compared, is refused in one line, and none of its answers counts.
func TestHelperOfAnotherBuildIsRefused(t *testing.T) {
	for mode, want := range map[string]string{
		"other": `olm-cmp-check is from another build than olm-cmp: install both from the same build (make build, make install, go install ./cmd/..., or one image; olm-cmp has -ldflags "", olm-cmp-check "-s -w -X main.version=v0.0.1")`,
		"old":   "olm-cmp-check is from another build than olm-cmp: install both from the same build (make build, make install, go install ./cmd/..., or one image; it does not say which build it is)",
	} {
		t.Run(mode, func(t *testing.T) {
			helper(t, mode)
			var given int
			err := RunEach(context.Background(), jobs, func(int, Result) { given++ })
			if err == nil || err.Error() != want || given != 0 {
				t.Errorf("got %d results, %v; want none and %q", given, err, want)
			}
		})
	}
}

// olm-cmp-check answers a request of another build with its build only,
// and runs none of its jobs.
func TestServeRefusesARequestOfAnotherBuild(t *testing.T) {
	other := *self()
	other.Go = "go1.0"
	for name, id := range map[string]*buildID{"other": &other, "none": nil} {
		req, _ := json.Marshal(request{Build: id, Jobs: jobs})
		var out strings.Builder
		err := Serve(context.Background(), strings.NewReader(string(req)), &out, testHandlers)
		if err == nil || strings.Count(out.String(), "\n") != 1 || strings.Contains(out.String(), `"job"`) {
			t.Errorf("%s: %v, answered %q", name, err, out.String())
		}
	}
	// Builds differ where both say something; a test binary or a build
	// without VCS stamp says less.
	a := &buildID{Go: "go1", Module: "m (devel)", Settings: map[string]string{"GOOS": "linux"}, Deps: map[string]string{"x": "v1 h1:a", "only-a": "v1"}}
	b := &buildID{Go: "go1", Module: "m v0.0.0-2026", Settings: map[string]string{"GOOS": "linux", "vcs.revision": "abc"}, Deps: map[string]string{"x": "v1 h1:a", "only-b": "v2"}}
	if d := a.differs(b); d != "" {
		t.Errorf("one build told apart: %s", d)
	}
	a.Settings["main.version"] = "v1.4.0" // b: a test binary, which stamps none
	if d := a.differs(b); d != "" {
		t.Errorf("one build told apart: %s", d)
	}
	b.Settings["main.version"] = "v1.3.2"
	if d := a.differs(b); d != `main.version "v1.4.0", olm-cmp-check "v1.3.2"` {
		t.Errorf("another stamped version: %q", d)
	}
	b.Settings["main.version"] = "v1.4.0"
	b.Deps["x"] = "v2 h1:b"
	if d := a.differs(b); d != "x v1, olm-cmp-check v2" {
		t.Errorf("another dependency: %q", d)
	}
}

// A helper that cannot be started is one line without its path; one
// beside olm-cmp that is not executable is not run (nor another from
// PATH instead) and the line says so.
func TestHelperThatCannotStart(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, Executable)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := findBeside(dir); got != "" || !errors.Is(err, errNotExecutable) || Fix(err) != "" {
		t.Errorf("not executable: found %q, %v", got, err)
	}
	if want := "olm-cmp-check beside olm-cmp is not executable: make it executable (chmod +x), or install both again (make build, or go install ./cmd/... from the repository)"; errNotExecutable.Error() != want {
		t.Errorf("line %q", errNotExecutable)
	}
	useHelper(t, p)
	if _, err := Run(context.Background(), jobs); err == nil || err.Error() != "olm-cmp-check could not be started: it is not executable" {
		t.Errorf("started: %v", err)
	}
	os.Chmod(p, 0o755)
	if got, err := findBeside(dir); got != p || err != nil {
		t.Errorf("executable: found %q, %v", got, err)
	}
	if got, err := findBeside(t.TempDir()); got != "" || err != nil {
		t.Errorf("none: found %q, %v", got, err)
	}
}

// A helper killed before answering (the kernel's OOM killer) is worded as
// such, not as Go's "signal: killed".
func TestKilledHelper(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("signals")
	}
	p := filepath.Join(t.TempDir(), Executable)
	if err := os.WriteFile(p, []byte("#!/bin/sh\nkill -9 $$\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	useHelper(t, p)
	_, err := Run(context.Background(), jobs)
	if want := "olm-cmp-check was killed (out of memory, or by a signal) before answering"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

// At the deadline the helper and every process it started are killed: a
// grandchild holding the pipes neither outlives the render nor delays it,
// and the line has no exec jargon.
func TestDeadlineKillsWhatTheHelperStarted(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil || runtime.GOOS == "windows" {
		t.Skip("no sleep command")
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	p := filepath.Join(dir, Executable)
	script := "#!/bin/sh\n" + sleep + " 300 &\necho $! > " + pidFile + "\n" + sleep + " 300\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	useHelper(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	_, err = Run(ctx, jobs)
	if err == nil || !strings.HasPrefix(err.Error(), "olm-cmp-check did not finish its checks in time: ") || strings.Contains(err.Error(), "WaitDelay") {
		t.Errorf("error %v", err)
	}
	if d := time.Since(start); d > time.Second+waitDelay/2 {
		t.Errorf("Run returned %s after its start: the grandchild's pipes held it", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	for range 50 { // the kernel delivers the kill at once; reaping may lag
		if !alive(pid) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("the helper's child %d outlived it", pid)
	if pr, err := os.FindProcess(pid); err == nil {
		pr.Kill()
	}
}

// alive: pid is a process that is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || !strings.HasPrefix(s[i+1:], " Z")
}

// At most MaxHelpers helpers run at once; a Run waiting for a place waits
// within its own deadline and starts none.
func TestHelpersAtOnceAreBounded(t *testing.T) {
	helper(t, "serve")
	for range MaxHelpers {
		helperSlots <- struct{}{}
	}
	defer func() {
		for range MaxHelpers {
			<-helperSlots
		}
	}()
	before := Spawns()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := Run(ctx, jobs)
	if err == nil || !strings.Contains(err.Error(), "it waited for one of the 2 that run at once") || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v", err)
	}
	if Spawns() != before {
		t.Error("a helper started past the bound")
	}
}

// A job identical to one another Run is computing is not computed twice:
// it waits for that result. If that computation fails, it is made again.
func TestIdenticalJobsInFlightAreComputedOnce(t *testing.T) {
	helper(t, "serve")
	slow := []Job{{Op: "slow", Input: json.RawMessage(`"once"`)}}
	inFlight := func() bool {
		flights.mu.Lock()
		defer flights.mu.Unlock()
		return len(flights.m) > 0
	}
	t.Run("shared", func(t *testing.T) {
		before := Spawns()
		var wg sync.WaitGroup
		var results [2][]Result
		var errs [2]error
		wg.Go(func() { results[0], errs[0] = Run(context.Background(), slow) })
		for !inFlight() {
			time.Sleep(time.Millisecond)
		}
		wg.Go(func() { results[1], errs[1] = Run(context.Background(), append(slow, slow...)) })
		wg.Wait()
		for i := range 2 {
			if errs[i] != nil || string(results[i][0].Output) != `"slow"` || string(results[i][len(results[i])-1].Output) != `"slow"` {
				t.Errorf("run %d: %v %v", i, results[i], errs[i])
			}
		}
		if n := Spawns() - before; n != 1 {
			t.Errorf("%d helpers for one job", n)
		}
	})
	t.Run("leader fails", func(t *testing.T) {
		before := Spawns()
		short, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		var wg sync.WaitGroup
		var first error
		wg.Go(func() { _, first = Run(short, slow) })
		for !inFlight() {
			time.Sleep(time.Millisecond)
		}
		got, err := Run(context.Background(), slow)
		wg.Wait()
		if first == nil || err != nil || string(got[0].Output) != `"slow"` {
			t.Errorf("first %v; second %v, %v", first, got, err)
		}
		if n := Spawns() - before; n != 2 {
			t.Errorf("%d helpers, want 2", n)
		}
	})
}

// olm-cmp-check runs at most maxParallelJobs jobs at once, however many
// CPUs it has: its memory grows with the jobs in flight.
func TestHelperJobsAtOnceAreBounded(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4 * maxParallelJobs))
	var now, most atomic.Int64
	h := map[string]Handler{"count": func(context.Context, json.RawMessage) (any, error) {
		n := now.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(20 * time.Millisecond)
		now.Add(-1)
		return nil, nil
	}}
	batch := make([]Job, 4*maxParallelJobs)
	for i := range batch {
		batch[i] = Job{Op: "count", Input: json.RawMessage(`1`)}
	}
	runJobs(context.Background(), h, batch, func(int, Result) {})
	if m := most.Load(); m > maxParallelJobs || m < 2 {
		t.Errorf("%d jobs at once, want 2 to %d", m, maxParallelJobs)
	}
}

// BenchmarkHandshake is what the build check adds to a helper's run: each
// side reads its build (once per process), olm-cmp writes it in the request, the helper in
// its answer, and olm-cmp reads and compares it.
func BenchmarkHandshake(b *testing.B) {
	for b.Loop() {
		id := readBuild()
		req, _ := json.Marshal(request{Build: id})
		var got request
		json.Unmarshal(req, &got)
		if id.differs(got.Build) != "" {
			b.Fatal("differs from itself")
		}
		b.SetBytes(int64(len(req)))
	}
}

// A helper that answers something else and keeps writing is not waited
// for until the deadline: olm-cmp stops reading and the helper's writes
// fail.
func TestHelperThatKeepsWritingIsNotWaitedFor(t *testing.T) {
	yes, err := exec.LookPath("yes")
	if err != nil || runtime.GOOS == "windows" {
		t.Skip("no yes command")
	}
	p := filepath.Join(t.TempDir(), Executable)
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho 'Usage: olm-cmp-check'\nexec "+yes+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	useHelper(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = Run(ctx, jobs)
	if want := "olm-cmp-check answered something that is not the answer to 2 checks: is it the same build as olm-cmp?"; err == nil || err.Error() != want || ctx.Err() != nil {
		t.Errorf("got %v (the context: %v), want %q", err, ctx.Err(), want)
	}
}

// Answer is what a helper of this build answers: a script that prints it
// is answered as the real one.
func TestAnswerIsAnAnswer(t *testing.T) {
	want := []Result{{Output: json.RawMessage(`{"a":1}`)}, {Error: "the input is wrong"}}
	p := filepath.Join(t.TempDir(), Executable)
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho '"+strings.TrimSpace(string(Answer(want...)))+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	useHelper(t, p)
	got, err := Run(context.Background(), jobs)
	if err != nil || len(got) != 2 || string(got[0].Output) != `{"a":1}` || got[1].Error != want[1].Error {
		t.Errorf("got %+v, %v", got, err)
	}
}
