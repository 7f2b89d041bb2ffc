//go:build unix

package checkproc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// ownGroup starts the helper in a process group of its own, so killGroup
// stops whatever it started too. Its own group no longer gets the
// terminal's Ctrl-C, so where the system can (Linux), the helper is also
// killed when olm-cmp dies without killing it (a kill -TERM of a render:
// a breaker found the helper running on, reparented to init).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
}

// killGroup kills the helper's process group. Called before the helper is
// waited for: until then its process ID (the group's) cannot be reused.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// killedBy is the signal that ended the helper, if one did.
func killedBy(ps *os.ProcessState) (sig string, killed, ok bool) {
	ws, isWS := ps.Sys().(syscall.WaitStatus)
	if !isWS || !ws.Signaled() {
		return "", false, false
	}
	return ws.Signal().String(), ws.Signal() == syscall.SIGKILL, true
}

// execErrorLine words the reason a file could not be started, without
// its path (exec's error names it).
func execErrorLine(err error) string {
	var errno syscall.Errno
	switch {
	case !errors.As(err, &errno):
		return "it could not be run"
	case errno == syscall.ENOEXEC:
		return "it is not a program for this machine (an empty or damaged file, or one built for another system)"
	case errno == syscall.EACCES || errno == syscall.EPERM:
		return "it is not executable"
	}
	return errno.Error()
}
