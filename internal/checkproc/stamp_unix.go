//go:build linux || darwin

package checkproc

import (
	"io/fs"
	"syscall"
)

// fileChange is a file's inode and change time: replacing a file (a new
// install, a copy, a rename over it) changes one or the other even when
// its size and modification time are kept (hack/ociimage sets every
// time to SOURCE_DATE_EPOCH).
func fileChange(fi fs.FileInfo) (ino uint64, ctime int64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino, changeTime(st)
	}
	return 0, 0
}
