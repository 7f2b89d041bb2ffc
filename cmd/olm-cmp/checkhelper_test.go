package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
)

// TestRenderWithoutCheckHelper: olm-cmp installed alone (built into an
// empty directory, olm-cmp-check neither beside it nor on PATH) cannot
// check the demo's CRD: render exits 1 with one line naming the helper and
// how to install both, no path of the machine's, and prints no manifest.
func TestRenderWithoutCheckHelper(t *testing.T) {
	if testing.Short() {
		t.Skip("builds olm-cmp: skipped with -short")
	}
	deps, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	if slices.Contains(strings.Fields(string(deps)), "k8s.io/apiextensions-apiserver/pkg/apiserver/validation") {
		t.Skip("olm-cmp still links the API server's checks (k8s.io/apiextensions-apiserver's validation): it never runs olm-cmp-check yet")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "olm-cmp")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "render", "../../examples/demo")
	cmd.Env = []string{"PATH=" + dir, "HOME=" + t.TempDir(), EnvCacheDir + "=" + t.TempDir()} // a cold cache: no verdict kept from another run
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("render without %s: %v, want exit status 1; stderr:\n%s", checkproc.Executable, err, stderr.String())
	}
	line := stderr.String()
	t.Logf("render says: %s", line)
	if strings.Count(line, "\n") != 1 || !strings.HasPrefix(line, "error: ") ||
		!strings.Contains(line, checkproc.Executable+", which makes the checks") || !strings.Contains(line, "install both") {
		t.Errorf("render's error is not the one line naming %s and how to install it:\n%s", checkproc.Executable, line)
	}
	if strings.Contains(line, dir) {
		t.Errorf("render's error shows the directory olm-cmp runs from: %s", line)
	}
	if stdout.Len() != 0 {
		t.Errorf("render printed %d bytes of manifests without their checks", stdout.Len())
	}
}
