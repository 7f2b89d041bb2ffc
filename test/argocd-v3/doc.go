// Package cmptest is test/argocd's suite against Argo CD v3 (most users run
// v3). The shared test files are symlinks to ../argocd; only
// argocd_adapter_test.go differs (import paths). It is generated from
// ../argocd/argocd_adapter_test.go, and TestAdapterUpToDate fails when stale.
package cmptest

//go:generate go run gen_adapter.go
