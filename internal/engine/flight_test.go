package engine

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/render"
)

// TestOwnerNeverLeavesItsRenderRunning: a render reads its owner's source
// directory, removed when the owner returns, so do never returns to an
// owner whose render has begun and not ended, even when the owner's context
// ends first. Repeated with deadlines from 0 to 100 µs, so both orders
// (render begun or not when the owner notices its context) occur.
func TestOwnerNeverLeavesItsRenderRunning(t *testing.T) {
	var f flights
	began := 0
	for i := range 200 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%100)*time.Microsecond)
		defer cancel()
		var started, ended atomic.Bool
		_, joined, err := f.do(ctx, "k", &progress{}, func(ctx context.Context, _ *progress) (*render.Result, error) {
			started.Store(true)
			time.Sleep(time.Millisecond)
			ended.Store(true)
			return nil, ctx.Err()
		})
		if started.Load() {
			began++
			if !ended.Load() {
				t.Fatal("do returned while its render was still running")
			}
		}
		if joined || (!started.Load() && !errors.Is(err, context.DeadlineExceeded)) {
			t.Fatalf("joined %v, err %v", joined, err)
		}
	}
	t.Logf("the render began in %d of 200 calls", began)
}
