package cmpserver

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// workDirPrefix names every server's private work directory under the base
// directory (os.MkdirTemp adds a random suffix): no fixed name that something
// else could already hold.
const workDirPrefix = "olm-cmp-"

// liveMarker is written into a work directory once its owner holds the lock
// on it. The stale sweep only considers directories holding it, so it never
// removes a directory that merely shares the prefix, nor one whose owner is
// still between creating and locking it.
const liveMarker = ".olm-cmp-server"

// workDir is one server's private directory under the base directory (mode
// 0700, as os.MkdirTemp makes it). Each request's repository is extracted
// into a fresh subdirectory of it, removed when the request ends. The
// directory is locked while the server lives, so that a later server can tell
// the leftovers of a killed one (which hold repository contents, and in a pod
// outlive the container in its emptyDir) from a live server's work.
type workDir struct {
	path string
	lock *os.File
}

// WorkDirError is returned by Listen when the base work directory cannot be
// used: it is missing, not a directory, or not writable.
type WorkDirError struct {
	Dir string
	Err error
}

func (e *WorkDirError) Error() string { return fmt.Sprintf("work directory %s: %v", e.Dir, e.Err) }
func (e *WorkDirError) Unwrap() error { return e.Err }

// openWorkDir sweeps the work directories of servers that are gone and makes
// this server's own. base must exist: a mistyped path is refused rather than
// created.
func openWorkDir(base string, log *slog.Logger) (*workDir, error) {
	fi, err := os.Stat(base)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &WorkDirError{base, errors.New("does not exist")}
	case err != nil:
		return nil, &WorkDirError{base, err}
	case !fi.IsDir():
		return nil, &WorkDirError{base, errors.New("is not a directory")}
	}
	sweepStaleWorkDirs(base, log)
	dir, err := os.MkdirTemp(base, workDirPrefix+"*")
	if err != nil {
		return nil, &WorkDirError{base, fmt.Errorf("creating a directory in it: %w", err)}
	}
	lock, err := lockDir(dir)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, liveMarker), nil, 0o600)
	}
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		os.RemoveAll(dir)
		return nil, &WorkDirError{base, fmt.Errorf("preparing %s: %w", dir, err)}
	}
	return &workDir{path: dir, lock: lock}, nil
}

// requestDir makes a fresh private directory for one request. The caller
// removes it when the request ends.
func (w *workDir) requestDir() (string, error) {
	return os.MkdirTemp(w.path, "req-")
}

// close removes the directory and releases the lock.
func (w *workDir) close() error {
	err := os.RemoveAll(w.path)
	w.lock.Close()
	return err
}

// sweepStaleWorkDirs removes the work directories under base whose server is
// gone: those holding the live marker whose lock can be taken. A directory
// of a live server (its lock held), of another user, or without the marker is
// left alone.
func sweepStaleWorkDirs(base string, log *slog.Logger) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), workDirPrefix) {
			continue
		}
		dir := filepath.Join(base, e.Name())
		if m, err := os.Lstat(filepath.Join(dir, liveMarker)); err != nil || !m.Mode().IsRegular() || !ownedByUs(dir) {
			continue
		}
		lock, err := tryLockDir(dir)
		if err != nil || lock == nil {
			continue // a live server's, or not ours to judge
		}
		if err := os.RemoveAll(dir); err != nil {
			log.Warn("removing the work directory of a server that is gone", "dir", dir, "error", err)
		} else {
			log.Info("removed the work directory of a server that is gone", "dir", dir)
		}
		lock.Close()
	}
}
