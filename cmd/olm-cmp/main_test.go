package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// runPanicking runs command name of the real command tree with its RunE
// replaced by one that panics as a nil-map bug would, and returns what the
// process would print and its exit status.
func runPanicking(t *testing.T, name string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	c, _, err := root.Find([]string{name})
	if err != nil || c.Name() != name {
		t.Fatalf("no %s command: %v", name, err)
	}
	c.RunE = func(*cobra.Command, []string) error {
		var m map[string]int
		m["x"]++
		return nil
	}
	root.SetArgs(append([]string{name}, args...))
	cmd, err := execute(root)
	code = exitStatus(cmd, err, &errOut)
	return out.String(), errOut.String(), code
}

// TestPanicExitsWithTheFailureStatus: a panic in a command is one line on
// stderr and the command's failure status (diff's 3, "could not render";
// 1 elsewhere), never Go's 2, which diff documents as a safety finding.
func TestPanicExitsWithTheFailureStatus(t *testing.T) {
	t.Setenv(EnvDebug, "")
	for _, c := range []struct {
		command string
		args    []string
		code    int
	}{
		{"diff", []string{"a", "b"}, diffRenderError},
		{"render", nil, 1},
		{"generate", nil, 1},
		{"serve", nil, 1},
	} {
		out, stderr, code := runPanicking(t, c.command, c.args...)
		want := "error: internal error in olm-cmp " + c.command + ": assignment to entry in nil map: please report it at https://github.com/olm-cmp/olm-cmp/issues with the olm-cmp version (olm-cmp version) and the input that caused it (OLM_CMP_DEBUG=1 prints the stack trace)\n"
		if code != c.code || out != "" || stderr != want {
			t.Errorf("%s: exit %d (want %d), stdout %q, stderr %q", c.command, code, c.code, out, stderr)
		}
	}
}

// TestPanicStackWithDebug: OLM_CMP_DEBUG=1 adds the stack trace on stderr,
// below the message and marked as such; stdout stays empty.
func TestPanicStackWithDebug(t *testing.T) {
	t.Setenv(EnvDebug, "1")
	out, stderr, code := runPanicking(t, "render")
	first, rest, _ := strings.Cut(stderr, "\n")
	if code != 1 || out != "" || !strings.HasPrefix(first, "error: internal error in olm-cmp render: ") ||
		!strings.HasPrefix(rest, "--- stack trace (OLM_CMP_DEBUG=1) ---\ngoroutine ") || !strings.Contains(rest, "main_test.go") {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, out, stderr)
	}
}

// TestErrorsAreEscaped: an error that quotes bundle content reaches the
// terminal without its control characters; its problems stay one per line.
func TestErrorsAreEscaped(t *testing.T) {
	var stderr bytes.Buffer
	code := exitStatus(nil, errors.New("object \"x\x1b[2J\": bad\nobject \"y\x07\": bad"), &stderr)
	if want := "error: object \"x\\x1b[2J\": bad\nobject \"y\\a\": bad\n"; code != 1 || stderr.String() != want {
		t.Errorf("exit %d, stderr %q, want %q", code, stderr.String(), want)
	}
}
