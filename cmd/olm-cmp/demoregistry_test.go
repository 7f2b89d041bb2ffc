package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/demoregistry"
)

// TestDemoRegistry: the registry hack/demoregistry serves (internal/
// demoregistry, here on an in-process registry) answers the README's
// offline walk: versions of the bundle repository and of the catalog, init
// --catalog (the newest is a pre-release, and init says so), resolve and
// upgrade of the spec init wrote. Its images are the same on every push.
func TestDemoRegistry(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	pushed, err := demoregistry.Populate(host, "../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(pushed) != 5 || pushed[4] != host+"/olm-cmp/greeter-catalog:latest" {
		t.Fatalf("pushed %v", pushed)
	}
	insecure := []string{"--insecure-registry", host}
	cmd := func(args ...string) string {
		t.Helper()
		out, stderr, err := run(t, append(args, insecure...)...)
		if err != nil {
			t.Fatalf("olm-cmp %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return out
	}
	out := cmd("versions", host+"/olm-cmp/greeter-operator-bundle")
	if !strings.Contains(out, "4 semantic version tags") || !strings.Contains(out, "v0.3.0-rc.1") {
		t.Errorf("versions REF:\n%s", out)
	}
	catalog := host + "/olm-cmp/greeter-catalog:latest"
	if out := cmd("versions", "--catalog", catalog, "--package", "greeter-operator"); !strings.Contains(out, "channel stable: head greeter-operator.v0.2.0") {
		t.Errorf("versions --catalog:\n%s", out)
	}
	newest := t.TempDir()
	cmd("init", "--catalog", catalog, "--package", "greeter-operator", "-d", newest, "-n", "demo")
	if text := readText(t, filepath.Join(newest, "olm-cmp.yaml")); !strings.Contains(text, `  version: "0.3.0-rc.1"  # the newest version, a pre-release`) {
		t.Errorf("init --catalog without a range:\n%s", text)
	}
	app := t.TempDir()
	cmd("init", "--catalog", catalog, "--package", "greeter-operator", "--version", "0.1.x", "-d", app, "-n", "demo")
	if out := cmd("resolve", app); !strings.Contains(out, "version: 0.1.0\n") {
		t.Errorf("resolve:\n%s", out)
	}
	out, _, err = run(t, append([]string{"upgrade", app}, insecure...)...)
	if !strings.Contains(out, "  chosen      0.2.0 (sha256:") {
		t.Errorf("upgrade: %v\n%s", err, out)
	}
	// A second registry gets the same images.
	other, _ := bundletest.NewRegistry(t)
	if _, err := demoregistry.Populate(other, "../.."); err != nil {
		t.Fatal(err)
	}
	digest := func(h string) string {
		t.Helper()
		dir := t.TempDir()
		cmd("init", h+"/olm-cmp/greeter-operator-bundle:v0.2.0", "-d", dir, "-n", "x", "--insecure-registry", h)
		_, d, _ := strings.Cut(readText(t, filepath.Join(dir, "olm-cmp.yaml")), "\n  digest: ")
		d, _, _ = strings.Cut(d, " ")
		return d
	}
	if a, b := digest(host), digest(other); !strings.HasPrefix(a, `"sha256:`) || a != b {
		t.Errorf("two pushes, two digests: %s, %s", a, b)
	}
}

func readText(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
