package verify_test

import (
	"os"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/checks/inprocess"
)

// envRealHelper makes this test binary, re-run by helper_test.go, run
// olm-cmp-check as olm-cmp does (found beside it or on PATH) instead of
// answering its checks in process.
const envRealHelper = "OLM_CMP_VERIFY_TEST_REAL_HELPER"

// answerOutOfProcess undoes TestMain's in-process answers (the helper
// benchmark); nil under envRealHelper.
var answerOutOfProcess func()

// TestMain answers olm-cmp-check's Sigstore bundle checks in this process
// (internal/verify/bundlecheck), so the tests need no built helper.
func TestMain(m *testing.M) {
	if os.Getenv(envRealHelper) == "" {
		answerOutOfProcess = inprocess.Install()
	}
	os.Exit(m.Run())
}
