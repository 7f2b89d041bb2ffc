package checkproc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// envParentHelper names the helper the "parent" mode of TestMain runs.
const envParentHelper = "OLM_CMP_CHECKPROC_TEST_PARENT_HELPER"

// TestHelperDiesWithOlmCmp: a render killed with kill -TERM (or -KILL)
// takes its olm-cmp-check with it. The helper runs in a process group of
// its own (so its grandchildren can be killed at a deadline), which the
// terminal's Ctrl-C no longer reaches either: a breaker found one running
// on, reparented to init, after its olm-cmp was gone.
func TestHelperDiesWithOlmCmp(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	helperPath := filepath.Join(dir, Executable)
	script := fmt.Sprintf("#!/bin/sh\necho $$ > %q\nexec sleep 60\n", pidFile)
	if err := os.WriteFile(helperPath, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(exe, "-test.run=^$")
	parent.Env = append(os.Environ(), envHelper+"=parent", envParentHelper+"="+helperPath)
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Process.Kill()
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the helper never started")
		}
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	parent.Process.Signal(syscall.SIGKILL)
	parent.Wait()
	for deadline := time.Now().Add(5 * time.Second); running(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("olm-cmp-check (pid %d) outlived the olm-cmp that started it", pid)
		}
	}
}

// running reports whether pid runs (a zombie waiting for init's reaping
// does not).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
