package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/badinput"
	"github.com/olm-cmp/olm-cmp/internal/checks/inprocess"
)

// envAsCLI makes the test binary run as olm-cmp (see TestMain): the
// README's CI script calls olm-cmp by name.
const envAsCLI = "OLM_CMP_TEST_AS_CLI"

func TestMain(m *testing.M) {
	// Renders check what olm-cmp-check checks in this process, the test
	// binary run as olm-cmp too (test/doccmd runs the real pair).
	inprocess.Install()
	if os.Getenv(envAsCLI) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func writeFile(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// readmeCIScript is the shell script of the README's GitHub Actions job
// (the `run: |` of its step `id: diff`), de-indented.
func readmeCIScript(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "      - id: diff\n")
	if !ok {
		t.Fatal("README.md has no GitHub Actions step `- id: diff`")
	}
	_, rest, ok = strings.Cut(rest, "        run: |\n")
	if !ok {
		t.Fatal("the README's step `id: diff` has no `run: |`")
	}
	var script []string
	for _, line := range strings.SplitAfter(rest, "\n") {
		if !strings.HasPrefix(line, "          ") {
			break
		}
		script = append(script, strings.TrimPrefix(line, "          "))
	}
	return strings.Join(script, "")
}

// TestREADMECIJobCommentsPerApplication runs the README's GitHub Actions
// script on a repository of three applications, two of them changed, with
// olm-cmp (this test binary) and a gh that keeps the comments it is asked to
// post: one comment per changed application, each under GitHub's 65,536
// characters, and the worst status for the job's last step.
func TestREADMECIJobCommentsPerApplication(t *testing.T) {
	for _, tool := range []string{"git", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	comments := t.TempDir()
	writeFile(t, filepath.Join(bin, "olm-cmp"), []byte("#!/bin/sh\n"+envAsCLI+"=1 exec '"+self+"' \"$@\"\n"))
	// gh pr comment N --body-file F: keep F, numbered.
	writeFile(t, filepath.Join(bin, "gh"), []byte("#!/bin/sh\nn=$(ls '"+comments+"' | wc -l)\n[ \"$1 $2 $3 $4\" = 'pr comment 7 --body-file' ] || { echo \"gh: unexpected $*\" >&2; exit 1; }\ncp \"$5\" '"+comments+"'/$n.md\n"))
	for _, f := range []string{"olm-cmp", "gh"} {
		if err := os.Chmod(filepath.Join(bin, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	repo := t.TempDir()
	gitRun := func(args ...string) {
		t.Helper()
		c := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	apps := []string{"a", "b", "c"}
	for _, app := range apps {
		badinput.CopyDir(t, "../../examples/demo", filepath.Join(repo, "apps", app))
	}
	gitRun("init", "-q")
	gitRun("add", "-A")
	gitRun("commit", "-qm", "three applications")
	// a and c move namespace (every object changes); b stays.
	for _, app := range []string{"a", "c"} {
		p := filepath.Join(repo, "apps", app, "olm-cmp.yaml")
		data, _ := os.ReadFile(p)
		moved := strings.ReplaceAll(string(data), "greeter-system", "greeter-"+app)
		if moved == string(data) {
			t.Fatal("the demo spec has no greeter-system: update this test")
		}
		writeFile(t, p, []byte(moved))
	}

	script := strings.ReplaceAll(readmeCIScript(t), "${{ github.event.pull_request.number }}", "7")
	output := filepath.Join(t.TempDir(), "github-output")
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script) // as GitHub runs `run:`
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "BASE=HEAD", "GITHUB_OUTPUT="+output, "GH_TOKEN=x")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README's script failed: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(output); string(got) != "status=1\n" {
		t.Errorf("GITHUB_OUTPUT %q, want status=1 (changes, no safety error)", got)
	}
	entries, _ := os.ReadDir(comments)
	if len(entries) != 2 {
		t.Fatalf("%d comments, want one per changed application (2)", len(entries))
	}
	for i, app := range []string{"a", "c"} {
		body, err := os.ReadFile(filepath.Join(comments, []string{"0.md", "1.md"}[i]))
		if err != nil {
			t.Fatal(err)
		}
		want := "Application `apps/" + app + "`\n\n### olm-cmp diff: `greeter-operator 0.2.0 -> 0.2.0`\n"
		if !strings.HasPrefix(string(body), want) || !strings.Contains(string(body), "| Namespace |  | `greeter-"+app+"` |") {
			t.Errorf("comment %d:\n%.600s\nwant it to start with %q and add Namespace greeter-%s", i, body, want, app)
		}
		if len(body) > 65536 {
			t.Errorf("comment %d: %d characters, over GitHub's 65,536", i, len(body))
		}
	}
}
