package cmpserver

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
)

// TestEnvironKeepsASecondProject: a process started with
// ARGOCD_APP_PROJECT_NAME twice (os.Environ keeps only the first) is
// refused by ParseEnv over Environ with serve's line. The test binary runs
// itself with that environment (os.StartProcess passes it as given).
func TestEnvironKeepsASecondProject(t *testing.T) {
	if os.Getenv("OLM_CMP_TEST_ENVIRON") == "1" {
		_, err := ParseEnv(Environ())
		fmt.Printf("ParseEnv: %v\n", err)
		os.Exit(0)
	}
	if runtime.GOOS != "linux" {
		t.Skip("the initial environment is read from /proc/self/environ")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{EnvAppProject + "=team-a", EnvAppProject + "=team-b"}, "ParseEnv: the plugin environment names ARGOCD_APP_PROJECT_NAME 2 times: it is set once, by the repo-server; check what else adds it"},
		{[]string{EnvAppProject + "=team-a", "ARGOCD_ENV_X=" + strings.Repeat("y", 10000), EnvAppProject + "=team-b", EnvAppProject + "=team-c"}, "ParseEnv: the plugin environment names ARGOCD_APP_PROJECT_NAME 3 times"},
		{[]string{EnvAppProject + "=team-a", "ARGOCD_ENV_" + EnvAppProject + "=team-b"}, "ParseEnv: <nil>"},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		env := append([]string{"OLM_CMP_TEST_ENVIRON=1"}, tc.env...)
		p, err := os.StartProcess(exe, []string{exe, "-test.run=^TestEnvironKeepsASecondProject$"}, &os.ProcAttr{Env: env, Files: []*os.File{nil, w, os.Stderr}})
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		var out bytes.Buffer
		out.ReadFrom(r)
		r.Close()
		if _, err := p.Wait(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("%.80q: got %q, want %q", tc.env, out.String(), tc.want)
		}
	}
}
