package cmptest

import (
	"os/exec"
	"testing"
)

// TestAdapterUpToDate fails when argocd_adapter_test.go no longer matches
// ../argocd/argocd_adapter_test.go (regenerate: go run gen_adapter.go).
func TestAdapterUpToDate(t *testing.T) {
	out, err := exec.Command("go", "run", "gen_adapter.go", "-check").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
