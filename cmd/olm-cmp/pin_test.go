package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
)

const demoBundle = "../../examples/demo/bundle"

// pinnedSpec writes an olm-cmp.yaml naming host's demo bundle at version.
func pinnedSpec(t *testing.T, host, version string) (dir, file string) {
	t.Helper()
	dir = t.TempDir()
	file = filepath.Join(dir, "olm-cmp.yaml")
	doc := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata:\n  name: greeter\nspec:\n  bundle: " + host + "/demo/greeter-bundle\n  version: " + version + "  # bump me\n  namespace: greeter-system\n"
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, file
}

func setVersion(t *testing.T, file, from, to string) {
	t.Helper()
	data, _ := os.ReadFile(file)
	if !strings.Contains(string(data), "version: "+from) {
		t.Fatalf("%s has no version %s:\n%s", file, from, data)
	}
	os.WriteFile(file, []byte(strings.Replace(string(data), "version: "+from, "version: "+to, 1)), 0o644)
}

// TestPinBumpAndMovedTag: resolve --write keeps spec.version and pins
// spec.digest beside it; a bump of the version alone, and a tag pushed
// again, are errors naming both digests and the fix, never a render of
// either image.
func TestPinBumpAndMovedTag(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	old := bundletest.PushDemoVersion(t, host, demoBundle, "0.10.2", "greeter-operator.v0.10.1")
	newer := bundletest.PushDemoVersion(t, host, demoBundle, "0.11.0", "greeter-operator.v0.10.2")
	dir, file := pinnedSpec(t, host, "v0.10.2")
	repo := host + "/demo/greeter-bundle"

	out, stderr, code := runStatus(t, "resolve", dir, "--write", "--insecure-registry", host)
	if code != 0 || !strings.Contains(out, "pinned "+file) {
		t.Fatalf("resolve --write: %d\n%s%s", code, out, stderr)
	}
	written, _ := os.ReadFile(file)
	want := "  bundle: " + repo + "\n  version: v0.10.2  # bump me\n  digest: \"" + old + "\"\n  namespace: greeter-system\n"
	if !strings.HasSuffix(string(written), want) {
		t.Fatalf("pinned file:\n%s\nwant it to end with:\n%s", written, want)
	}

	// The bump: one line changed, the pin left behind.
	setVersion(t, file, "v0.10.2", "v0.11.0")
	_, stderr, code = runStatus(t, "render", dir, "--insecure-registry", host)
	wantErr := "spec.version is v0.11.0 but spec.digest pins 0.10.2 (" + old + "); " + repo + ":v0.11.0 is " + newer + ": run olm-cmp resolve --write to pin it, or delete the digest line"
	if code == 0 || !strings.Contains(stderr, wantErr) {
		t.Errorf("render of a bumped version with the old pin: status %d, stderr:\n%s\nwant:\n%s", code, stderr, wantErr)
	}
	// resolve --write pins the bump; the render follows.
	if out, stderr, code := runStatus(t, "resolve", dir, "--write", "--insecure-registry", host); code != 0 {
		t.Fatalf("resolve --write after the bump: %d\n%s%s", code, out, stderr)
	}
	if got, _ := os.ReadFile(file); !strings.Contains(string(got), "digest: \""+newer+"\"") || strings.Count(string(got), "digest:") != 1 {
		t.Errorf("the pin did not move to %s:\n%s", newer, got)
	}
	if out, stderr, code := runStatus(t, "render", dir, "--insecure-registry", host); code != 0 || !strings.Contains(out, "greeter-operator@0.11.0") {
		t.Errorf("render after resolve --write: %d\n%s", code, stderr)
	}

	// The tag moved: 0.11.0 pushed again with other content.
	moved := bundletest.PushDemoVersion(t, host, demoBundle, "0.11.0", "greeter-operator.v0.10.1")
	_, stderr, code = runStatus(t, "render", dir, "--insecure-registry", host)
	wantErr = "spec.digest pins " + newer + " (0.11.0), but the tag " + repo + ":v0.11.0 now points to " + moved + ": the tag moved since it was pinned; review the new image (olm-cmp diff --to-bundle " + repo + ":v0.11.0), then run olm-cmp resolve --write to pin it, or delete the version line to keep the pinned one"
	if code == 0 || !strings.Contains(stderr, wantErr) {
		t.Errorf("render after the tag moved: status %d, stderr:\n%s\nwant:\n%s", code, stderr, wantErr)
	}
}

