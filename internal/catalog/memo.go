package catalog

import (
	"context"
	"sync"
)

// Memo keeps the packages read from catalogs for the length of one run of
// a command that reads one catalog several times (`olm-cmp upgrade`: the
// render's choice of today's version, the successors, the new version's
// choice and the safety check's upgrade graph). A catalog directory has no
// digest to key an on-disk index on, so without a Memo each of those reads
// streams the whole directory again. The run owns the Memo and assumes the
// catalog does not change while it runs; a long-lived server must not use
// one (a repository's files change with every commit).
type Memo struct {
	mu sync.Mutex
	m  map[memoKey]*memoEntry
}

type memoKey struct{ catalog, pkg string }

type memoEntry struct {
	mu   sync.Mutex // held during the first read: later readers wait for it
	done bool
	p    *fbcPackage
	err  error
}

// NewMemo returns an empty Memo.
func NewMemo() *Memo { return &Memo{m: map[memoKey]*memoEntry{}} }

// Remember returns c reading through m: key names the catalog (its
// directory, or its image pinned by digest), so every Catalog opened with
// the same key shares the packages read. A nil m returns c.
func (c *Catalog) Remember(m *Memo, key string) *Catalog {
	if m == nil {
		return c
	}
	out := *c
	out.memo, out.key = m, key
	return &out
}

// recall reads package name once per Memo and key, errors included (the
// same catalog gives the same answer) except a read cut short by ctx;
// read is the read to do the first time. The package is shared: its readers
// must not modify it.
func (m *Memo) recall(ctx context.Context, key, name string, read func() (*fbcPackage, error)) (*fbcPackage, error) {
	m.mu.Lock()
	e := m.m[memoKey{key, name}]
	if e == nil {
		e = &memoEntry{}
		m.m[memoKey{key, name}] = e
	}
	m.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.done {
		p, err := read()
		if err != nil && ctx.Err() != nil {
			return nil, err
		}
		e.p, e.err, e.done = p, err, true
	}
	return e.p, e.err
}
