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

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, checkproc.Executable+" is run by olm-cmp and takes no arguments: run olm-cmp instead")
		os.Exit(2)
	}
	if err := checkproc.Serve(context.Background(), os.Stdin, os.Stdout, checks.Handlers()); err != nil {
		fmt.Fprintln(os.Stderr, checkproc.Executable+": "+err.Error())
		os.Exit(1)
	}
}
