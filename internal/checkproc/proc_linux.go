package checkproc

import "syscall"

// dieWithParent has the kernel kill the helper when the thread that
// started it ends: olm-cmp's process exits (Go ends no thread it did not
// lock, and runHelper locks none).
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