// TestPinInReference: a reference written repo:tag@sha256:… (what resolve
// --write wrote before spec.digest) is checked the same way, and resolve
// --write moves it to spec.version and spec.digest.
func TestPinInReference(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	old := bundletest.PushDemoVersion(t, host, demoBundle, "0.10.2", "greeter-operator.v0.10.1")
	repo := host + "/demo/greeter-bundle"
	dir := t.TempDir()
	file := filepath.Join(dir, "olm-cmp.yaml")
	os.WriteFile(file, []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: "+repo+":v0.10.2@"+old+"\n  namespace: greeter-system\n"), 0o644)
	if _, stderr, code := runStatus(t, "render", dir, "--insecure-registry", host); code != 0 {
		t.Fatalf("render of a tag@digest that still agree: %d %s", code, stderr)
	}
	moved := bundletest.PushDemoVersion(t, host, demoBundle, "0.10.2", "greeter-operator.v0.10.0")
	_, stderr, code := runStatus(t, "render", dir, "--insecure-registry", host)
	wantErr := "spec.bundle pins " + old + " (0.10.2), but the tag " + repo + ":v0.10.2 now points to " + moved + ": the tag moved since it was pinned; review the new image (olm-cmp diff --to-bundle " + repo + ":v0.10.2), then run olm-cmp resolve --write to pin it, or drop the tag (" + repo + "@" + old + ") to keep the pinned one"
	if code == 0 || !strings.Contains(stderr, wantErr) {
		t.Errorf("moved tag in the reference: status %d\n%s\nwant:\n%s", code, stderr, wantErr)
	}
	if out, stderr, code := runStatus(t, "resolve", dir, "--write", "--insecure-registry", host); code != 0 {
		t.Fatalf("resolve --write: %d\n%s%s", code, out, stderr)
	}
	got, _ := os.ReadFile(file)
	if want := "spec:\n  bundle: " + repo + "\n  version: \"v0.10.2\"\n  digest: \"" + moved + "\"\n  namespace: greeter-system\n"; !strings.HasSuffix(string(got), want) {
		t.Errorf("resolve --write of a tag@digest reference:\n%s\nwant it to end with:\n%s", got, want)
	}
}

// TestPinAndVersionParameter: the plugin's version parameter (here through
// generate, the classic mode) and a pinned olm-cmp.yaml agree when the
// version is the pinned one, and refuse each other clearly when not.
func TestPinAndVersionParameter(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	old := bundletest.PushDemoVersion(t, host, demoBundle, "0.10.2", "greeter-operator.v0.10.1")
	newer := bundletest.PushDemoVersion(t, host, demoBundle, "0.11.0", "greeter-operator.v0.10.2")
	t.Setenv("OLM_CMP_INSECURE_REGISTRIES", host)
	for _, form := range []struct{ name, spec string }{
		{"spec.digest", "  bundle: " + host + "/demo/greeter-bundle\n  version: v0.10.2\n  digest: " + old + "\n"},
		{"tag@digest", "  bundle: " + host + "/demo/greeter-bundle:v0.10.2@" + old + "\n"},
		{"digest alone", "  bundle: " + host + "/demo/greeter-bundle@" + old + "\n"},
	} {
		t.Run(form.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n"+form.spec+"  namespace: greeter-system\n"), 0o644)
			t.Setenv("ARGOCD_APP_PARAMETERS", `[{"name":"version","string":"v0.10.2"}]`)
			if out, stderr, err := run(t, "generate", dir); err != nil || !strings.Contains(out, "greeter-operator@0.10.2") {
				t.Errorf("version parameter equal to the pin: %v\n%s", err, stderr)
			}
			t.Setenv("ARGOCD_APP_PARAMETERS", `[{"name":"version","string":"v0.11.0"}]`)
			out, _, err := run(t, "generate", dir)
			want := "spec.version is v0.11.0 but " + map[bool]string{true: "spec.digest", false: "spec.bundle"}[form.name == "spec.digest"] + " pins 0.10.2 (" + old + "); " + host + "/demo/greeter-bundle:v0.11.0 is " + newer
			if form.name == "tag@digest" {
				want = "spec.version is v0.11.0 but spec.bundle \"" + host + "/demo/greeter-bundle:v0.10.2@" + old + "\" is pinned to its tag v0.10.2"
			}
			if err == nil || out != "" || !strings.Contains(err.Error(), want) {
				t.Errorf("version parameter other than the pin: %v\nwant: %s", err, want)
			}
			// The ApplicationSet way: version and digest parameters together.
			t.Setenv("ARGOCD_APP_PARAMETERS", `[{"name":"version","string":"v0.11.0"},{"name":"digest","string":"`+newer+`"}]`)
			out, stderr, err := run(t, "generate", dir)
			if form.name == "spec.digest" && (err != nil || !strings.Contains(out, "greeter-operator@0.11.0")) {
				t.Errorf("version and digest parameters: %v\n%s", err, stderr)
			}
		})
	}
}

// TestResolveWritesThroughSymlink: a symlinked olm-cmp.yaml (one spec shared
// by several directories) is pinned in its target; the link stays a link.
func TestResolveWritesThroughSymlink(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	d := bundletest.PushDemoVersion(t, host, demoBundle, "0.10.2", "greeter-operator.v0.10.1")
	shared, target := pinnedSpec(t, host, "v0.10.2")
	os.WriteFile(target, []byte(strings.ReplaceAll(mustRead(t, target), "\n", "\r\n")), 0o644)
	dir := t.TempDir()
	link := filepath.Join(dir, "olm-cmp.yaml")
	if err := os.Symlink(filepath.Join(shared, "olm-cmp.yaml"), link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	out, stderr, code := runStatus(t, "resolve", dir, "--write", "--insecure-registry", host)
	if code != 0 || !strings.Contains(out, "pinned "+link+" (in "+target) {
		t.Fatalf("resolve --write through a link: %d\n%s%s", code, out, stderr)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced by a file")
	}
	got := mustRead(t, target)
	if !strings.Contains(got, "  digest: \""+d+"\"\r\n") || strings.Count(got, "\n") != strings.Count(got, "\r\n") {
		t.Errorf("target not pinned, or line endings mixed:\n%q", got)
	}
}

func mustRead(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
