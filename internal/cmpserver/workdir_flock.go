//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package cmpserver

import (
	"errors"
	"os"
	"syscall"
)

// lockDir takes an exclusive lock on dir, held until the returned file is
// closed (or the process dies: the kernel releases it, which is the point).
func lockDir(dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// tryLockDir is lockDir that answers nil, nil when another process holds
// the lock.
func tryLockDir(dir string) (*os.File, error) {
	f, err := lockDir(dir)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, nil
	}
	return f, err
}

// ownedByUs says whether dir belongs to this process's user: another user's
// directory is not this server's to sweep.
func ownedByUs(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
