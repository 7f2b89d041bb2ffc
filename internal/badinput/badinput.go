// Package badinput serves the bad-input corpus in test/testdata/bad to the
// tests of every channel a user's repository reaches olm-cmp through: the
// CLI (cmd/olm-cmp) and the Argo CD plugin stream (internal/cmpserver). Both
// lay a case over the same copy of examples/demo and compare with the same
// golden error, so a message is reviewed once and holds everywhere.
//
// Only tests import it.
package badinput

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Case is one static case: a directory of test/testdata/bad.
type Case struct {
	// Name is the directory's name.
	Name string
	// Dir is the case's directory.
	Dir string
}

// Cases lists the static cases under corpus (test/testdata/bad).
func Cases(t testing.TB, corpus string) []Case {
	t.Helper()
	entries, err := os.ReadDir(corpus)
	if err != nil {
		t.Fatal(err)
	}
	var cases []Case
	for _, e := range entries {
		if e.IsDir() {
			cases = append(cases, Case{Name: e.Name(), Dir: filepath.Join(corpus, e.Name())})
		}
	}
	return cases
}

// Want is the case's expected error: error.txt without its final newline,
// with $DIR standing for the application's directory.
func (c Case) Want(t testing.TB) string {
	t.Helper()
	want, err := os.ReadFile(c.Golden())
	if err != nil {
		t.Fatalf("%v (run the CLI's TestBadInput with -update to create it)", err)
	}
	return strings.TrimSuffix(string(want), "\n")
}

// WantPlugin is the case's expected error through the plugin:
// plugin-error.txt when the case has one (the plugin bounds paths to the
// repository, the CLI trusts its filesystem, so a path outside the
// repository reads differently), else Want.
func (c Case) WantPlugin(t testing.TB) string {
	t.Helper()
	if want, err := os.ReadFile(filepath.Join(c.Dir, "plugin-error.txt")); err == nil {
		return strings.TrimSuffix(string(want), "\n")
	}
	return c.Want(t)
}

// Golden is the path of the case's error.txt.
func (c Case) Golden() string { return filepath.Join(c.Dir, "error.txt") }

// Prepare copies base (examples/demo) to dst and lays the case over it.
func (c Case) Prepare(t testing.TB, base, dst string) {
	t.Helper()
	CopyDir(t, base, dst)
	Overlay(t, c.Dir, dst)
}

// Overlay lays src's files over dst and deletes what src/remove lists;
// error.txt and plugin-error.txt are the case's goldens, not part of the
// repository.
func Overlay(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		switch rel {
		case "error.txt", "plugin-error.txt":
			return nil
		case "remove":
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, r := range strings.Fields(string(data)) {
				if err := os.Remove(filepath.Join(dst, r)); err != nil {
					return err
				}
			}
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// CopyDir copies the regular files and directories of src to dst.
func CopyDir(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
