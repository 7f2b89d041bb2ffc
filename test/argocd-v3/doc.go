// Package cmptest is test/argocd's suite against Argo CD v3.6.1, the newest
// release and the reference (the 2.x line is out of support). The shared test
// files are symlinks to ../argocd; only argocd_adapter_test.go differs (import
// paths). It is generated from ../argocd/argocd_adapter_test.go, and
// TestAdapterUpToDate fails when stale. health_test.go runs the health checks
// of deploy/argocd through Argo CD's own Lua engine, generated_health_test.go
// those `olm-cmp health-checks` writes (internal/healthcheck/testdata).
//
// Argo CD 3.6 needs Go 1.27 (this module's go directive): test/argocd/run.sh
// sets GOTOOLCHAIN=go1.27.0, which the module proxy serves; the main module
// keeps building with the machine's Go.
package cmptest

//go:generate go run gen_adapter.go
