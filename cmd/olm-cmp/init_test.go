package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/badinput"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/initspec"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// initAndRender runs olm-cmp init with args into a new directory, then
// olm-cmp render --strict on it (with extra render arguments), and returns
// the directory and the spec written.
func initAndRender(t *testing.T, dir string, initArgs, renderArgs []string) string {
	t.Helper()
	out, stderr, err := run(t, append([]string{"init", "-d", dir}, initArgs...)...)
	if err != nil {
		t.Fatalf("init: %v (stderr %q)", err, stderr)
	}
	file := filepath.Join(dir, spec.FileName)
	if !strings.HasPrefix(out, "wrote "+file+": ") || stderr != "" {
		t.Errorf("init said %q, stderr %q", out, stderr)
	}
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rendered, stderr, err := run(t, append([]string{"render", "--strict", dir}, renderArgs...)...)
	if err != nil || !strings.Contains(rendered, "kind: Deployment") {
		t.Fatalf("render --strict of the spec init wrote: %v\n%s", err, text)
	}
	if strings.Contains(stderr, "warning:") {
		t.Errorf("render --strict warned: %s", stderr)
	}
	return string(text)
}

// TestInitDir: a bundle directory; a second init refuses, --force replaces.
func TestInitDir(t *testing.T) {
	dir := t.TempDir()
	text := initAndRender(t, dir, []string{"../../examples/demo/bundle", "-n", "greeter-system"}, nil)
	rel, _ := filepath.Rel(dir, mustAbs(t, "../../examples/demo/bundle"))
	for _, want := range []string{"  bundle: " + rel + "\n", "  namespace: greeter-system  # chosen with --namespace\n", "  - cert-manager.io/v1  # TODO:"} {
		if !strings.Contains(text, want) {
			t.Errorf("spec lacks %q:\n%s", want, text)
		}
	}
	file := filepath.Join(dir, spec.FileName)
	_, _, err := run(t, "init", "-d", dir, "../../examples/demo/bundle", "-n", "other")
	if err == nil || err.Error() != file+" exists: init never overwrites a spec; give --force to replace it, or -d another directory" {
		t.Errorf("second init: %v", err)
	}
	if data, _ := os.ReadFile(file); string(data) != text {
		t.Error("a refused init changed the spec")
	}
	if _, _, err := run(t, "init", "-d", dir, "../../examples/demo/bundle", "-n", "other", "--force"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(file); !strings.Contains(string(data), "  namespace: other  #") {
		t.Errorf("--force did not replace the spec:\n%s", data)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("init left more than the spec: %v", entries)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// TestInitImage: an image reference is pinned as resolve --write pins it:
// the repository, the tag as spec.version, spec.digest.
func TestInitImage(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	digest := bundletest.PushDir(t, host, "demo/greeter-bundle", "v0.2.0", "../../examples/demo/bundle")
	dir := t.TempDir()
	text := initAndRender(t, dir, []string{host + "/demo/greeter-bundle:v0.2.0", "--insecure-registry", host}, []string{"--insecure-registry", host})
	// 127.0.0.1:port/… is quoted: it starts like a number.
	want := "  bundle: \"" + host + "/demo/greeter-bundle\"\n  version: \"v0.2.0\"  # a bump changes this line; olm-cmp resolve --write then pins it\n  digest: \"" + digest + "\""
	if !strings.Contains(text, want) {
		t.Errorf("spec lacks\n%s\n---\n%s", want, text)
	}
	// resolve --write finds nothing to change: the pin is its own.
	out, _, err := run(t, "resolve", dir, "--write", "--insecure-registry", host)
	if err != nil || !strings.Contains(out, "is already pinned") {
		t.Errorf("resolve --write after init: %v\n%s", err, out)
	}
	// Without a tag (latest): the digest pins it, no version is invented.
	latest := bundletest.PushDir(t, host, "demo/untagged", "latest", "../../examples/demo/bundle")
	text = initAndRender(t, t.TempDir(), []string{host + "/demo/untagged", "--insecure-registry", host}, []string{"--insecure-registry", host})
	if want := "  bundle: \"" + host + "/demo/untagged\"\n  digest: \"" + latest + "\""; !strings.Contains(text, want) {
		t.Errorf("untagged: spec lacks\n%s\n---\n%s", want, text)
	}
}

// TestInitCatalog: a catalog directory and a package, through the
// in-process registry: the exact version chosen and its bundle's digest.
func TestInitCatalog(t *testing.T) {
	host, cat := catalogFixture(t)
	dir := filepath.Join(cat, "app")
	os.Mkdir(dir, 0o755)
	text := initAndRender(t, dir, []string{"--catalog", filepath.Join(cat, "catalog"), "--package", "greeter-operator", "--version", ">=0.2.0", "--insecure-registry", host},
		[]string{"--insecure-registry", host})
	for _, want := range []string{"  catalog: ../catalog\n", "  package: greeter-operator\n", "  version: \"0.2.0\"  # chosen from the range >=0.2.0;", "  digest: \"sha256:"} {
		if !strings.Contains(text, want) {
			t.Errorf("spec lacks %q:\n%s", want, text)
		}
	}
	// A catalog image: its reference kept as given (its tag may move: the
	// digest pins the bundle chosen), the newest version.
	bundletest.Push(t, host, "demo/catalog", "latest", bundletest.CatalogImage(t, filepath.Join(cat, "catalog"), "/configs"))
	text = initAndRender(t, t.TempDir(), []string{"--catalog", host + "/demo/catalog:latest", "--package", "greeter-operator", "--channel", "stable", "--insecure-registry", host},
		[]string{"--insecure-registry", host})
	for _, want := range []string{"  catalog: \"" + host + "/demo/catalog:latest\"\n", "  channel: stable\n", "  version: \"0.2.0\"  # the newest version;", "  digest: \"sha256:"} {
		if !strings.Contains(text, want) {
			t.Errorf("spec lacks %q:\n%s", want, text)
		}
	}
}

// TestInitTrial is the acceptance trial: init on two real bundles
// the examples do not cover, then render --strict clean on the first try.
func TestInitTrial(t *testing.T) {
	for _, c := range []struct {
		bundle string
		want   []string
	}{
		{"community-kubevirt-hyperconverged-1.18.1", []string{"  namespace: kubevirt-hyperconverged  # the CSV's", `  - "api:*.kubevirt.io"`, "  - cert-manager.io/v1  # TODO:"}},
		{"gitlab-operator-kubernetes-3.3.0", []string{"  namespace: gitlab-system  # the CSV's", "  watchNamespaces: [gitlab-system]  # OwnNamespace", "  - openshift:securitycontextconstraints"}},
	} {
		t.Run(c.bundle, func(t *testing.T) {
			src := filepath.Join("../../../shared/bundles", c.bundle)
			if _, err := os.Stat(src); err != nil {
				t.Skipf("the reference bundles (../shared/bundles) are absent: %v", err)
			}
			text := initAndRender(t, t.TempDir(), []string{src}, nil)
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("spec lacks %q:\n%s", w, text)
				}
			}
			total, todo := initspec.Lines([]byte(text))
			entries := len(regexp.MustCompile(`(?m)^  - `).FindAllString(text, -1))
			t.Logf("%s: init wrote %d lines (%d list entries), %d marked TODO", c.bundle, total, entries, todo)
		})
	}
}

// TestInitExcludeFile: the way past a bundle file that does not load, as
// the load error names it, is written as spec.excludeFiles.
func TestInitExcludeFile(t *testing.T) {
	b := filepath.Join(t.TempDir(), "bundle")
	badinput.CopyDir(t, "../../examples/demo/bundle", b)
	os.WriteFile(filepath.Join(b, "manifests", "junk.yaml"), []byte("kind: [\n"), 0o644)
	text := initAndRender(t, t.TempDir(), []string{b, "--exclude-file", "manifests/junk.yaml"}, nil)
	if !strings.Contains(text, "  excludeFiles: [manifests/junk.yaml]  # skipped unread") {
		t.Errorf("spec lacks excludeFiles:\n%s", text)
	}
}

// TestInitSaysWhatItLeftOut: init names the files of other tools it left
// out of the extra manifests, in one line after the one saying what it wrote.
func TestInitSaysWhatItLeftOut(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "application.yaml"), []byte("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: demo}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources: [application.yaml]\n"), 0o644)
	out, stderr, err := run(t, "init", "-d", dir, "../../examples/demo/bundle", "-n", "demo")
	if err != nil {
		t.Fatalf("init: %v (stderr %q)", err, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	want := "left out of the extra manifests, as other tools' files (spec.extraManifests.exclude; remove an entry to render that file): application.yaml (an Argo CD Application), kustomization.yaml (a kustomization)"
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "wrote ") || lines[1] != want || stderr != "" {
		t.Errorf("init said %q, stderr %q; want its second line %q", out, stderr, want)
	}
}

