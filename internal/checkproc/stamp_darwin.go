package checkproc

import (
	"io/fs"
	"syscall"
)

// fileChange: as on Linux (stamp_linux.go).
func fileChange(fi fs.FileInfo) (ino uint64, ctime int64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino, st.Ctimespec.Nano()
	}
	return 0, 0
}
