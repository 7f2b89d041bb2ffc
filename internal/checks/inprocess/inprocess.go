// Package inprocess is for tests: it makes checkproc.Run answer with every
// operation of olm-cmp-check in the test's own process, so a package's
// tests render without building the second executable. Tests of what users
// run (cmd/olm-cmp's binary tests, deploy/, test/e2e) run olm-cmp-check itself.
package inprocess

import (
	"os"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/checks"
)

// Install makes checkproc.Run answer in process; the returned function
// undoes it. A TestMain calls it once: `defer inprocess.Install()()`, or
// before m.Run when it exits with os.Exit.
func Install() (restore func()) {
	return checkproc.AnswerInProcess(checks.Handlers())
}

// Main is a TestMain for a package whose tests render: it installs the
// in-process answer and runs the tests.
func Main(m *testing.M) {
	Install()
	os.Exit(m.Run())
}
