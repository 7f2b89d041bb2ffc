package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReloading: the value follows its file and the files it read: an
// unchanged set is not loaded again, a change (of the file, or of a file
// the value named) is the next Get's, a load that fails fails every Get
// until fixed, never falling back to the old value.
func TestReloading(t *testing.T) {
	dir := t.TempDir()
	main, other := filepath.Join(dir, "policy"), filepath.Join(dir, "key")
	write := func(f, text string) {
		t.Helper()
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(main, "key\n")
	write(other, "one")
	loads := 0
	// The policy file names another file; the value is that file's text.
	load := func(path string) (string, error) {
		loads++
		name, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		if strings.TrimSpace(string(name)) == "" {
			return "", errors.New("policy: empty")
		}
		v, err := os.ReadFile(filepath.Join(dir, strings.TrimSpace(string(name))))
		return string(v), err
	}
	files := func(string) []string { return []string{other} }
	r, err := NewReloading(main, load, files)
	if err != nil {
		t.Fatal(err)
	}
	get := func() (string, error) { t.Helper(); return r.Getter()() }
	// The first load read a file not yet stamped: it was loaded again with
	// that file stamped, and is not loaded a third time.
	n := loads
	if v, err := get(); v != "one" || err != nil || loads != n {
		t.Fatalf("first: %q, %v after %d more loads, want one after none", v, err, loads-n)
	}
	write(other, "two")
	if v, err := get(); v != "two" || err != nil {
		t.Errorf("a file the value read changed: %q, %v", v, err)
	}
	n = loads
	if v, _ := get(); v != "two" || loads != n {
		t.Errorf("nothing changed: %q after %d more loads", v, loads-n)
	}
	write(main, "\n")
	if v, err := get(); err == nil {
		t.Errorf("broken file: %q, no error", v)
	}
	if _, err := get(); err == nil {
		t.Error("broken file, asked again: no error (fell back to the old value)")
	}
	write(main, "key\n")
	if v, err := get(); v != "two" || err != nil {
		t.Errorf("fixed: %q, %v", v, err)
	}
	if _, err := NewReloading(filepath.Join(dir, "absent"), load, files); err == nil {
		t.Error("a first load that fails: no error")
	}
	var none *Reloading[string]
	if none.Getter() != nil {
		t.Error("nil Reloading: Getter is not nil")
	}
	if StampAll([]string{main, filepath.Join(dir, "absent")}) != "" {
		t.Error("StampAll of a missing file is not empty")
	}
}
