package verify_test

import (
	"os"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/checkproc/inprocess"
)

// TestMain answers olm-cmp-check's Sigstore bundle checks in this process
// (internal/verify/bundlecheck), so the tests need no built helper;
// helper_test.go runs the real executable.
func TestMain(m *testing.M) {
	inprocess.Install()
	os.Exit(m.Run())
}
