package diff

import (
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/checks/inprocess"
)

// The upgrade-safety comparisons, made by olm-cmp-check, are answered in
// the test's own process (internal/checks/inprocess).
func TestMain(m *testing.M) { inprocess.Main(m) }
