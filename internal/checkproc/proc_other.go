//go:build !unix

package checkproc

import (
	"os"
	"os/exec"
)

func ownGroup(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}

func killedBy(*os.ProcessState) (sig string, killed, ok bool) { return "", false, false }

func execErrorLine(error) string { return "it could not be run" }
