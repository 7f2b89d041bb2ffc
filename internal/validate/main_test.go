package validate

import (
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/checks/inprocess"
)

// The checks of olm-cmp-check are answered in the test's process: the
// same code, without building the second executable.
func TestMain(m *testing.M) { inprocess.Main(m) }
