package safety

import (
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/checks/inprocess"
)

// crdify's comparisons, made by olm-cmp-check, are answered in the test's
// own process (internal/checks/inprocess).
func TestMain(m *testing.M) { inprocess.Main(m) }
