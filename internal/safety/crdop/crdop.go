// Package crdop is the contract between internal/safety, which asks, and
// internal/safety/crdcheck, which answers in olm-cmp-check: the name of the
// CRD upgrade-safety comparison (sigs.k8s.io/crdify, as OLM v1 configures
// it), its input and its output. It stays light (the standard library
// only), so olm-cmp links it without crdify.
//
// The comparison is a pure function of its input: its verdict is cached by
// the input's content (internal/checkproc's Store).
package crdop

import "encoding/json"

// Upgrade compares the CRD the cluster runs with the CRD of the same name
// that replaces it. Input: Input; output: Verdict.
const Upgrade = "crd-upgrade"

// Input is the two CRDs as apiextensions.k8s.io/v1 JSON, as the render
// applies them, and the versions the cluster may have stored of Old (a
// bundle's CRD has no status: internal/safety says which, and the
// comparison takes them as Old's status.storedVersions).
type Input struct {
	Old            json.RawMessage `json:"old"`
	New            json.RawMessage `json:"new"`
	StoredVersions []string        `json:"storedVersions"`
}

// A finding's severities.
const (
	Error   = "error"
	Warning = "warning"
)

// Finding is one finding of the comparison; internal/safety.Finding has the
// same fields and meaning.
type Finding struct {
	Severity string `json:"severity"` // Error or Warning
	Rule     string `json:"rule"`
	CRD      string `json:"crd,omitempty"`
	Version  string `json:"version,omitempty"`
	Path     string `json:"path,omitempty"`
	Message  string `json:"message"`
}

// Verdict is the comparison's output: its findings, in crdify's order;
// null (never an empty list) when the upgrade is safe.
type Verdict struct {
	Findings []Finding `json:"findings"`
}
