package checkproc_test

// Regression tests from an adversarial review of olm-cmp-check (wt-break):
// each failed on ebd37f0.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
)

// helperScript writes an executable shell script into a new directory.
func helperScript(t *testing.T, body string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("shell scripts as helpers")
	}
	p := filepath.Join(t.TempDir(), checkproc.Executable)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

var oneJob = []checkproc.Job{{Op: "crd", Input: json.RawMessage(`{}`)}}

// The helper gets the Go runtime's settings and TMPDIR only: with none of
// them set (a shell without TMPDIR, Argo CD's classic plugin container),
// it must still get nothing else, not olm-cmp's whole environment.
func TestHelperEnvironmentIsEmptyWhenNoneOfItsVariablesIsSet(t *testing.T) {
	for _, k := range []string{"GOGC", "GOMEMLIMIT", "GODEBUG", "GOMAXPROCS", "GOTRACEBACK", "TMPDIR"} {
		t.Setenv(k, "") // restored after the test
		os.Unsetenv(k)
	}
	t.Setenv("OLM_CMP_BREAK_REGISTRY_PASSWORD", "hunter2")
	t.Setenv("ARGOCD_ENV_namespace", "tenant-value")
	// export -p is a builtin: no PATH needed.
	helper := helperScript(t, "echo ENV: $(export -p) >&2\nexit 3\n")
	defer checkproc.UseExecutable(helper)()
	_, err := checkproc.Run(context.Background(), oneJob)
	if err == nil {
		t.Fatal("the helper failed, Run did not")
	}
	for _, leak := range []string{"hunter2", "tenant-value"} {
		if strings.Contains(err.Error(), leak) {
			t.Errorf("olm-cmp's environment reached olm-cmp-check (%q in its line): %v", leak, err)
		}
	}
}

// A helper that cannot be started (not executable, or not an executable
// file) is one line without the server's path or Go's words for exec.
func TestUnstartableHelperLineHasNoServerPath(t *testing.T) {
	for name, mode := range map[string]os.FileMode{"not executable": 0o644, "empty file": 0o755} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, checkproc.Executable)
			if err := os.WriteFile(p, nil, mode); err != nil {
				t.Fatal(err)
			}
			defer checkproc.UseExecutable(p)()
			_, err := checkproc.Run(context.Background(), oneJob)
			if err == nil {
				t.Fatal("Run succeeded with a helper that cannot run")
			}
			if strings.Contains(err.Error(), dir) || strings.Contains(err.Error(), "fork/exec") {
				t.Errorf("the line names the server's path or exec's jargon: %v", err)
			}
		})
	}
}
