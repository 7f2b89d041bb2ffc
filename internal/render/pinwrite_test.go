package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// An image bundle named by tag is pinned as resolve --write pins it: the
// tag moves to spec.version, the digest beside it, the comment kept; a
// second write changes nothing. A directory has nothing to write.
func TestPinWrite(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	file := filepath.Join(t.TempDir(), spec.FileName)
	text := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  # the operator\n  bundle: quay.io/org/op-bundle:v1.2.3\n  namespace: op\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s := spec.Spec{Bundle: "quay.io/org/op-bundle:v1.2.3", Namespace: "op"}
	p := PinOf(s, Unpinned(s), Resolved{Origin: bundle.Origin{Image: "quay.io/org/op-bundle@" + digest, Digest: digest}})
	var out strings.Builder
	p.Print(&out)
	if got, want := out.String(), "bundle:  quay.io/org/op-bundle@"+digest+"\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
	out.Reset()
	if err := p.Write(&out, file); err != nil || out.String() != "pinned "+file+"\n" {
		t.Fatalf("write: %v, %q", err, out.String())
	}
	data, _ := os.ReadFile(file)
	want := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  # the operator\n  bundle: quay.io/org/op-bundle\n  version: \"v1.2.3\"\n  digest: \"" + digest + "\"\n  namespace: op\n"
	if string(data) != want {
		t.Errorf("file:\n%s\nwant:\n%s", data, want)
	}
	pinned := spec.Spec{Bundle: "quay.io/org/op-bundle", Version: "v1.2.3", Digest: digest, Namespace: "op"}
	out.Reset()
	if err := PinOf(pinned, Unpinned(pinned), Resolved{Origin: bundle.Origin{Image: "quay.io/org/op-bundle@" + digest, Digest: digest}}).Write(&out, file); err != nil || out.String() != file+" is already pinned\n" {
		t.Errorf("second write: %v, %q", err, out.String())
	}
	dir := spec.Spec{Bundle: "./bundle", Namespace: "op"}
	out.Reset()
	if err := PinOf(dir, dir, Resolved{Origin: bundle.Origin{Ref: "./bundle", Digest: digest}}).Write(&out, file); err != nil || !strings.HasSuffix(out.String(), "by its content (the digest above), and by Git: nothing to write\n") {
		t.Errorf("directory: %v, %q", err, out.String())
	}
}
