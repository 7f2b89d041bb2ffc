package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestRead: a regular file is read, through a link only when asked; every
// other kind is a NotRegularError without being opened (a FIFO would block
// the test forever), a file over the bound a TooLargeError, and a missing
// one the os error.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.yaml")
	if err := os.WriteFile(file, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFO here:", err)
	}
	link := filepath.Join(dir, "link.yaml")
	zero := filepath.Join(dir, "zero.yaml")
	if os.Symlink(file, link) != nil || os.Symlink("/dev/zero", zero) != nil {
		t.Fatal("symlink")
	}

	if data, err := Read(file, 3, false); err != nil || string(data) != "abc" {
		t.Errorf("regular file: %q, %v", data, err)
	}
	if data, err := Read(link, 3, true); err != nil || string(data) != "abc" {
		t.Errorf("link followed: %q, %v", data, err)
	}
	for _, tc := range []struct {
		path   string
		follow bool
		kind   string
	}{
		{fifo, false, "a named pipe (FIFO)"},
		{fifo, true, "a named pipe (FIFO)"},
		{link, false, "a symbolic link"},
		{zero, true, "a device"},
		{dir, true, "a directory"},
	} {
		var nr *NotRegularError
		if _, err := Read(tc.path, 10, tc.follow); !errors.As(err, &nr) || Kind(nr.Mode) != tc.kind || err.Error() != tc.kind+", not a regular file" {
			t.Errorf("%s (follow %v): %v, want %s", filepath.Base(tc.path), tc.follow, err, tc.kind)
		}
	}
	var tl *TooLargeError
	if _, err := Read(file, 2, false); !errors.As(err, &tl) || tl.Size != 3 || tl.Max != 2 || tl.Grew {
		t.Errorf("over the bound: %v", err)
	}
	var pe *fs.PathError
	if _, err := Read(filepath.Join(dir, "missing"), 10, true); !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) {
		t.Errorf("missing: %v", err)
	}
}
