// Package enginetest holds a fake bundle loader for the tests of the engine
// and of the transports that call it: bundle directories served as if they
// were images, with the registry work counted.
package enginetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// Loader implements render.Loader. Resolve pins an image reference it knows
// to its digest; Load loads the reference's directory after Delay (or until
// the context ends).
type Loader struct {
	// Delay makes loads slow enough for concurrent requests to overlap.
	Delay time.Duration
	// BeforeLoad, when set, is called with the load's number (1, 2, …)
	// first; an error it returns is the load's (tests make loads fail, or
	// panic in it).
	BeforeLoad func(n int32) error
	// BeforeCtx, when set, is handed each load's context (tests watch the
	// load being cancelled).
	BeforeCtx func(ctx context.Context)
	// Resolves and Loads count the calls.
	Resolves, Loads atomic.Int32

	mu      sync.Mutex
	dirs    map[string]string // image reference -> bundle directory
	digests map[string]string // image reference -> digest
}

// NewLoader serves dir as the image ref, pinned at digest.
func NewLoader(ref, dir, digest string) *Loader {
	l := &Loader{dirs: map[string]string{}, digests: map[string]string{}}
	l.Add(ref, dir, digest)
	return l
}

// Add serves dir as the image ref, pinned at digest.
func (l *Loader) Add(ref, dir, digest string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dirs[ref], l.digests[ref] = dir, digest
}

// SetDigest moves the tag ref to digest (same content).
func (l *Loader) SetDigest(ref, digest string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.digests[ref] = digest
}

// Resolve implements render.Loader.
func (l *Loader) Resolve(_ context.Context, ref string) (bundle.Origin, error) {
	l.Resolves.Add(1)
	l.mu.Lock()
	d, ok := l.digests[ref]
	l.mu.Unlock()
	if !ok {
		return bundle.Origin{}, fmt.Errorf("resolving %s: MANIFEST_UNKNOWN: the image does not exist in the registry", ref)
	}
	repo, _, _ := strings.Cut(ref, ":")
	return bundle.Origin{Ref: ref, Image: repo + "@" + d, Digest: d}, nil
}

// Load implements render.Loader.
func (l *Loader) Load(ctx context.Context, o bundle.Origin) (*bundle.Bundle, error) {
	n := l.Loads.Add(1)
	if l.BeforeCtx != nil {
		l.BeforeCtx(ctx)
	}
	if l.BeforeLoad != nil {
		if err := l.BeforeLoad(n); err != nil {
			return nil, err
		}
	}
	select {
	case <-time.After(l.Delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	l.mu.Lock()
	dir := l.dirs[o.Ref]
	l.mu.Unlock()
	if o.Image == "" {
		dir = o.Dir // a directory bundle
	}
	b, err := bundle.LoadDir(dir)
	if err != nil {
		return nil, err
	}
	if o.Image != "" {
		b.Origin = o
	} else {
		b.Origin.Ref = o.Ref
	}
	return b, nil
}
