//go:build ignore

// gen_adapter derives argocd_adapter_test.go from ../argocd's: Argo CD v3 has
// the same API under a new module path, and moved to go-grpc-middleware v2.
//
//	go run gen_adapter.go          # (re)write argocd_adapter_test.go
//	go run gen_adapter.go -check   # exit 1 if it is stale
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
)

const (
	src = "../argocd/argocd_adapter_test.go"
	dst = "argocd_adapter_test.go"
)

func main() {
	check := flag.Bool("check", false, "only check that "+dst+" is up to date")
	flag.Parse()
	in, err := os.ReadFile(src)
	if err != nil {
		fail(err)
	}
	header, body, ok := strings.Cut(string(in), "\n\npackage ")
	if !ok || !strings.HasPrefix(header, "//") {
		fail(fmt.Errorf("%s: expected a header comment, then the package clause", src))
	}
	want := "// Code generated from " + src + " by gen_adapter.go. DO NOT EDIT.\n\npackage " +
		strings.NewReplacer(
			"github.com/argoproj/argo-cd/v2", "github.com/argoproj/argo-cd/v3",
			"github.com/grpc-ecosystem/go-grpc-middleware/retry", "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/retry",
		).Replace(body)
	if *check {
		got, err := os.ReadFile(dst)
		if err != nil {
			fail(err)
		}
		if !bytes.Equal(got, []byte(want)) {
			fail(fmt.Errorf("%s is stale: run `go run gen_adapter.go` in test/argocd-v3", dst))
		}
		return
	}
	if err := os.WriteFile(dst, []byte(want), 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gen_adapter:", err)
	os.Exit(1)
}
