// Package safety judges a version bump before it reaches the cluster: the
// CRD upgrade-safety rules OLM v1 applies (sigs.k8s.io/crdify, run in
// olm-cmp-check by internal/safety/crdcheck: verdicts.go) and the
// operator's upgrade graph (replaces, skips, olm.skipRange).
package safety

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/echo"
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
	// Acknowledged is the reason of the spec.acknowledge entry that names
	// this finding, "" when none does: an acknowledged finding is still
	// shown, with its reason, but never fails.
	Acknowledged string `json:"acknowledged,omitempty"`
}

// Options configure Check.
type Options struct {
	// KeepCRDs is TO's spec keepCRDs: a CRD that TO drops stays on the
	// cluster (a warning) instead of being pruned (an error).
	KeepCRDs bool
	// SelfCertified is TO's spec.upgradeConstraintPolicy SelfCertified: an
	// upgrade edge the graph lacks (or a downgrade) is a warning, not the
	// error of OLM v1's default, CatalogProvided.
	SelfCertified bool
	// Catalog, when not nil, is the file-based catalog the spec names; the
	// upgrade edge is then judged from it, otherwise from the two CSVs.
	Catalog fs.FS
	// Package and Channel say where in Catalog to look: the spec's package
	// (empty: TO's bundle package) and channels (comma-separated; empty:
	// every channel).
	Package, Channel string
}

// String is the finding on one line: "error: scope: CRD widgets.example.com
// version v1 path .spec.size: message". Names, paths and messages come from
// the bundles: control characters in them are escaped (echo.Visible).
func (f Finding) String() string {
	var where []string
	if f.CRD != "" {
		where = append(where, "CRD "+f.CRD)
	}
	if f.Version != "" {
		where = append(where, "version "+f.Version)
	}
	if f.Path != "" {
		where = append(where, "path "+f.Path)
	}
	s := string(f.Severity) + ": " + f.Rule + ": "
	if len(where) > 0 {
		s += strings.Join(where, " ") + ": "
	}
	s += f.Message
	if f.Acknowledged != "" {
		s += " (acknowledged: " + f.Acknowledged + ")"
	}
	return echo.Text(s)
}

// Fails reports whether the finding counts at severity failOn or worse:
// an acknowledged finding never does.
func (f Finding) Fails(failOn Severity) bool {
	return f.Acknowledged == "" && (f.Severity == Error || failOn == Warning)
}

// HasErrors reports whether any finding is an error not acknowledged.
func HasErrors(fs []Finding) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Fails(Error) })
}

// Check compares FROM, what the cluster runs, with TO: every CRD of FROM
// with its counterpart in TO (see checkCRDs), and the upgrade edge (see
// checkEdge). Findings are sorted: errors first, then by CRD, version, path,
// rule and message.
//
// The CRD checks are bounded (see MaxVersions and the other limits) and
// stop with ctx's error once ctx is done.
func Check(ctx context.Context, from, to *bundle.Bundle, o Options) ([]Finding, error) {
	if from == nil || to == nil || from.CSV == nil || to.CSV == nil {
		return nil, fmt.Errorf("internal error: safety.Check needs two loaded bundles")
	}
	out, err := checkCRDs(ctx, from, to, o.KeepCRDs)
	if err != nil {
		return nil, err
	}
	edge, err := checkEdge(ctx, from, to, o)
	if err != nil {
		return nil, err
	}
	out = append(out, edge...)
	slices.SortFunc(out, Compare)
	return slices.Compact(out), nil
}

// Compare orders findings: errors first, then by CRD, version, path, rule
// and message, so output does not depend on the order checks ran in.
func Compare(a, b Finding) int {
	if a.Severity != b.Severity {
		if a.Severity == Error {
			return -1
		}
		return 1
	}
	return cmp.Or(cmp.Compare(a.CRD, b.CRD), cmp.Compare(a.Version, b.Version), cmp.Compare(a.Path, b.Path), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Message, b.Message))
}
