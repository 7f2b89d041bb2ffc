package tenancy

import (
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/checkproc/inprocess"
)

// Renders check what olm-cmp-check checks in the test's own process
// (internal/checkproc/inprocess).
func TestMain(m *testing.M) { inprocess.Main(m) }
