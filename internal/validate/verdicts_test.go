package validate

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
)

var diskTestRuns int

// A verdict kept on disk is what the next process reads instead of checking
// the CRD again; one that is not a verdict is ignored and written anew. The
// directory of builds before olm-cmp-check is removed.
func TestCRDVerdictKeptOnDisk(t *testing.T) {
	cache := t.TempDir()
	old := filepath.Join(cache, oldVerdictDirName, strings.Repeat("a", 32))
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	KeepVerdicts(cache)
	if _, err := os.Stat(filepath.Dir(old)); err == nil {
		t.Errorf("%s kept", oldVerdictDirName)
	}
	defer KeepVerdicts("")
	// A default no other test or run used, so no verdict is in memory.
	diskTestRuns++
	crd := broken(t, "                default: 1\n", "                default: [1"+strconv.Itoa(diskTestRuns)+"]\n")
	k, ok := (&validator{}).crdKey(yaml.MustParse(crd))
	if !ok {
		t.Fatal("no key")
	}
	file := filepath.Join(cache, verdictDirName, checkproc.Build(), hex.EncodeToString(k[:]))
	onDisk := func() ([]string, bool) {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, false
		}
		return decodeVerdict(data)
	}

	first := run(t, crd)
	if !strings.Contains(first, "must be of type integer") {
		t.Fatalf("the broken CRD passes: %q", first)
	}
	if got, ok := onDisk(); !ok || len(got) != 1 || !strings.Contains(first, got[0]) {
		t.Fatalf("verdict on disk %q (%v), the render said %q", got, ok, first)
	}

	// A new process: nothing in memory, the file read back.
	forget := func() { verdicts.Forget(k) } // memory and disk
	forget()
	if err := os.WriteFile(file, []byte(`{"problems":["planted by the test"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := run(t, crd); !strings.Contains(got, "planted by the test") {
		t.Errorf("the verdict on disk was not read: %q", got)
	}

	// JSON that decodes to "no problems" but is not what olm-cmp-check writes
	// (the broken CRD would pass on it) counts as junk too
	for _, junk := range []string{"not json", `{"problems":[` + strings.Repeat(`"x",`, maxVerdictLines) + `"x"]}`,
		"null", "{}", `{"PROBLEMS":[]}`, `{"problems":[],"x":1}`, `{"problems": []}`} {
		forget()
		if err := os.WriteFile(file, []byte(junk), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := run(t, crd); got != first {
			t.Errorf("with %.20q on disk: %q, want the check's %q", junk, got, first)
		}
		if got, ok := onDisk(); !ok || !strings.Contains(first, got[0]) {
			t.Errorf("with %.20q on disk, the check's verdict was not written back: %q", junk, got)
		}
	}
}

// When olm-cmp-check is missing or fails, the render says which objects
// could not be checked and what to do, in one line, and returns none.
func TestHelperFailureRendersNothing(t *testing.T) {
	saved := verdicts
	verdicts = checkproc.NewStore(verdictDirName) // nothing cached
	defer func() { verdicts = saved }()
	crd := demoCRD(t)
	hook := "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata: {name: hook}\nwebhooks:\n- name: a.example.com\n  clientConfig: {url: \"https://example.com/a\"}\n  sideEffects: None\n  admissionReviewVersions: [v1]\n- name: b.example.com\n  clientConfig: {url: \"https://example.com/b\"}\n  sideEffects: None\n  admissionReviewVersions: [v1]"

	restore := checkproc.UseExecutable("")
	got := run(t, crd, hook)
	restore()
	wantError(t, got, "CustomResourceDefinition greeters.greeter.example.com and 1 more objects could not be checked as the API server would check them, so nothing is rendered: olm-cmp-check, which makes the checks of the API server and of signatures for olm-cmp, is neither beside olm-cmp nor on PATH: install both (make build, or go install ./cmd/... from the repository)")

	crash := filepath.Join(t.TempDir(), checkproc.Executable)
	if err := os.WriteFile(crash, []byte("#!/bin/sh\necho 'panic: runtime error' >&2\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	restore = checkproc.UseExecutable(crash)
	got = run(t, hook)
	restore()
	wantError(t, got, "MutatingWebhookConfiguration hook could not be checked as the API server would check it, so nothing is rendered: olm-cmp-check stopped before answering (exit status 2): panic: runtime error; install olm-cmp-check from the same build beside olm-cmp (make build installs both), then retry; if it already is, report this line")

	// In process again, the same objects pass.
	if got := run(t, crd, hook); got != "" {
		t.Error(got)
	}
}
