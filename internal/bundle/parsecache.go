package bundle

import (
	"container/list"
	"crypto/sha256"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ParseCache keeps the parsed documents of manifest files, keyed by a
// sha256 of their content, least recently used first out. Copying a parsed
// tree costs about a tenth of parsing it (sail-operator's 3 MB of CRDs), and
// the plugin loads the same bundles on every refresh. Callers always get
// their own copy, so renderers may edit nodes freely. Files with YAML
// anchors are not cached: a copied alias would still point into the cached
// tree. Safe for concurrent use; a nil *ParseCache caches nothing.
type ParseCache struct {
	mu       sync.Mutex
	maxBytes int64
	bytes    int64
	order    *list.List // of *parsedFile, most recently used at the front
	entries  map[[32]byte]*list.Element
}

type parsedFile struct {
	key  [32]byte
	size int64
	docs []*yaml.Node
}

// NewParseCache returns a cache holding files of up to maxBytes of source
// in total. Parsed trees take roughly eight times their source size in
// memory, so 32 MiB of source is about 250 MiB of heap.
func NewParseCache(maxBytes int64) *ParseCache {
	return &ParseCache{maxBytes: maxBytes, order: list.New(), entries: map[[32]byte]*list.Element{}}
}

// parse returns the documents of data, from the cache when it can.
func (c *ParseCache) parse(data []byte) ([]*yaml.Node, error) {
	if c == nil {
		return parseDocuments(data)
	}
	key := sha256.Sum256(data)
	c.mu.Lock()
	if e, ok := c.entries[key]; ok {
		c.order.MoveToFront(e)
		docs := e.Value.(*parsedFile).docs
		c.mu.Unlock()
		return copyDocs(docs), nil
	}
	c.mu.Unlock()

	docs, err := parseDocuments(data)
	if err != nil || int64(len(data)) > c.maxBytes {
		return docs, err
	}
	for _, d := range docs {
		if d != nil && hasAnchors(d) {
			return docs, nil
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok { // another load may have added it meanwhile
		c.entries[key] = c.order.PushFront(&parsedFile{key: key, size: int64(len(data)), docs: docs})
		c.bytes += int64(len(data))
		for c.bytes > c.maxBytes {
			last := c.order.Back()
			p := last.Value.(*parsedFile)
			c.order.Remove(last)
			delete(c.entries, p.key)
			c.bytes -= p.size
		}
	}
	return copyDocs(docs), nil
}

func copyDocs(docs []*yaml.Node) []*yaml.Node {
	out := make([]*yaml.Node, len(docs))
	for i, d := range docs {
		if d != nil {
			out[i] = yaml.CopyYNode(d)
		}
	}
	return out
}
