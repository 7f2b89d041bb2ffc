package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestRenderWarnsOfEntriesMatchingNothing: a spec entry that matches nothing
// is a warning on stderr (the render succeeds); --strict makes it an error,
// one line per entry, and writes nothing to stdout.
func TestRenderWarnsOfEntriesMatchingNothing(t *testing.T) {
	const warning = `warning: exclude "Deploymnet" matched no object; did you mean Deployment?`
	out, stderr, err := run(t, "render", "../../examples/demo", "--exclude", "Deploymnet")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "kind: Deployment") {
		t.Error("the render lacks the Deployment")
	}
	if !strings.Contains(stderr, warning+"\n") {
		t.Errorf("stderr lacks %q:\n%s", warning, stderr)
	}
	out, _, err = run(t, "render", "../../examples/demo", "--exclude", "Deploymnet", "--strict")
	if err == nil {
		t.Fatal("--strict rendered")
	}
	if out != "" {
		t.Errorf("a failed render wrote %d bytes to stdout", len(out))
	}
	if first := strings.Split(err.Error(), "\n")[0]; first != `strict: exclude "Deploymnet" matched no object; did you mean Deployment?` {
		t.Errorf("error:\n%v", err)
	}
}

// An entry the file wrote names its file and line under --strict, as the
// spec's other errors do (the one above came from a flag: no line).
func TestRenderStrictEntryNamesItsLine(t *testing.T) {
	dir := demoCopy(t)
	path := dir + "/olm-cmp.yaml"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, "  exclude:\n  - Deploymnet\n"...)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	line := strings.Count(string(b), "\n")
	_, _, err = run(t, "render", dir, "--strict")
	want := fmt.Sprintf(`%s: line %d: strict: exclude "Deploymnet" matched no object; did you mean Deployment?`, path, line)
	if err == nil || strings.Split(err.Error(), "\n")[0] != want {
		t.Errorf("want %s\ngot %v", want, err)
	}
}

// Without --strict, the same entry is a warning, and names its line too.
func TestRenderWarningNamesItsLine(t *testing.T) {
	dir := demoCopy(t)
	path := dir + "/olm-cmp.yaml"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, "  exclude:\n  - Deploymnet\n"...)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	line := strings.Count(string(b), "\n")
	_, stderr, err := run(t, "render", dir)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("warning: %s: line %d: exclude \"Deploymnet\" matched no object; did you mean Deployment?\n", path, line)
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %s:\n%s", want, stderr)
	}
}
