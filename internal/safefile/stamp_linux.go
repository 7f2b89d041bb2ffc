package safefile

import (
	"fmt"
	"io/fs"
	"syscall"
)

// sysStamp is the inode and status change time of fi.
func sysStamp(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d %d.%d", st.Dev, st.Ino, st.Ctim.Sec, st.Ctim.Nsec)
}
