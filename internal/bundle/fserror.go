package bundle

import (
	"errors"
	"fmt"
	"io/fs"
)

// DirError is a failure to load or hash the bundle directory Dir, named as
// the caller named it. A caller that names the bundle its own way (render
// says `spec.bundle "./bundle"`) takes Err alone, so the resolved absolute
// directory, a server's temporary path in the plugin, never reaches a user.
type DirError struct {
	Dir string
	Err error
}

func (e *DirError) Error() string { return fmt.Sprintf("bundle directory %q: %v", e.Dir, e.Err) }
func (e *DirError) Unwrap() error { return e.Err }

// errLinkEscapes replaces os.Root's "path escapes from parent": a symbolic
// link in the bundle whose target is outside it, which the loader refuses so
// a repository cannot make the server read its files.
var errLinkEscapes = errors.New("a symbolic link that leads outside the bundle directory: copy the file into the bundle instead")

// fsReason is err, a file system error of a file the caller names, without
// the operation and path Go's errors carry ("statat manifests/x.yaml: ...",
// "openat /tmp/...: ..."): the caller's message names the file, and an
// absolute path must not reach a user. errors.Is keeps working on the result.
func fsReason(err error) error {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return err
	}
	// os.Root's error for an escaping path is not exported: its text is all
	// there is to recognise it by.
	if pe.Err != nil && pe.Err.Error() == "path escapes from parent" {
		return errLinkEscapes
	}
	return pe.Err
}

// FileError is a problem of one file of manifests/ (File, bundle-relative)
// that the rest of the bundle may not need: it does not parse, an object
// in it lacks apiVersion or kind, or it holds a v1beta1 CRD the CSV does not
// own. Listing the file in Origin.SkipFiles loads the bundle without it.
type FileError struct {
	File string
	Err  error
}

func (e *FileError) Error() string { return e.File + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }
