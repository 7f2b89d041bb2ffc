package validate

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var diskTestRuns int

// A verdict kept on disk is what the next process reads instead of checking
// the CRD again; one that is not a verdict is ignored and written anew.
func TestCRDVerdictKeptOnDisk(t *testing.T) {
	cache := t.TempDir()
	KeepVerdicts(cache)
	defer KeepVerdicts("")
	// A default no other test or run used, so no verdict is in memory.
	diskTestRuns++
	crd := broken(t, "                default: 1\n", "                default: [1"+strconv.Itoa(diskTestRuns)+"]\n")
	k, ok := (&crdScratch{}).crdKey(yaml.MustParse(crd))
	if !ok {
		t.Fatal("no key")
	}
	file := filepath.Join(cache, verdictDirName, verdictBuild(), hex.EncodeToString(k[:]))

	first := run(t, crd)
	if !strings.Contains(first, "must be of type integer") {
		t.Fatalf("the broken CRD passes: %q", first)
	}
	if got, ok := loadVerdict(k); !ok || len(got) != 1 || !strings.Contains(first, got[0]) {
		t.Fatalf("verdict on disk %q (%v), the render said %q", got, ok, first)
	}

	// A new process: nothing in memory, the file read back.
	crdVerdicts.Remove(k)
	if err := os.WriteFile(file, []byte(`{"problems":["planted by the test"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := run(t, crd); !strings.Contains(got, "planted by the test") {
		t.Errorf("the verdict on disk was not read: %q", got)
	}

	// JSON that decodes to "no problems" but is not what storeVerdict writes
	// (the broken CRD would pass on it) counts as junk too
	for _, junk := range []string{"not json", `{"problems":[` + strings.Repeat(`"x",`, maxVerdictLines) + `"x"]}`,
		"null", "{}", `{"PROBLEMS":[]}`, `{"problems":[],"x":1}`, `{"problems": []}`} {
		crdVerdicts.Remove(k)
		if err := os.WriteFile(file, []byte(junk), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := run(t, crd); got != first {
			t.Errorf("with %.20q on disk: %q, want the check's %q", junk, got, first)
		}
		if got, ok := loadVerdict(k); !ok || !strings.Contains(first, got[0]) {
			t.Errorf("with %.20q on disk, the check's verdict was not written back: %q", junk, got)
		}
	}
}

// A build's first verdict clears the verdicts of all but the builds written
// last, never anything else in the directory.
func TestCRDVerdictsOfOldBuildsCleared(t *testing.T) {
	cache := t.TempDir()
	root := filepath.Join(cache, verdictDirName)
	var builds []string
	now := time.Now()
	for i := range keptBuilds + 1 {
		d := filepath.Join(root, strings.Repeat(strconv.Itoa(i), 32))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		// builds[0] written last, builds[keptBuilds] first.
		if err := os.Chtimes(d, now, now.Add(-time.Duration(i)*time.Hour)); err != nil {
			t.Fatal(err)
		}
		builds = append(builds, d)
	}
	other := filepath.Join(root, "not-a-build")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	KeepVerdicts(cache)
	defer KeepVerdicts("")
	var k [32]byte
	k[0] = 1
	storeVerdict(k, nil)
	if got, ok := loadVerdict(k); !ok || got != nil {
		t.Errorf("a verdict of no problems read back as %q (%v)", got, ok)
	}
	for i, d := range builds {
		_, err := os.Stat(d)
		if kept := i < keptBuilds-1; kept != (err == nil) {
			t.Errorf("build written %d hours ago: kept %v, want %v", i, err == nil, kept)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a directory that is not a build's was removed: %v", err)
	}
}

// Past maxVerdictFiles files in this build's directory, verdicts stay in
// memory: a stream of new CRD contents cannot fill the cache volume.
func TestCRDVerdictFilesBounded(t *testing.T) {
	cache := t.TempDir()
	KeepVerdicts(cache)
	defer KeepVerdicts("")
	verdictFiles.once.Do(func() {})
	saved := verdictFiles.n.Load()
	defer verdictFiles.n.Store(saved)
	var a, b [32]byte
	a[0], b[0] = 1, 2
	verdictFiles.n.Store(maxVerdictFiles - 1)
	storeVerdict(a, []string{"one"})
	storeVerdict(b, []string{"two"})
	if _, ok := loadVerdict(a); !ok {
		t.Errorf("the last verdict within the bound was not kept")
	}
	if _, ok := loadVerdict(b); ok {
		t.Errorf("a verdict past %d files was written", maxVerdictFiles)
	}
}
