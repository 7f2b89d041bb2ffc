package main

import (
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
