package bundle

import (
	"crypto/sha256"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/yamlsafe"

	"github.com/olm-cmp/olm-cmp/internal/bytecache"
)

// ParseCache keeps the parsed documents of manifest files, keyed by a
// sha256 of their content, least recently used first out. Copying a parsed
// tree costs about a tenth of parsing it (sail-operator's 3 MB of CRDs), and
// the plugin loads the same bundles on every refresh. Each load gets its own
// copy: a Bundle owns its nodes, so the cache is never shared with one
// (renders do not modify bundles, but a bundle's holder may). Files with YAML
// anchors are not cached: a copied alias would still point into the cached
// tree. Safe for concurrent use; a nil *ParseCache caches nothing.
type ParseCache struct {
	files *bytecache.Cache[[32]byte, parsedFile]
}

// parsedFile is a file's documents once parsed and rid of the keys they
// repeat with their value, and those keys (dropRepeatedKeys): a cached
// file is not walked again.
type parsedFile struct {
	docs    []*yaml.Node
	repeats []yamlsafe.RepeatedKey
	marked  bool // a document holds an anchor or an alias
}

// NewParseCache returns a cache holding files of up to maxBytes of source
// in total. Parsed trees take roughly eight times their source size in
// memory, so 32 MiB of source is about 250 MiB of heap.
func NewParseCache(maxBytes int64) *ParseCache {
	return &ParseCache{files: bytecache.New[[32]byte, parsedFile](0, maxBytes, 0)}
}

// parse returns the documents of data, without the keys they repeat with
// their value, and those keys; from the cache when it can. A key repeated
// with another value is an error (a *yamlsafe.ConflictError).
func (c *ParseCache) parse(data []byte) (parsedFile, error) {
	if c == nil {
		return parseFile(data)
	}
	key := sha256.Sum256(data)
	if f, ok := c.files.Get(key); ok {
		f.docs = copyDocs(f.docs)
		return f, nil
	}
	f, err := parseFile(data)
	if err != nil || f.marked {
		return f, err
	}
	if !c.files.Add(key, f, int64(len(data))) {
		return f, nil // too big, or kept meanwhile by another load: nobody else holds f.docs
	}
	f.docs = copyDocs(f.docs)
	return f, nil
}

// parseFile parses a manifest file and drops the keys it repeats with
// their value.
func parseFile(data []byte) (parsedFile, error) {
	docs, marked, err := parseDocuments(data)
	if err != nil {
		return parsedFile{}, err
	}
	repeats, err := yamlsafe.DropRepeatedKeys(docs...)
	if err != nil {
		return parsedFile{}, repeatError(err)
	}
	return parsedFile{docs, repeats, marked}, nil
}

func copyDocs(docs []*yaml.Node) []*yaml.Node {
	out := make([]*yaml.Node, len(docs))
	for i, d := range docs {
		if d != nil {
			out[i] = yamlsafe.CopyTree(d)
		}
	}
	return out
}
