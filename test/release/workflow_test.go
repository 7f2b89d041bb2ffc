// Package release checks .github/workflows/release.yaml as the bot's job
// files are checked (test/bot): parsed, every action pinned to a commit,
// each job with only the permissions it uses, and the steps that publish
// doing what the release promises. It also runs hack/release-notes.sh.
package release

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	yaml3 "sigs.k8s.io/yaml/goyaml.v3"
)

const root = "../.."

type step struct {
	ID   string            `json:"id"`
	Name string            `json:"name"`
	Uses string            `json:"uses"`
	Run  string            `json:"run"`
	With map[string]any    `json:"with"`
	Env  map[string]string `json:"env"`
}

type job struct {
	Needs       any               `json:"needs"`
	Permissions map[string]string `json:"permissions"`
	Steps       []step            `json:"steps"`
}

type workflow struct {
	On          map[string]any    `json:"on"`
	Permissions map[string]string `json:"permissions"`
	Jobs        map[string]job    `json:"jobs"`
	Env         map[string]string `json:"env"`
}

func readWorkflow(t *testing.T) (workflow, string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, ".github/workflows/release.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// YAML 1.2, as GitHub reads it: `on` is a key, not the boolean YAML
	// 1.1 (sigs.k8s.io/yaml's default) makes of it.
	var raw map[string]any
	if err := yaml3.Unmarshal(b, &raw); err != nil {
		t.Fatalf("release.yaml: %v", err)
	}
	j, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	var wf workflow
	if err := json.Unmarshal(j, &wf); err != nil {
		t.Fatalf("release.yaml: %v", err)
	}
	return wf, string(b)
}

// TestReleaseWorkflowPinnedAndMinimal: on tags only; no permission at the
// top; each job exactly the permissions it needs (packages: write and
// id-token: write only in the job that pushes and signs, contents: write
// only in the job that publishes); every action pinned to a full commit
// SHA with its version in a comment.
func TestReleaseWorkflowPinnedAndMinimal(t *testing.T) {
	wf, text := readWorkflow(t)
	if push, _ := wf.On["push"].(map[string]any); len(wf.On) != 1 || !reflect.DeepEqual(push, map[string]any{"tags": []any{"v*"}}) {
		t.Errorf("on: %v, want push of tags v* only", wf.On)
	}
	if wf.Permissions == nil || len(wf.Permissions) != 0 {
		t.Errorf("top-level permissions %v, want {} (each job says its own)", wf.Permissions)
	}
	want := map[string]map[string]string{
		"test":     {"contents": "read"},
		"image":    {"contents": "read", "packages": "write", "id-token": "write", "attestations": "write"},
		"binaries": {"contents": "read"},
		"release":  {"contents": "write", "pull-requests": "write"},
	}
	if len(wf.Jobs) != len(want) {
		t.Errorf("jobs %d, want %d: give a new job its permissions here", len(wf.Jobs), len(want))
	}
	for name, perms := range want {
		if got := wf.Jobs[name].Permissions; !reflect.DeepEqual(got, perms) {
			t.Errorf("job %s: permissions %v, want %v", name, got, perms)
		}
	}
	pinned := regexp.MustCompile(`^[\w.-]+/[\w./-]+@[0-9a-f]{40}$`)
	comment := regexp.MustCompile(`(?m)uses: (\S+) # v\d+\.\d+\.\d+$`)
	commented := map[string]bool{}
	for _, m := range comment.FindAllStringSubmatch(text, -1) {
		commented[m[1]] = true
	}
	for name, j := range wf.Jobs {
		for _, s := range j.Steps {
			if s.Uses == "" {
				continue
			}
			if !pinned.MatchString(s.Uses) {
				t.Errorf("job %s: uses %q, not pinned to a full commit SHA", name, s.Uses)
			}
			if !commented[s.Uses] {
				t.Errorf("job %s: uses %q without a `# vX.Y.Z` comment naming the version", name, s.Uses)
			}
		}
	}
	// One SHA per action across jobs: a bump cannot miss a copy.
	shas := map[string]string{}
	for _, j := range wf.Jobs {
		for _, s := range j.Steps {
			if a, sha, ok := strings.Cut(s.Uses, "@"); ok {
				if prev, seen := shas[a]; seen && prev != sha {
					t.Errorf("%s pinned to both %s and %s", a, prev, sha)
				}
				shas[a] = sha
			}
		}
	}
}

