package tenancy

import (
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/checks/inprocess"
)

// Renders check what olm-cmp-check checks in the test's own process
// (internal/checks/inprocess).
func TestMain(m *testing.M) { inprocess.Main(m) }
