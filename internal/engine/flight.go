package engine

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"golang.org/x/sync/singleflight"

	"github.com/olm-cmp/olm-cmp/internal/render"
)

// flights runs one render per key at a time: concurrent identical requests
// share it through x/sync/singleflight, with two rules singleflight leaves to
// its caller.
//
// The render runs with the context of the request that started it, its
// owner, because it reads the owner's source directory (extra manifests,
// patch files), which is removed when the owner returns. So the owner waits
// for its render even when its own context ends first (the render stops
// soon after), and a render whose owner gave up before it began never
// begins.
//
// The owner's cancellation must not fail the others: a request that joined
// a render its owner abandoned or cancelled runs the render again, as its new
// owner, while its own context is alive.
//
// A panic in the render is raised again in the owner (the server turns it
// into that request's error and logs it) and is an error for those who
// joined; the key is free for the next request either way.
type flights struct{ g singleflight.Group }

// errAbandoned ends a render whose owner left before it began.
var errAbandoned = errors.New("the request that started this render gave up before it began")

// panicked carries a render's panic out of singleflight's goroutine.
type panicked struct{ value any }

func (p *panicked) Error() string {
	return fmt.Sprintf("internal error: render panicked: %v", p.value)
}

// do returns fn's result for key, running fn (with ctx) only if no render
// of key is in flight. joined reports that another request's render answered.
func (f *flights) do(ctx context.Context, key string, fn func(context.Context) (*render.Result, error)) (res *render.Result, joined bool, err error) {
	for {
		// state is 0 until this call's fn begins (1) or this call abandons
		// it (2); it stays 0 when the call joins another's render.
		var state atomic.Int32
		ch := f.g.DoChan(key, func() (v any, err error) {
			if !state.CompareAndSwap(0, 1) {
				return nil, errAbandoned
			}
			defer func() {
				if r := recover(); r != nil {
					v, err = nil, &panicked{value: r}
				}
			}()
			return fn(ctx)
		})
		var r singleflight.Result
		select {
		case r = <-ch:
		case <-ctx.Done():
			if state.CompareAndSwap(0, 2) {
				return nil, false, ctx.Err() // nothing of ours is in use
			}
			r = <-ch // our render reads our source directory: wait for it
		}
		owner := state.Load() == 1
		var p *panicked
		switch {
		case errors.As(r.Err, &p) && owner:
			panic(p.value)
		case !owner && ctx.Err() == nil && (errors.Is(r.Err, errAbandoned) || isContextError(r.Err)):
			continue // the owner's cancellation ended it, not ours: take over
		case errors.Is(r.Err, errAbandoned):
			return nil, false, ctx.Err() // ours ended too
		}
		res, _ = r.Val.(*render.Result)
		return res, !owner, r.Err
	}
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
