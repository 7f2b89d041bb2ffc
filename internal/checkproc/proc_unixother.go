//go:build unix && !linux

package checkproc

import "syscall"

// dieWithParent: only Linux has a parent-death signal; elsewhere a killed
// olm-cmp leaves its helper to finish its batch and exit.
func dieWithParent(*syscall.SysProcAttr) {}
