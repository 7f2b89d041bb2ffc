package checkproc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// envHelper makes the test binary act as olm-cmp-check (TestMain), in the
// way the variable names: the helper scripts the tests write set it, since
// Run passes the helper no environment of its own.
const envHelper = "CHECKPROC_TEST_HELPER"

// testHandlers are the helper's operations in the tests.
var testHandlers = map[string]Handler{
	"echo": func(_ context.Context, in json.RawMessage) (any, error) { return in, nil },
	"fail": func(context.Context, json.RawMessage) (any, error) { return nil, errors.New("the input is wrong") },
	"panic": func(context.Context, json.RawMessage) (any, error) {
		var m map[string]int
		m["x"]++ // a library's bug on a hostile input
		return nil, nil
	},
	"env": func(context.Context, json.RawMessage) (any, error) { return os.Environ(), nil },
	"slow": func(context.Context, json.RawMessage) (any, error) {
		time.Sleep(700 * time.Millisecond)
		return "slow", nil
	},
	"hang": func(ctx context.Context, _ json.RawMessage) (any, error) {
		time.Sleep(time.Hour) // a check that never ends: the helper is killed
		return nil, nil
	},
}

func TestMain(m *testing.M) {
	switch os.Getenv(envHelper) {
	case "":
		os.Exit(m.Run())
	case "serve":
		if err := Serve(context.Background(), os.Stdin, os.Stdout, testHandlers); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case "parent":
		// olm-cmp running a helper, until the test kills it
		UseExecutable(os.Getenv(envParentHelper))
		Run(context.Background(), jobs)
	case "crash":
		fmt.Fprintln(os.Stderr, "fatal error: out of memory\n\ngoroutine 1 [running]:\nmain.main()\n\t/build/internal/x.go:12 +0x1d")
		os.Exit(2)
	case "hang":
		time.Sleep(time.Hour)
	case "big":
		json.NewEncoder(os.Stdout).Encode(line{Build: self()})
		os.Stdout.Write([]byte(`{"job":0,"output":"`))
		os.Stdout.Write([]byte(strings.Repeat("x", MaxAnswerBytes)))
		os.Stdout.Write([]byte(`"}` + "\n"))
	case "garbage":
		os.Stdout.Write([]byte("Usage: olm-cmp-check [flags]\n"))
	case "short":
		json.NewEncoder(os.Stdout).Encode(line{Build: self()})
		os.Stdout.Write([]byte(`{"job":0,"output":1}` + "\n"))
	case "old":
		// an olm-cmp-check from before builds were compared
		os.Stdout.Write([]byte(`{"results":[{"output":1},{"output":2}]}`))
	case "other":
		other := *self()
		other.Settings = map[string]string{"-ldflags": "-s -w -X main.version=v0.0.1"}
		for k, v := range self().Settings {
			if k != "-ldflags" {
				other.Settings[k] = v
			}
		}
		json.NewEncoder(os.Stdout).Encode(line{Build: &other})
		os.Stdout.Write([]byte(`{"job":0,"output":1}` + "\n" + `{"job":1,"output":2}` + "\n"))
	}
	os.Exit(0)
}

// helper writes a script that runs this test binary as olm-cmp-check in
// mode, and makes Run find it.
func helper(t *testing.T, mode string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), Executable)
	script := fmt.Sprintf("#!/bin/sh\n%s=%s exec %q -test.run=^$\n", envHelper, mode, exe)
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	useHelper(t, p)
	return p
}

// useHelper makes Run find path (none when "") for the test.
func useHelper(t *testing.T, path string) {
	t.Cleanup(UseExecutable(path))
}

var jobs = []Job{{Op: "echo", Input: json.RawMessage(`{"a":1}`)}, {Op: "fail", Input: json.RawMessage(`{}`)}}

// The helper answers each job in order: an output, or the error its
// operation returned.
func TestRunAnswersEachJob(t *testing.T) {
	helper(t, "serve")
	before := Spawns()
	got, err := Run(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got[0].Output) != `{"a":1}` || got[0].Error != "" || got[1].Error != "the input is wrong" {
		t.Errorf("results %+v", got)
	}
	if n := Spawns() - before; n != 1 {
		t.Errorf("%d processes for one batch", n)
	}
	// Nothing to check: no process.
	if got, err := Run(context.Background(), nil); err != nil || got != nil || Spawns()-before != 1 {
		t.Errorf("no jobs: %v %v, %d processes", got, err, Spawns()-before)
	}
}

