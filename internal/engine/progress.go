package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// progress records the phases of one request (resolving, loading,
// rendering), so that a request its deadline cut short can say what was
// slow.
type progress struct {
	mu     sync.Mutex
	phases []phase
	shared *progress // the owner's, once this request joined its render
}

type phase struct {
	name  string
	began time.Time
}

func (p *progress) enter(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.phases = append(p.phases, phase{name, time.Now()})
}

// joined notes that the request waits for owner's render.
func (p *progress) joined(owner *progress) {
	p.mu.Lock()
	p.shared = owner
	p.mu.Unlock()
	p.enter("waiting for an identical request's render")
}

// describe says how long each phase took and what the request was still
// doing at now: "resolving the bundle reference took 0.2s; still loading
// the bundle after 59.8s".
func (p *progress) describe(now time.Time) string {
	p.mu.Lock()
	phases := append([]phase(nil), p.phases...)
	shared := p.shared
	p.mu.Unlock()
	if len(phases) == 0 {
		return "it had not begun"
	}
	var b strings.Builder
	for i, ph := range phases[:len(phases)-1] {
		fmt.Fprintf(&b, "%s took %s; ", ph.name, round(phases[i+1].began.Sub(ph.began)))
	}
	last := phases[len(phases)-1]
	fmt.Fprintf(&b, "still %s after %s", last.name, round(now.Sub(last.began)))
	if shared != nil && shared != p {
		if s := shared.current(); s != "" {
			fmt.Fprintf(&b, " (that render was %s)", s)
		}
	}
	return b.String()
}

// current names the phase p is in.
func (p *progress) current() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.phases) == 0 {
		return ""
	}
	return p.phases[len(p.phases)-1].name
}

func round(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

// StoppedError is the error of a request whose context ended before its
// render did: Cause is the context's (context.DeadlineExceeded, or the
// cause its creator gave), Progress what the request was still doing.
type StoppedError struct {
	Cause    error
	Progress string
}

func (e *StoppedError) Error() string { return e.Progress }
func (e *StoppedError) Unwrap() error { return e.Cause }

// stopped is ctx's error for a request whose render had not ended.
func stopped(ctx context.Context, p *progress) error {
	return &StoppedError{Cause: context.Cause(ctx), Progress: p.describe(time.Now())}
}
