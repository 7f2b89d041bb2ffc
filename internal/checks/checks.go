// Package checks lists every operation olm-cmp-check runs: the union of
// the heavy packages' handlers. cmd/olm-cmp-check serves it; tests answer
// with it in process (internal/checks/inprocess). Only those two may
// import this package: linked into olm-cmp, it would bring back the start-up
// cost the second executable exists to avoid (internal/checkproc).
package checks

import (
	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/safety/crdcheck"
	"github.com/olm-cmp/olm-cmp/internal/trust/rootcheck"
	"github.com/olm-cmp/olm-cmp/internal/validate/apicheck"
	"github.com/olm-cmp/olm-cmp/internal/verify/bundlecheck"
)

// Handlers returns every operation by name.
func Handlers() map[string]checkproc.Handler {
	all := map[string]checkproc.Handler{}
	for _, hs := range []map[string]checkproc.Handler{
		apicheck.Handlers(),
		crdcheck.Handlers(),
		bundlecheck.Handlers(),
		rootcheck.Handlers(),
	} {
		for op, h := range hs {
			if _, dup := all[op]; dup {
				panic("checks: operation " + op + " registered twice")
			}
			all[op] = h
		}
	}
	return all
}
