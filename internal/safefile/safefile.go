// Package safefile reads a file that a user, a repository or a volume
// names, without letting the kind of file hurt the reader: only a regular
// file is read (opening a FIFO blocks until something writes to it, and a
// device such as /dev/zero never ends), it is opened non-blocking and
// checked to be the file that was looked at (a FIFO swapped in between the
// look and the open cannot block either), and it is read within a bound.
//
// Errors are typed so that each caller keeps its own words: a look or an
// open that fails returns the *fs.PathError of package os (errors.Is with
// fs.ErrNotExist and fs.ErrPermission work; Op says "open", "stat",
// "lstat" or "read"), a file of another kind a *NotRegularError, and one
// over the bound a *TooLargeError.
//
// Stamp tells whether such a file changed since it was read, and
// Reloading keeps a value loaded from it (a policy a volume mounts) as
// the file is now.
package safefile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// NotRegularError is a path that names something other than a regular
// file, or a file that changed kind between the look and the open.
type NotRegularError struct {
	Mode    fs.FileMode // the mode looked at (or opened, when Changed)
	Changed bool        // the file opened is not the one looked at
}

func (e *NotRegularError) Error() string {
	if e.Changed {
		return "changed while it was read"
	}
	return Kind(e.Mode) + ", not a regular file"
}

// TooLargeError is a file over the reader's bound.
type TooLargeError struct {
	Size int64 // the size looked at; the bytes read when Grew
	Max  int64
	Grew bool // it was within the bound when looked at, and grew while read
}

func (e *TooLargeError) Error() string {
	if e.Grew {
		return fmt.Sprintf("grew past the %d-byte limit while it was read", e.Max)
	}
	return fmt.Sprintf("%d bytes: larger than the %d-byte limit", e.Size, e.Max)
}

// Read returns the content of the regular file at path, at most max bytes.
// followLinks says whether a symbolic link is followed (a Secret volume's
// files are links) or is itself refused as not a regular file.
func Read(path string, max int64, followLinks bool) ([]byte, error) {
	look := os.Lstat
	if followLinks {
		look = os.Stat
	}
	fi, err := look(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Mode: fi.Mode()}
	}
	if fi.Size() > max {
		return nil, &TooLargeError{Size: fi.Size(), Max: max}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !os.SameFile(fi, now) {
		mode := fi.Mode()
		if err == nil {
			mode = now.Mode()
		}
		return nil, &NotRegularError{Mode: mode, Changed: true}
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{Size: int64(len(data)), Max: max, Grew: true}
	}
	return data, nil
}

// Kind names a kind of file that is not a regular one, for messages.
func Kind(m fs.FileMode) string {
	switch t := m.Type(); {
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDevice != 0:
		return "a device"
	case t&fs.ModeDir != 0:
		return "a directory"
	default:
		return "a special file"
	}
}
