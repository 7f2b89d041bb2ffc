package tenancy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadCredentials: a project's docker config is read only as a regular
// file below the credentials directory that root or this user owns and
// nobody else may write, naming no credential helper; everything else is
// one line naming the file as the policy does, never the directory.
func TestReadCredentials(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	good := `{"auths":{"registry.a.example":{"auth":"dGVhbS1hOnM="}}}`
	write := func(name, body string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, name), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("team-a.json", good, 0o600)
	if err := os.WriteFile(filepath.Join(outside, "config.json"), []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	// A Secret volume's layout: links inside the directory are followed.
	if err := os.Mkdir(filepath.Join(dir, "..data"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("..data/team-b.json", good, 0o644)
	if err := os.Symlink("..data/team-b.json", filepath.Join(dir, "team-b.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "config.json"), filepath.Join(dir, "escape.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../"+filepath.Base(outside)+"/config.json", filepath.Join(dir, "relescape.json")); err != nil {
		t.Fatal(err)
	}
	write("helper.json", `{"credsStore":"evil","auths":{}}`, 0o600)
	write("helpers.json", `{"credHelpers":{"registry.a.example":"evil"}}`, 0o600)
	// docker/cli's loader decodes the first JSON value and ignores the
	// rest: a check that fails to decode the whole must not be skipped.
	write("trailing.json", `{"credsStore":"evil"}x`, 0o600)
	write("bracket.json", `{"credHelpers":{"registry.a.example":"evil"}}]`, 0o600)
	write("two.json", `{"auths":{}} {"credsStore":"evil"}`, 0o600)
	write("twohelper.json", `{"credsStore":"evil"} {"auths":{}}`, 0o600)
	write("null.json", `null`, 0o600)
	write("array.json", `[{"credsStore":"evil"}]`, 0o600)
	write("upper.json", `{"CREDSSTORE":"evil"}`, 0o600)
	write("writable.json", good, 0o666)
	write("big.json", strings.Repeat(" ", 4<<20+1), 0o600)
	fifo := filepath.Join(dir, "fifo.json")
	haveFIFO := syscall.Mkfifo(fifo, 0o600) == nil
	write("theirs.json", good, 0o600)
	chowned := os.Chown(filepath.Join(dir, "theirs.json"), 4242, 4242) == nil

	if data, err := ReadCredentials(dir, "team-a.json"); err != nil || string(data) != good {
		t.Errorf("team-a.json: %q %v", data, err)
	}
	if data, err := ReadCredentials(dir, "team-b.json"); err != nil || string(data) != good {
		t.Errorf("a Secret's link: %q %v", data, err)
	}
	if _, err := ReadCredentials(dir, "missing.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	cases := map[string]string{
		"escape.json":    `registryConfig "escape.json": cannot be read below credentialsDir (a link leading out of it?): mount the credentials Secret there`,
		"relescape.json": `registryConfig "relescape.json": cannot be read below credentialsDir (a link leading out of it?)`,
		"helper.json":    `registryConfig "helper.json": names a credential helper (credsStore, credHelpers), a program the sidecar would run: give the credentials themselves (auths)`,
		"helpers.json":   `names a credential helper`,
		"trailing.json":  `registryConfig "trailing.json": is not exactly one JSON object (a docker config.json, nothing after it): give the file docker login writes`,
		"bracket.json":   `registryConfig "bracket.json": is not exactly one JSON object`,
		"two.json":       `registryConfig "two.json": is not exactly one JSON object`,
		"twohelper.json": `registryConfig "twohelper.json": is not exactly one JSON object`,
		"null.json":      `registryConfig "null.json": is not exactly one JSON object`,
		"array.json":     `registryConfig "array.json": is not exactly one JSON object`,
		"upper.json":     `registryConfig "upper.json": names a credential helper`,
		"writable.json":  `registryConfig "writable.json": writable by others (mode 0666): mount it from a Secret (read-only)`,
		"big.json":       `registryConfig "big.json": larger than 4194304 bytes: not a docker config.json`,
		"..data":         `registryConfig "..data": is a directory, not a regular file: give a docker config.json`,
	}
	if haveFIFO {
		cases["fifo.json"] = `registryConfig "fifo.json": is a named pipe (FIFO), not a regular file: give a docker config.json`
	}
	if chowned {
		cases["theirs.json"] = `registryConfig "theirs.json": owned by uid 4242, neither root nor this sidecar's user: mount it from a Secret`
	}
	for name, want := range cases {
		done := make(chan struct{})
		var err error
		go func() { _, err = ReadCredentials(dir, name); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the read blocked", name)
		}
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), dir) {
			t.Errorf("%s:\n got  %v\n want %s", name, err, want)
		}
	}
	if !chowned {
		t.Log("not root: the someone-else's-file case was not tried")
	}
}
