package registry

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
)

// TestFileKeychainOptionalFile: a --registry-config file that does not
// exist means no credentials (the deployments mount it from an optional
// Secret); it is read again on every lookup, so a Secret the kubelet mounts
// later is used from then on. Anything else that is not a docker config
// stays an error naming the file.
func TestFileKeychainOptionalFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	k := &fileKeychain{path: path}
	repo, err := name.NewRepository("registry.example.com/org/bundle")
	if err != nil {
		t.Fatal(err)
	}
	auth := func() (*authn.AuthConfig, error) {
		t.Helper()
		a, err := k.Resolve(repo)
		if err != nil {
			return nil, err
		}
		return a.Authorization()
	}
	if present, err := CheckRegistryConfig(path); present || err != nil {
		t.Errorf("missing file: present=%v err=%v, want false, nil", present, err)
	}
	if c, err := auth(); err != nil || *c != (authn.AuthConfig{}) {
		t.Errorf("missing file: %+v, %v; want anonymous", c, err)
	}

	// The kubelet's atomic writer: the file is a link through ..data.
	ts := filepath.Join(dir, "..2026_01_01")
	os.Mkdir(ts, 0o755)
	os.WriteFile(filepath.Join(ts, "config.json"), []byte(`{"auths":{"registry.example.com":{"auth":"dXNlcjpwYXNz"}}}`), 0o644)
	os.Symlink(filepath.Base(ts), filepath.Join(dir, "..data"))
	os.Symlink("..data/config.json", path)
	if c, err := auth(); err != nil || c.Username != "user" || c.Password != "pass" {
		t.Errorf("file mounted later: %+v, %v; want user/pass", c, err)
	}

	for _, c := range []struct {
		name, want string
		make       func(p string) error
	}{
		{"directory", "not a regular file", func(p string) error { return os.Mkdir(p, 0o755) }},
		{"fifo", "not a regular file", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"bad JSON", "not a docker config.json", func(p string) error { return os.WriteFile(p, []byte("{not json"), 0o644) }},
		{"too big", "larger than", func(p string) error {
			return os.WriteFile(p, []byte(`{"x":"`+strings.Repeat("a", MaxRegistryConfigBytes)+`"}`), 0o644)
		}},
	} {
		p := filepath.Join(t.TempDir(), "config.json")
		if err := c.make(p); err != nil {
			t.Fatal(err)
		}
		k := &fileKeychain{path: p}
		_, err := k.Resolve(repo)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line naming %s and %q", c.name, err, p, c.want)
		}
	}
}
