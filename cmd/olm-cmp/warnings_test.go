package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/badinput"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
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

// TestUpgradeEdgeSelfCertifiedWarning: with spec.upgradeConstraintPolicy
// SelfCertified, an upgradeFrom the CSVs give no edge to renders, and the
// terminal shows one warning line saying why, with "warning:" once; the
// default, CatalogProvided, refuses the same render.
func TestUpgradeEdgeSelfCertifiedWarning(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "app")
	badinput.CopyDir(t, "../../examples/demo", dir)
	host, _ := bundletest.NewRegistry(t)
	bundletest.PushDemoVersion(t, host, filepath.Join(dir, "bundle"), "0.0.1", "greeter-operator.v0.0.0")
	bundletest.PushDemoVersion(t, host, filepath.Join(dir, "bundle"), "0.2.0", "greeter-operator.v0.1.0")
	doc := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: greeter-operator}\nspec:\n  bundle: " + host + "/demo/greeter-bundle:v0.2.0\n  namespace: greeter-system\n  upgradeFrom: v0.0.1\n"
	const edge = "no upgrade edge from greeter-operator.v0.0.1 to greeter-operator.v0.2.0: greeter-operator.v0.2.0 replaces greeter-operator.v0.1.0, skips (none) and has olm.skipRange (none), none of which includes greeter-operator.v0.0.1 (0.0.1)"

	os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), []byte(doc), 0o644)
	if out, _, err := run(t, "render", dir, "--insecure-registry", host); err == nil || out != "" || !strings.Contains(err.Error(), edge+"; OLM v1's default upgradeConstraintPolicy, CatalogProvided, refuses it: ") {
		t.Errorf("CatalogProvided: rendered %d bytes, error %v", len(out), err)
	}

	os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), []byte(doc+"  upgradeConstraintPolicy: SelfCertified\n"), 0o644)
	out, stderr, err := run(t, "render", dir, "--insecure-registry", host)
	if err != nil || out == "" {
		t.Fatalf("SelfCertified: %v", err)
	}
	want := "warning: the upgrade from greeter-operator.v0.0.1 to greeter-operator.v0.2.0: upgradeEdge: " + edge + "; allowed as spec.upgradeConstraintPolicy is SelfCertified (you have checked this upgrade yourself; OLM v1 installs it then too)\n"
	if !strings.Contains(stderr, want) || strings.Count(stderr, "upgradeEdge") != 1 {
		t.Errorf("stderr:\n%s\nwant the line:\n%s", stderr, want)
	}
}
