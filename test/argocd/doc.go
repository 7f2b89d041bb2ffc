// Package cmptest drives olm-cmp's Argo CD config-management plugin (both
// `olm-cmp serve` and the stock argocd-cmp-server running `olm-cmp generate`)
// through Argo CD v2's own repo-server code. It is a separate module so Argo
// CD's dependency versions never meet the main module's. The tests are in
// *_test.go; see run.sh.
package cmptest
