// Package bytecache is a least-recently-used cache bounded by its number of
// entries and by the bytes they hold. golang-lru/v2 keeps the order; this
// package keeps the byte count. The render cache (internal/engine) and the
// bundle parse cache (internal/bundle) both use it, so there is one eviction
// policy to reason about.
package bytecache

import (
	"math"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Cache maps keys to values of a known size. It is safe for concurrent use.
type Cache[K comparable, V any] struct {
	mu       sync.Mutex
	lru      *simplelru.LRU[K, entry[V]]
	bytes    int64
	maxBytes int64
	maxEntry int64
}

type entry[V any] struct {
	v    V
	size int64
}

// New returns a cache of at most maxEntries entries (0 means no bound on the
// count) holding at most maxBytes bytes. An entry larger than maxEntry bytes
// is never kept (0 means maxBytes): one huge value must not flush everything
// else.
func New[K comparable, V any](maxEntries int, maxBytes, maxEntry int64) *Cache[K, V] {
	if maxEntries <= 0 {
		maxEntries = math.MaxInt
	}
	if maxEntry <= 0 || maxEntry > maxBytes {
		maxEntry = maxBytes
	}
	c := &Cache[K, V]{maxBytes: maxBytes, maxEntry: maxEntry}
	// The callback runs inside lru's calls, which c.mu already guards.
	c.lru, _ = simplelru.NewLRU(maxEntries, func(_ K, e entry[V]) { c.bytes -= e.size })
	return c
}

// Get returns the value of k and marks it recently used.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.lru.Get(k)
	return e.v, ok
}

// Add keeps v under k, evicting the least recently used entries past the
// byte bound, and reports whether v is kept. A key already present keeps its
// value: concurrent producers of one key made equal values, and the one
// handed out first stays the one handed out.
func (c *Cache[K, V]) Add(k K, v V, size int64) bool {
	if size > c.maxEntry {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lru.Contains(k) {
		return false
	}
	c.lru.Add(k, entry[V]{v: v, size: size})
	c.bytes += size
	for c.bytes > c.maxBytes {
		if _, _, ok := c.lru.RemoveOldest(); !ok {
			break
		}
	}
	return true
}

// Len is the number of entries.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Bytes is the total size of the entries.
func (c *Cache[K, V]) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
