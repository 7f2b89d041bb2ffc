package cmptest

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "regenerate argocd_adapter_test.go from ../argocd")

// v3Adapter derives this module's adapter from the v2 one: Argo CD v3 has the
// same API under a new module path, and moved to go-grpc-middleware v2.
func v3Adapter(v2 string) string {
	return strings.NewReplacer(
		"github.com/argoproj/argo-cd/v2", "github.com/argoproj/argo-cd/v3",
		"github.com/grpc-ecosystem/go-grpc-middleware/retry", "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/retry",
		"// The only file that imports Argo CD. test/argocd-v3/argocd_adapter_test.go is\n// generated from it: edit this one, then in test/argocd-v3 run\n// go test -run TestAdapterUpToDate -update",
		"// Code generated from ../argocd/argocd_adapter_test.go by TestAdapterUpToDate -update. DO NOT EDIT.",
	).Replace(v2)
}

// TestAdapterUpToDate fails when argocd_adapter_test.go is stale.
func TestAdapterUpToDate(t *testing.T) {
	src, err := os.ReadFile("../argocd/argocd_adapter_test.go")
	if err != nil {
		t.Fatal(err)
	}
	want := v3Adapter(string(src))
	if *update {
		if err := os.WriteFile("argocd_adapter_test.go", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile("argocd_adapter_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Error("argocd_adapter_test.go is stale: go test -run TestAdapterUpToDate -update")
	}
}
