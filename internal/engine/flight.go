package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/olm-cmp/olm-cmp/internal/render"
)

// flights runs one render per key at a time: concurrent identical requests
// share it. (x/sync/singleflight cannot say when every caller has gone,
// which is when a shared render must stop, so this is its own small group.)
//
// A shared render runs in a goroutine of its own, under a context detached
// from every request's cancellation: one request giving up (its deadline, a
// client that went away) fails no other. It is cancelled when the last
// request waiting for it gives up, so a render nobody waits for stops
// burning CPU (as soon as the step it is in checks its context).
//
// The render reads the source directory of the request that started it,
// its owner, which the transport removes once the owner's Render returns;
// so the owner waits for the render to end even when its own context ended
// first (Engine.Render still answers the caller at once: see Info.Running).
//
// A panic in the render becomes a *PanicError for every request waiting for
// it, and the key is free for the next request.
type flights struct {
	mu    sync.Mutex
	calls map[string]*flight
}

// flight is one shared render.
type flight struct {
	done    chan struct{} // closed when the render has returned
	res     *render.Result
	err     error
	waiters int // requests waiting for it, the owner included
	cancel  context.CancelCauseFunc
	owner   *progress // what the render is doing, for its waiters' errors
}

// errNobodyWaits is the cause that ends a render every request left.
var errNobodyWaits = errors.New("every request waiting for this render gave up")

// PanicError is a render's panic, turned into the error of each request
// that waited for it. Transports log Stack and answer with Error().
type PanicError struct {
	Value any
	Stack []byte
}

func (p *PanicError) Error() string {
	return fmt.Sprintf("internal error: the render panicked: %v", p.Value)
}

// do returns fn's result for key, running fn only if no render of key is
// in flight. joined reports that another request's render answered. When
// ctx ends first, do returns a *StoppedError (after the render ended, for
// its owner).
func (f *flights) do(ctx context.Context, key string, p *progress, fn func(context.Context, *progress) (*render.Result, error)) (res *render.Result, joined bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, stopped(ctx, p)
	}
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string]*flight{}
	}
	c, joined := f.calls[key]
	if !joined {
		// WithoutCancel keeps the owner's values (loggers, causes) and
		// drops its deadline and cancellation: waiters decide when to stop.
		rctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
		c = &flight{done: make(chan struct{}), cancel: cancel, owner: p}
		f.calls[key] = c
		go f.run(rctx, key, c, fn)
	} else {
		p.joined(c.owner)
	}
	c.waiters++
	f.mu.Unlock()

	select {
	case <-c.done:
		f.leave(key, c)
		return c.res, joined, c.err
	case <-ctx.Done():
		f.leave(key, c)
		if !joined {
			<-c.done // the render reads our source directory: wait for it
		}
		return nil, joined, stopped(ctx, p)
	}
}

// run runs the render of c and publishes its result.
func (f *flights) run(ctx context.Context, key string, c *flight, fn func(context.Context, *progress) (*render.Result, error)) {
	defer func() {
		if r := recover(); r != nil {
			c.res, c.err = nil, &PanicError{Value: r, Stack: debug.Stack()}
		}
		c.cancel(nil)
		f.mu.Lock()
		if f.calls[key] == c {
			delete(f.calls, key)
		}
		f.mu.Unlock()
		close(c.done)
	}()
	c.res, c.err = fn(ctx, c.owner)
}

// leave counts a waiter out of c; the last one out cancels the render, and
// frees the key so that a new request starts afresh rather than join a
// render that is stopping.
func (f *flights) leave(key string, c *flight) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c.waiters--
	if c.waiters > 0 {
		return
	}
	if f.calls[key] == c {
		delete(f.calls, key)
	}
	c.cancel(errNobodyWaits)
}
