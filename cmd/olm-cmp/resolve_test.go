package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
)

// keyOrder returns the keys a YAML document's lines start with, comments
// included, to compare a file's layout before and after --write.
func keyOrder(doc string) []string {
	var out []string
	for _, l := range strings.Split(doc, "\n") {
		k, _, _ := strings.Cut(strings.TrimSpace(l), ":")
		if k != "" && k != "digest" {
			out = append(out, k)
		}
	}
	return out
}

func TestResolveImage(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	digest := bundletest.PushDir(t, host, "demo/greeter-bundle", "v0.2.0", "../../examples/demo/bundle")
	dir := t.TempDir()
	specFile := filepath.Join(dir, "olm-cmp.yaml")
	doc := `# Greeter: a comment resolve must keep.
apiVersion: olm-cmp.dev/v1alpha1
kind: OperatorBundle
metadata:
  name: greeter   # trailing comment
spec:
  bundle: ` + host + `/demo/greeter-bundle   # the upstream image
  version: v0.2.0

  namespace: greeter-system  # install here
  imagePullSecrets: [pull]
`
	os.WriteFile(specFile, []byte(doc), 0o640)
	pinned := host + "/demo/greeter-bundle@" + digest

	out, stderr, code := runStatus(t, "resolve", dir, "--insecure-registry", host)
	if code != 0 || out != "bundle:  "+pinned+"\n" {
		t.Fatalf("resolve: status %d, stdout %q, stderr %s", code, out, stderr)
	}
	out, stderr, code = runStatus(t, "resolve", dir, "--write", "--insecure-registry", host)
	if code != 0 || !strings.Contains(out, "pinned "+specFile) {
		t.Fatalf("resolve --write: status %d\n%s%s", code, out, stderr)
	}
	written, _ := os.ReadFile(specFile)
	want := strings.Replace(doc, "  version: v0.2.0\n", "  version: v0.2.0\n  digest: \""+digest+"\"\n", 1)
	if string(written) != want {
		t.Errorf("written file:\n%s\nwant (comments, blank line and key order kept):\n%s", written, want)
	}
	if strings.Join(keyOrder(string(written)), ",") != strings.Join(keyOrder(doc), ",") {
		t.Errorf("key order or comments changed:\n%s", written)
	}
	if fi, _ := os.Stat(specFile); fi.Mode().Perm() != 0o640 {
		t.Errorf("permissions %v, want 0640", fi.Mode().Perm())
	}
	// The pinned spec renders the same bundle, and resolves to the same digest.
	rendered, stderr, code := runStatus(t, "render", dir, "--insecure-registry", host)
	if code != 0 || !strings.Contains(rendered, digest) {
		t.Errorf("render of the pinned spec: status %d, %s\n%.300s", code, stderr, rendered)
	}
	out, _, code = runStatus(t, "resolve", dir, "--write", "--insecure-registry", host)
	again, _ := os.ReadFile(specFile)
	if code != 0 || !strings.Contains(out, digest) || !strings.Contains(out, "already pinned") || string(again) != string(written) {
		t.Errorf("second resolve --write is not a no-op: status %d\n%s", code, out)
	}
}

func TestResolveCatalog(t *testing.T) {
	host, dir := catalogFixture(t)
	specFile := filepath.Join(dir, "olm-cmp.yaml")
	doc := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  catalog: ./catalog  # a directory: Git pins it\n  package: greeter-operator\n  namespace: demo\n"
	os.WriteFile(specFile, []byte(doc), 0o644)
	out, stderr, code := runStatus(t, "resolve", dir, "--write", "--insecure-registry", host)
	if code != 0 || !strings.Contains(out, "catalog: ./catalog\n") || !strings.Contains(out, "version: 0.2.0\n") ||
		!strings.Contains(out, "bundle:  "+host+"/demo/greeter-bundle@sha256:") {
		t.Fatalf("resolve: status %d\n%s%s", code, out, stderr)
	}
	written, _ := os.ReadFile(specFile)
	digest, _, _ := strings.Cut(out[strings.Index(out, "@sha256:")+1:], "\n")
	if want := strings.Replace(doc, "  package: greeter-operator\n", "  package: greeter-operator\n  version: \"0.2.0\"\n  digest: \""+digest+"\"\n", 1); string(written) != want {
		t.Errorf("written:\n%s\nwant:\n%s", written, want)
	}
	if out, _, code := runStatus(t, "resolve", dir, "--write", "--insecure-registry", host); code != 0 || !strings.Contains(out, "already pinned") {
		t.Errorf("second run: %d %s", code, out)
	}
}

func TestResolveDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../examples/demo")); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "olm-cmp.yaml"))
	out, stderr, code := runStatus(t, "resolve", dir, "--write")
	after, _ := os.ReadFile(filepath.Join(dir, "olm-cmp.yaml"))
	if code != 0 || !strings.Contains(out, "digest:  sha256:") || !strings.Contains(out, "already pinned by its content") || string(before) != string(after) {
		t.Errorf("directory bundle: status %d\n%s%s", code, out, stderr)
	}
}

// TestResolvePaths: resolve takes its argument by render's rule (render.SourceDirArg),
// and --write edits exactly the file it resolved.
func TestResolvePaths(t *testing.T) {
	host, dir := catalogFixture(t)
	specFile := filepath.Join(dir, "olm-cmp.yaml")
	doc := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  catalog: ./catalog\n  package: greeter-operator\n  namespace: demo\n"
	os.WriteFile(specFile, []byte(doc), 0o644)
	prod := filepath.Join(dir, "prod.yaml")
	os.WriteFile(prod, []byte(doc), 0o644)
	os.WriteFile(filepath.Join(dir, "foo.yaml"), nil, 0o644)

	for _, tc := range []struct {
		arg, err string
	}{
		{prod, prod + " is a file, not a source directory"},
		{filepath.Join(dir, "foo.yaml"), filepath.Join(dir, "foo.yaml") + " is a file, not a source directory"},
		{filepath.Join(dir, "olm-cmp.yml"), filepath.Join(dir, "olm-cmp.yml") + ": no such file"},
	} {
		out, stderr, code := runStatus(t, "resolve", tc.arg, "--write", "--insecure-registry", host)
		if code == 0 || out != "" || !strings.Contains(stderr, tc.err) {
			t.Errorf("resolve %s --write: status %d, stdout %q, stderr %q; want an error containing %q", tc.arg, code, out, stderr, tc.err)
		}
	}
	for _, f := range []string{specFile, prod} {
		if got, _ := os.ReadFile(f); string(got) != doc {
			t.Errorf("%s changed by a refused resolve:\n%s", f, got)
		}
	}

	// DIR/olm-cmp.yaml resolves and writes that file, nothing else.
	out, stderr, code := runStatus(t, "resolve", specFile, "--write", "--insecure-registry", host)
	if code != 0 || !strings.Contains(out, "pinned "+specFile) {
		t.Fatalf("resolve %s --write: status %d\n%s%s", specFile, code, out, stderr)
	}
	if got, _ := os.ReadFile(specFile); !strings.Contains(string(got), "version: \"0.2.0\"") {
		t.Errorf("olm-cmp.yaml not pinned:\n%s", got)
	}
	if got, _ := os.ReadFile(prod); string(got) != doc {
		t.Errorf("prod.yaml written by resolve of olm-cmp.yaml:\n%s", got)
	}
}
