package trust_test

import (
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/checks/inprocess"
)

// TestMain answers olm-cmp-check's trusted root checks in this process
// (internal/trust/rootcheck), so the tests need no built helper.
func TestMain(m *testing.M) { inprocess.Main(m) }