// A job whose operation panics gets an error result; the others are still
// answered, and the helper answers unknown operations with the likely
// cause.
func TestRunJobPanics(t *testing.T) {
	helper(t, "serve")
	got, err := Run(context.Background(), []Job{{Op: "panic", Input: json.RawMessage(`1`)}, jobs[0], {Op: "nope", Input: json.RawMessage(`1`)}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got[0].Error, "internal error in the check panic (please report it): assignment to entry in nil map") {
		t.Errorf("panic: %q", got[0].Error)
	}
	if string(got[1].Output) != `{"a":1}` {
		t.Errorf("the job after a panic: %+v", got[1])
	}
	if got[2].Error != `olm-cmp-check does not know the check "nope": is it the same build as olm-cmp?` {
		t.Errorf("unknown operation: %q", got[2].Error)
	}
}

// The helper sees the Go runtime's settings and TMPDIR, never the rest of
// olm-cmp's environment (registry credentials, the plugin's parameters).
func TestHelperEnvironment(t *testing.T) {
	helper(t, "serve")
	t.Setenv("GOMAXPROCS", "1")
	t.Setenv("ARGOCD_ENV_SECRET", "hunter2")
	t.Setenv("DOCKER_CONFIG", "/root/.docker")
	got, err := Run(context.Background(), []Job{{Op: "env", Input: json.RawMessage(`null`)}})
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	if err := json.Unmarshal(got[0].Output, &env); err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(env, "\n")
	if !strings.Contains(joined, "GOMAXPROCS=1") {
		t.Errorf("GOMAXPROCS not passed: %q", env)
	}
	for _, k := range []string{"ARGOCD_ENV_SECRET", "DOCKER_CONFIG", "HOME="} {
		if strings.Contains(joined, k) {
			t.Errorf("%s passed to the helper: %q", k, env)
		}
	}
}

// Each way the helper can fail is one error, saying what happened and
// what to do, and no results.
func TestRunFailures(t *testing.T) {
	for _, c := range []struct {
		mode, want string
	}{
		{"crash", "olm-cmp-check stopped before answering (exit status 2): fatal error: out of memory"},
		{"big", "olm-cmp-check answered more than 16777216 bytes"},
		{"garbage", "olm-cmp-check answered something that is not the answer to 2 checks: is it the same build as olm-cmp?"},
		{"short", "olm-cmp-check answered something that is not the answer to 2 checks: is it the same build as olm-cmp?"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			helper(t, c.mode)
			got, err := Run(context.Background(), jobs)
			if err == nil || got != nil || err.Error() != c.want {
				t.Errorf("got %v, %v; want no results and %q", got, err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), "x.go") {
				t.Errorf("the stack trace's path reached the error: %v", err)
			}
		})
	}
}

// A helper that does not answer before the context ends is stopped, and
// Run returns with the context's cause soon after.
func TestRunStopsAHelperAtTheDeadline(t *testing.T) {
	helper(t, "hang")
	stop := errors.New("the plugin's deadline passed")
	ctx, cancel := context.WithTimeoutCause(context.Background(), 500*time.Millisecond, stop)
	defer cancel()
	start := time.Now()
	got, err := Run(ctx, jobs)
	if !errors.Is(err, stop) || got != nil {
		t.Errorf("got %v, %v; want %v", got, err, stop)
	}
	if !strings.HasPrefix(err.Error(), "olm-cmp-check did not finish its checks in time: ") {
		t.Errorf("error %q", err)
	}
	if d := time.Since(start); d > waitDelay+5*time.Second {
		t.Errorf("Run returned %s after the helper was stopped", d)
	}
}

// Without a helper, Run says where it looked and how to install it.
func TestRunWithoutAHelper(t *testing.T) {
	useHelper(t, "")
	if _, err := Run(context.Background(), jobs); err != ErrMissing {
		t.Errorf("got %v", err)
	}
	// The real lookup, from a directory without one and an empty PATH.
	t.Setenv("PATH", t.TempDir())
	if p, err := find(); err == nil {
		t.Skipf("an olm-cmp-check is beside the test binary: %s", p)
	} else if !strings.Contains(err.Error(), "install both (make build, or go install ./cmd/... from the repository)") {
		t.Errorf("lookup: %v", err)
	}
}

// A request over the bound is refused before any process starts.
func TestRunRequestBound(t *testing.T) {
	helper(t, "serve")
	before := Spawns()
	big := Job{Op: "echo", Input: json.RawMessage(`"` + strings.Repeat("x", MaxRequestBytes) + `"`)}
	if _, err := Run(context.Background(), []Job{big}); err == nil || !strings.Contains(err.Error(), "over the 268435456-byte bound") {
		t.Errorf("got %v", err)
	}
	if Spawns() != before {
		t.Error("a process started for a request over the bound")
	}
}

// Serve refuses a request that is not one, and one over the bound.
func TestServeRefusesWhatIsNotARequest(t *testing.T) {
	var out strings.Builder
	if err := Serve(context.Background(), strings.NewReader("jobs: []"), &out, testHandlers); err == nil || out.Len() != 0 {
		t.Errorf("not JSON: %v, wrote %q", err, out.String())
	}
	over := strings.NewReader(strings.Repeat(" ", MaxRequestBytes+1))
	if err := Serve(context.Background(), over, &out, testHandlers); err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("over the bound: %v", err)
	}
}
