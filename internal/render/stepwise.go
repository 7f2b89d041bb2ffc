package render

import (
	"context"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// Stepwise is Render step by step (Resolve, Load, RenderLoaded), keeping
// what the steps made that a caller judges besides the result: what req
// resolved to and the bundle loaded (diff's safety checks judge the very
// bundles rendered; health-checks reads the CSV). Load is LoadUntil's.
func (r *Renderer) Stepwise(ctx context.Context, req Request) (Resolved, *bundle.Bundle, *Result, error) {
	rv, err := r.Resolve(ctx, req)
	if err != nil {
		return Resolved{}, nil, nil, err
	}
	b, err := r.LoadUntil(ctx, rv)
	if err != nil {
		return Resolved{}, nil, nil, err
	}
	res, err := r.RenderLoaded(ctx, rv, b)
	return rv, b, res, err
}

// LoadUntil is Load, returning ctx's error as soon as ctx ends. The loader
// parses every file of the bundle, and a parse cannot be interrupted: a
// CRD of 3 MB takes one to two seconds of CPU once another bundle fills the
// heap. It is for one-shot commands: on that error the process exits, and
// the parse still under way goes with it.
func (r *Renderer) LoadUntil(ctx context.Context, rv Resolved) (*bundle.Bundle, error) {
	type loaded struct {
		b   *bundle.Bundle
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		b, err := r.Load(ctx, rv)
		done <- loaded{b, err}
	}()
	select {
	case l := <-done:
		return l.b, l.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}
