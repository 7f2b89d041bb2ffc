package render

import (
	"context"

	"github.com/olm-cmp/olm-cmp/internal/safety"
)

// CheckUpgrade resolves and loads the bundles of two requests, FROM (what the
// cluster runs) and TO, and returns the safety findings of going from one
// to the other (see package safety).
// TODO(issue 11): load both, pass the catalog TO names, call safety.Check.
func (r *Renderer) CheckUpgrade(ctx context.Context, from, to Request) ([]safety.Finding, error) {
	return nil, nil
}
