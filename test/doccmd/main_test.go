package doccmd

import (
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/checks/inprocess"
)

// The in-process renders (outputs_test.go) check what olm-cmp-check checks
// in the test's own process; the doc commands run the built pair.
func TestMain(m *testing.M) { inprocess.Main(m) }
