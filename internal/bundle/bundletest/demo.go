package bundletest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// PushDemoVersion pushes the demo bundle (examples/demo/bundle, at
// demoBundleDir) as version v of the image host/demo/greeter-bundle, tag
// "v"+v: its CSV renamed greeter-operator.v<v>, its version v, its replaces
// set to replaces, and crdEdits (old, new pairs, each replaced once) applied
// to its CRD. It returns the image's digest. Upgrade tests build their
// version histories with it, so every package's history has the same shape.
func PushDemoVersion(t testing.TB, host, demoBundleDir, v, replaces string, crdEdits ...string) string {
	t.Helper()
	return PushDemoVersionTo(t, host, "demo/greeter-bundle", demoBundleDir, v, replaces, crdEdits...)
}

// PushDemoVersionTo is PushDemoVersion into the repository repo of host.
func PushDemoVersionTo(t testing.TB, host, repo, demoBundleDir, v, replaces string, crdEdits ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := os.CopyFS(dir, os.DirFS(demoBundleDir)); err != nil {
		t.Fatal(err)
	}
	edit := func(file string, pairs ...string) {
		path := filepath.Join(dir, "manifests", file)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out := string(data)
		for i := 0; i+1 < len(pairs); i += 2 {
			if !strings.Contains(out, pairs[i]) {
				t.Fatalf("the demo's %s lacks %q: update the caller's edits", file, pairs[i])
			}
			out = strings.Replace(out, pairs[i], pairs[i+1], 1)
		}
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit("greeter-operator.clusterserviceversion.yaml",
		"name: greeter-operator.v0.2.0", "name: greeter-operator.v"+v,
		"version: 0.2.0", "version: "+v,
		"replaces: greeter-operator.v0.1.0", "replaces: "+replaces)
	edit("greeter.example.com_greeters.yaml", crdEdits...)
	return PushDir(t, host, repo, "v"+v, dir)
}
