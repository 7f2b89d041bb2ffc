package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/badinput"
)

// TestWarningsFromBundleContentAreEscaped: a requirement warning that
// quotes bundle content (the CSV's console-plugins annotation, here holding
// a clear-screen ESC sequence, a BEL and a newline) reaches the terminal with
// those characters escaped, one line per warning.
func TestWarningsFromBundleContentAreEscaped(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "app")
	badinput.CopyDir(t, "../../examples/demo", dir)
	csv := filepath.Join(dir, "bundle/manifests/greeter-operator.clusterserviceversion.yaml")
	data, err := os.ReadFile(csv)
	if err != nil {
		t.Fatal(err)
	}
	hostile := strings.Replace(string(data), "    capabilities: Basic Install\n",
		"    capabilities: Basic Install\n    console.openshift.io/plugins: \"[\\\"\\e[2J\\e]0;owned\\a\\\"]\\nwarning: forged line\"\n", 1)
	if hostile == string(data) {
		t.Fatal("the demo CSV changed: no annotations to extend")
	}
	os.WriteFile(csv, []byte(hostile), 0o644)
	_, stderr, err := run(t, "render", dir)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(stderr, "\x1b\x07") {
		t.Errorf("control characters reached the terminal: %q", stderr)
	}
	want := `OLM on OpenShift enables the console plugins ["\x1b[2J\x1b]0;owned\a"]\nwarning: forged line; there is no OpenShift console to show them`
	var found bool
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, want) {
			found = strings.HasPrefix(line, "warning: requirement ")
		}
		if strings.HasPrefix(line, "warning: forged line") {
			t.Errorf("a newline in bundle content forged a warning line: %q", stderr)
		}
	}
	if !found {
		t.Errorf("no escaped warning %q in:\n%s", want, stderr)
	}
}
