package doccmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeInstall: make install puts a working olm-cmp, and olm-cmp-check
// beside it (olm-cmp runs it from there), in GOBIN, or in PREFIX/bin, and
// says when that directory is not on PATH (the newcomer's
// "olm-cmp: command not found" after make build), and not when it is.
func TestMakeInstall(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	gobin, prefix := t.TempDir(), t.TempDir()
	for _, c := range []struct {
		name, dir string
		args      []string
		onPath    bool
	}{
		{"GOBIN", gobin, []string{"install", "GOBIN=" + gobin}, false},
		{"PREFIX", filepath.Join(prefix, "bin"), []string{"install", "PREFIX=" + prefix}, false},
		{"PREFIX on PATH", filepath.Join(prefix, "bin"), []string{"install", "PREFIX=" + prefix}, true},
	} {
		cmd := exec.Command("make", append([]string{"--no-print-directory"}, c.args...)...)
		cmd.Dir = root
		path := os.Getenv("PATH")
		if c.onPath {
			path = c.dir + string(os.PathListSeparator) + path
		}
		cmd.Env = append(os.Environ(), "PATH="+path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: make %v: %v\n%s", c.name, c.args, err, out)
		}
		bin := filepath.Join(c.dir, "olm-cmp")
		want := "installed " + bin + " and " + bin + "-check\n"
		if !c.onPath {
			want += c.dir + ` is not on PATH: export PATH="` + c.dir + `:$PATH" (or make install PREFIX=DIR for a directory that is)` + "\n"
		}
		if string(out) != want {
			t.Errorf("%s: make %v printed\n%s\nwant\n%s", c.name, c.args, out, want)
		}
		v, err := exec.Command(bin, "version").Output()
		if err != nil || !strings.HasPrefix(string(v), "olm-cmp ") {
			t.Errorf("%s: %s version: %v %q", c.name, bin, err, v)
		}
		check := exec.Command(bin + "-check")
		check.Stdin = strings.NewReader(`{"jobs":[]}`)
		if a, err := check.Output(); err != nil || !strings.HasPrefix(string(a), `{"build":{"go":"go`) || strings.Count(string(a), "\n") != 1 {
			t.Errorf("%s: %s-check answers an empty request with %q (%v), want its build", c.name, bin, a, err)
		}
	}
}
