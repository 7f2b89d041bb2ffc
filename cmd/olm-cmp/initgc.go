package main

import (
	"os"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/initgc"
)

// The collector was off while the packages initialised (internal/initgc);
// main's init runs after all of theirs. A one-shot command named first
// leaves it off: its PersistentPreRun (limitMemory) keeps it so under the
// soft limit, and turning it on in between would collect the packages'
// 5 MB at once. serve, tests (-test.*) and anything else get it back.
func init() {
	if len(os.Args) > 1 && os.Args[1] != "serve" && !strings.HasPrefix(os.Args[1], "-") {
		return
	}
	initgc.Restore()
}
