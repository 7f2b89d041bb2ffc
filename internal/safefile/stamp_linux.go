package safefile

import (
	"fmt"
	"io/fs"
	"syscall"
	"time"
)

// recentChange is how close to now a status change time is too close to
// tell two writes apart by it (file systems keep coarse times).
const recentChange = 2 * time.Second

// sysStamp is the device, inode and status change time of fi, decisive
// unless that change is recent.
func sysStamp(fi fs.FileInfo) (string, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	ctime := time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
	return fmt.Sprintf("%d:%d %d", st.Dev, st.Ino, ctime.UnixNano()), time.Since(ctime) > recentChange
}
