//go:build unix

package render

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// TestSpecialFileBesideSpecRefused: a FIFO, a link to /dev/zero and a link
// to a regular file named x.yaml beside olm-cmp.yaml were passed over
// without a word. Each is refused in one line naming the file, what it is
// and the fix, without opening it (a FIFO would block); left out with
// spec.extraManifests, the render goes on.
func TestSpecialFileBesideSpecRefused(t *testing.T) {
	for _, c := range []struct {
		name, kind string
		make       func(p string) error
	}{
		{"fifo", "a named pipe (FIFO)", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"link-to-dev-zero", "a symbolic link", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"link-to-a-file", "a symbolic link", func(p string) error { return os.Symlink("greeter-extra.yaml", p) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := demoRequest(t)
			req.SourceDir = extraDir(t, nil)
			if err := c.make(filepath.Join(req.SourceDir, "x.yaml")); err != nil {
				t.Skipf("cannot make it here: %v", err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := (&Renderer{}).Render(context.Background(), req)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second): // a deadlock guard, not a timing
				t.Fatal("the render blocked on x.yaml")
			}
			want := "extra manifest x.yaml: " + c.kind + ", not a regular file: olm-cmp reads extra manifests from regular files only (it never opens anything else): put the file itself beside olm-cmp.yaml, or leave it out with spec.extraManifests: {exclude: [x.yaml]}"
			if err == nil || err.Error() != want {
				t.Fatalf("got  %v\nwant %s", err, want)
			}
			req.Spec.ExtraManifests = &spec.ExtraManifests{Exclude: []string{"x.yaml"}}
			mustRender(t, req)
		})
	}
}
