// Command olm-cmp-check runs, for olm-cmp, the checks whose libraries are too
// heavy to link into every olm-cmp process (internal/checkproc says why): it
// reads one request of jobs on standard input and writes their results on
// standard output. Users never run it; it ships beside olm-cmp.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/checks"
)

// version is stamped as olm-cmp's is (-ldflags "-X main.version=…", by
// every build that writes both): olm-cmp compares the two (checkproc's
// build check), since -trimpath leaves -ldflags out of the build info.
var version = "dev"

func main() {
	checkproc.StampVersion(version)
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, checkproc.Executable+" is run by olm-cmp and takes no arguments: run olm-cmp instead")
		os.Exit(2)
	}
	if err := checkproc.Serve(context.Background(), os.Stdin, os.Stdout, checks.Handlers()); err != nil {
		fmt.Fprintln(os.Stderr, checkproc.Executable+": "+err.Error())
		os.Exit(1)
	}
}
