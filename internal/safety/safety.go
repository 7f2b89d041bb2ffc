// Package safety judges a version bump before it reaches the cluster: the
// CRD upgrade-safety rules OLM v1 applies (sigs.k8s.io/crdify) and the
// operator's upgrade graph (replaces, skips, olm.skipRange).
package safety

import (
	"io/fs"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// Severity of a finding.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Finding is one safety finding; its JSON form is part of `olm-cmp diff -o json`.
type Finding struct {
	Severity Severity `json:"severity"`
	// Rule names the check, e.g. "scope", "storedVersionRemoval",
	// "existingFieldRemoval", "type", "required", "enum", "default",
	// "maximum", "pattern", "nullable", "oneOf", "unhandled", "crdRemoved",
	// "upgradeEdge".
	Rule    string `json:"rule"`
	CRD     string `json:"crd,omitempty"`
	Version string `json:"version,omitempty"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}

// Options configure Check.
type Options struct {
	// KeepCRDs is TO's spec keepCRDs: a CRD that TO drops stays on the
	// cluster (a warning) instead of being pruned (an error).
	KeepCRDs bool
	// Strict turns upgrade-graph warnings into errors.
	Strict bool
	// Catalog, when not nil, is the file-based catalog the spec names; the
	// upgrade edge is then judged from it, otherwise from the two CSVs.
	Catalog fs.FS
}

// Check compares FROM, what the cluster runs, with TO.
// TODO(issue 11): crdify rules and the upgrade graph.
func Check(from, to *bundle.Bundle, o Options) ([]Finding, error) {
	return nil, nil
}
