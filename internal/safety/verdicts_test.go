package safety

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/checkproc"
)

// gadget is crd as gadgets.example.com: a second CRD of the same bundle.
func gadget(crd string) string {
	return strings.NewReplacer("widget", "gadget", "Widget", "Gadget").Replace(crd)
}

// changedPair is two bundles whose two CRDs both changed (maximum lowered,
// an error each), so both need crdify.
func changedPair(t *testing.T) (from, to *bundle.Bundle) {
	old := crdYAML("Namespaced", specSchema(baseProps), "")
	cur := crdYAML("Namespaced", specSchema(edit(t, "maximum: 10", "maximum: 9")), "")
	return testBundle(t, "widget.v1.0.0", "1.0.0", old, gadget(old)), testBundle(t, "widget.v1.1.0", "1.1.0", cur, gadget(cur))
}

// freshVerdicts makes the test start with no verdict cached, in memory or
// on disk, kept under cacheDir ("" for memory only).
func freshVerdicts(t *testing.T, cacheDir string) {
	saved := verdicts
	verdicts = checkproc.NewStore(verdictDirName)
	verdicts.Keep(cacheDir)
	t.Cleanup(func() { verdicts = saved })
}

// Both CRDs go to olm-cmp-check in one process; the next check of the same
// pair, in this process or (from the cache directory) in the next, starts
// none and finds the same. A file on disk that is not a verdict this build
// writes is ignored and written anew.
func TestComparisonsBatchedAndKept(t *testing.T) {
	cache := t.TempDir()
	freshVerdicts(t, cache)
	from, to := changedPair(t)
	check := func() string {
		t.Helper()
		got, err := Check(t.Context(), from, to, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return lines(got)
	}
	spawns := checkproc.Spawns()
	first := check()
	if n := checkproc.Spawns() - spawns; n != 1 {
		t.Errorf("the first check started %d processes, want 1 for both CRDs", n)
	}
	if !strings.Contains(first, "error: maximum: CRD gadgets.example.com version v1 path .spec.size: maximum decreased: 10 -> 9") ||
		!strings.Contains(first, "error: maximum: CRD widgets.example.com version v1 path .spec.size: maximum decreased: 10 -> 9") {
		t.Fatalf("findings:\n%s", first)
	}
	spawns = checkproc.Spawns()
	if again := check(); again != first {
		t.Errorf("cached: got\n%s\nwant\n%s", again, first)
	}
	if n := checkproc.Spawns() - spawns; n != 0 {
		t.Errorf("a check of the same CRDs started %d processes", n)
	}

	dir := filepath.Join(cache, verdictDirName, checkproc.Build())
	files, err := os.ReadDir(dir)
	if err != nil || len(files) != 2 {
		t.Fatalf("%d verdict files in %s (%v), want 2", len(files), dir, err)
	}
	// A new process: nothing in memory, the files read back; one planted.
	planted := filepath.Join(dir, files[0].Name())
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(planted, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		verdicts = checkproc.NewStore(verdictDirName)
		verdicts.Keep(cache)
	}
	write(`{"findings":[{"severity":"warning","rule":"planted","message":"by the test"}]}`)
	spawns = checkproc.Spawns()
	if got := check(); !strings.Contains(got, "warning: planted: by the test") {
		t.Errorf("the verdict on disk was not read:\n%s", got)
	}
	if n := checkproc.Spawns() - spawns; n != 0 {
		t.Errorf("a check whose verdicts are on disk started %d processes", n)
	}
	// JSON that decodes to "no findings" is junk unless it is exactly what
	// olm-cmp-check writes (the changed CRD would pass on it).
	for _, junk := range []string{"not json", "null", "{}", `{"findings":[]}`, `{"findings":null,"x":1}`, `{"findings": null}`,
		`{"findings":[{"severity":"fine","rule":"x","message":"y"}]}`} {
		write(junk)
		if got := check(); got != first {
			t.Errorf("with %q on disk:\n%s\nwant the comparison's\n%s", junk, got, first)
		}
	}
}

// When olm-cmp-check is missing, crashes or does not answer in time, the
// check fails with one line naming the CRDs it could not compare and the
// fix: an upgrade is never judged safe without its comparisons.
func TestHelperFailureIsNotSafe(t *testing.T) {
	freshVerdicts(t, "")
	from, to := changedPair(t)
	check := func(ctx context.Context, helper string) error {
		t.Helper()
		restore := checkproc.UseExecutable(helper)
		defer restore()
		got, err := Check(ctx, from, to, Options{})
		if got != nil {
			t.Errorf("findings without the comparisons: %v", got)
		}
		return err
	}
	want := func(err error, line string) {
		t.Helper()
		if err == nil || err.Error() != line {
			t.Errorf("err = %v\nwant %s", err, line)
		}
	}
	want(check(t.Context(), ""), "CRDs widgets.example.com, gadgets.example.com could not be compared with the CRDs the cluster runs, so the upgrade's safety is unknown: "+checkproc.ErrMissing.Error())

	script := func(body string) string {
		p := filepath.Join(t.TempDir(), checkproc.Executable)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	want(check(t.Context(), script("echo 'panic: runtime error' >&2\nexit 2")),
		"CRDs widgets.example.com, gadgets.example.com could not be compared with the CRDs the cluster runs, so the upgrade's safety is unknown: olm-cmp-check stopped before answering (exit status 2): panic: runtime error; install olm-cmp-check from the same build beside olm-cmp (make build installs both), then retry; if it already is, report this line")
	answer := checkproc.Answer(checkproc.Result{Output: json.RawMessage(`{"findings":null}`)}, checkproc.Result{Error: "crdify failed on it: check that each of its versions has a valid schema; if they do, please report it"})
	want(check(t.Context(), script("echo '"+strings.TrimSpace(string(answer))+"'")),
		"CRD gadgets.example.com could not be compared with the CRD the cluster runs, so the upgrade's safety is unknown: crdify failed on it: check that each of its versions has a valid schema; if they do, please report it")

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if err := check(ctx, script("exec sleep 10")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a helper that does not answer in time: err = %v, want the deadline's", err)
	}
}