// TestReleaseWorkflowSteps: tests gate everything; the image is pushed and
// signed by digest, with SBOM and provenance; the CLI is built for four
// platforms with checksums; the notes come from CHANGELOG.md; deploy/ is
// pinned by the generator and checked by its test.
func TestReleaseWorkflowSteps(t *testing.T) {
	wf, _ := readWorkflow(t)
	runs := func(name string) string {
		var b strings.Builder
		for _, s := range wf.Jobs[name].Steps {
			b.WriteString(s.Uses + "\n" + s.Run + "\n")
		}
		return b.String()
	}
	needs := func(name string) []string {
		switch n := wf.Jobs[name].Needs.(type) {
		case string:
			return []string{n}
		case []any:
			var out []string
			for _, x := range n {
				out = append(out, x.(string))
			}
			return out
		}
		return nil
	}
	if !strings.Contains(runs("test"), "make test") {
		t.Error("job test does not run make test")
	}
	for _, j := range []string{"image", "binaries"} {
		if !reflect.DeepEqual(needs(j), []string{"test"}) {
			t.Errorf("job %s needs %v, want [test]", j, needs(j))
		}
	}
	if !reflect.DeepEqual(needs("release"), []string{"image", "binaries"}) {
		t.Errorf("job release needs %v", needs("release"))
	}
	for _, want := range []string{"make image ", "make -s image-push", `cosign sign --yes "$IMAGE@$DIGEST"`,
		`cosign attest --yes --type cyclonedx --predicate bin/oci.cdx.json "$IMAGE@$DIGEST"`, "sigstore/cosign-installer@", "actions/attest-build-provenance@"} {
		if !strings.Contains(runs("image"), want) {
			t.Errorf("job image lacks %q", want)
		}
	}
	bin := runs("binaries")
	for _, want := range []string{"for os in linux darwin", "for arch in amd64 arm64", "CGO_ENABLED=0", "-trimpath",
		`-o "build/$d/" ./cmd/olm-cmp ./cmd/olm-cmp-check`, `gzip -n > "dist/$d.tar.gz"`, "sha256sum olm-cmp-* > SHA256SUMS"} {
		if !strings.Contains(bin, want) {
			t.Errorf("job binaries lacks %q", want)
		}
	}
	rel := runs("release")
	for _, want := range []string{"hack/release-notes.sh", "gh release create", "dist/SHA256SUMS",
		"dist/olm-cmp-linux-amd64.tar.gz dist/olm-cmp-linux-arm64.tar.gz dist/olm-cmp-darwin-amd64.tar.gz dist/olm-cmp-darwin-arm64.tar.gz",
		`go run ./hack/cmd/ociimage pin -tag "$GITHUB_REF_NAME" -digest "$DIGEST"`, "go test ./deploy -run TestImagePinned", "gh pr create"} {
		if !strings.Contains(rel, want) {
			t.Errorf("job release lacks %q", want)
		}
	}
	// No expression expanded inside a script (injection): values reach
	// scripts through env.
	for name, j := range wf.Jobs {
		for _, s := range j.Steps {
			if strings.Contains(s.Run, "${{") {
				t.Errorf("job %s: a run script expands ${{ }}; pass it through env", name)
			}
		}
	}
}

// TestReleaseNotes: hack/release-notes.sh prints the tag's section of a
// changelog, and fails, naming the fix, when there is none.
func TestReleaseNotes(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	cl := filepath.Join(t.TempDir(), "CHANGELOG.md")
	os.WriteFile(cl, []byte("# Changelog\n\n## Unreleased\n\n- next\n\n## v0.2.0\n\n- two\n- more\n\n## v0.1.0\n\n- one\n"), 0o644)
	out, err := exec.Command(filepath.Join(root, "hack/release-notes.sh"), "v0.2.0", cl).Output()
	if err != nil || string(out) != "\n- two\n- more\n" {
		t.Errorf("v0.2.0: %q, %v", out, err)
	}
	out, err = exec.Command(filepath.Join(root, "hack/release-notes.sh"), "v0.3.0", cl).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `has no section "## v0.3.0": add the release's notes there before tagging`) {
		t.Errorf("v0.3.0: %q, %v", out, err)
	}
	// The repository's own changelog has the section unreleased work goes to.
	if b, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md")); err != nil || !strings.Contains(string(b), "\n## Unreleased\n") {
		t.Errorf("CHANGELOG.md: %v", err)
	}
}

// TestCIRunsTheSlowSuites: README's second command is make test, which
// leaves the Argo CD client suites out (they compile Argo CD: most of an
// hour cold); CI (.ci/run) runs make test, then those suites and the e2e.
func TestCIRunsTheSlowSuites(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(readme), "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[2], "    make demo ") || !strings.HasPrefix(lines[3], "    make test ") {
		t.Errorf("README's first commands are not make demo, make test: %q", lines[:4])
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^test:(.*)$`).FindSubmatch(mk)
	if m == nil || strings.Contains(string(m[1]), "test-argocd") || !strings.Contains(string(m[1]), "test-unit") {
		t.Errorf("Makefile test target %q: want lint and test-unit, not test-argocd", m)
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci/run"))
	if err != nil {
		t.Fatal(err)
	}
	at := -1
	for _, want := range []string{"\nmake test\n", "\nmake test-argocd\n", "\nmake e2e\n"} {
		i := strings.Index(string(ci), want)
		if i < 0 || i < at {
			t.Errorf(".ci/run does not run %q after the previous suite", strings.TrimSpace(want))
		}
		at = i
	}
}
