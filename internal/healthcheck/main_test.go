package healthcheck_test

import (
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/checks/inprocess"
)

// The shared bundles' renders (shared_test.go) check what olm-cmp-check
// checks in the test's own process.
func TestMain(m *testing.M) { inprocess.Main(m) }
