package trust

import "time"

// SetRootCheckTimeout sets the bound of olm-cmp-check's run at a policy's
// load, until restore.
func SetRootCheckTimeout(d time.Duration) (restore func()) {
	old := rootCheckTimeout
	rootCheckTimeout = d
	return func() { rootCheckTimeout = old }
}

// StoredVerdict is storedVerdict's acceptance of a kept verdict.
func StoredVerdict(out []byte) bool {
	_, ok := storedVerdict(out)
	return ok
}