// TestInitWarnsOutsideRepository: in a Git repository (a .git directory,
// or the .git file of a worktree), a bundle directory outside it gets one
// warning line on stderr; the spec is still written.
func TestInitWarnsOutsideRepository(t *testing.T) {
	for _, asFile := range []bool{false, true} {
		repo := t.TempDir()
		if asFile {
			os.WriteFile(filepath.Join(repo, ".git"), []byte("gitdir: /elsewhere\n"), 0o644)
		} else {
			os.Mkdir(filepath.Join(repo, ".git"), 0o755)
		}
		out, stderr, err := run(t, "init", "-d", repo, "../../examples/demo/bundle", "-n", "demo")
		if err != nil || !strings.HasPrefix(out, "wrote ") {
			t.Fatalf("init: %v, %q", err, out)
		}
		rel, _ := filepath.Rel(repo, mustAbs(t, "../../examples/demo/bundle"))
		want := `warning: spec.bundle "` + rel + `": the bundle directory must be inside the repository (the Git repository of ` + repo + ` is ` + repo + `): olm-cmp render takes it, Argo CD's plugin will refuse it; copy the directory into the repository, or name the bundle's image instead` + "\n"
		if stderr != want {
			t.Errorf(".git a file %v: stderr %q, want %q", asFile, stderr, want)
		}
	}
}
