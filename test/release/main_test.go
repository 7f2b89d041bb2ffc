package release

import (
	"os"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/checks/inprocess"
)

// TestMain answers olm-cmp-check's Sigstore bundle checks in this process,
// so the release signature verifies through internal/verify without a
// built helper.
func TestMain(m *testing.M) {
	inprocess.Install()
	os.Exit(m.Run())
}
