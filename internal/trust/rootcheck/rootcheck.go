// Package rootcheck parses a trust policy's Sigstore trusted root with
// sigstore-go, in olm-cmp-check: the operation trust.RootCheckOp, which
// internal/trust sends for each trusted_root.json a policy names, so that
// a policy naming a bad one is refused when it loads.
//
// sigstore-go's root package brings sigstore's protobuf descriptors
// (protobuf-specs, genproto's annotations) and the timestamp authority's
// verification, whose initialisation every process linking them pays
// (internal/checkproc): only cmd/olm-cmp-check (through internal/checks)
// and tests may import this package, never olm-cmp.
package rootcheck

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sigstore/sigstore-go/pkg/root"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/trust"
)

// Handlers is this package's operation, for internal/checks.
func Handlers() map[string]checkproc.Handler {
	return map[string]checkproc.Handler{trust.RootCheckOp: handle}
}

func handle(_ context.Context, raw json.RawMessage) (any, error) {
	var in trust.RootCheckInput
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("the trusted root check's input does not decode: is %s the same build as olm-cmp?", checkproc.Executable)
	}
	return Check(in.JSON), nil
}

// Check is the verdict on a trusted root file's bytes: whether sigstore-go
// reads them as a trusted root, and if not, its reason, which the policy's
// message repeats.
func Check(data []byte) trust.RootCheckOutput {
	if _, err := root.NewTrustedRootFromJSON(data); err != nil {
		return trust.RootCheckOutput{Problem: err.Error()}
	}
	return trust.RootCheckOutput{OK: true}
}
