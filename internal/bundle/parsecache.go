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
func (c *ParseCache) parse(data []byte) ([]*yaml.Node, []yamlsafe.RepeatedKey, error) {
	if c == nil {
		return parseFile(data)
	}
	key := sha256.Sum256(data)
	if f, ok := c.files.Get(key); ok {
		return copyDocs(f.docs), f.repeats, nil
	}
	docs, repeats, err := parseFile(data)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range docs {
		if d != nil && yamlsafe.HasAliases(d) {
			return docs, repeats, nil
		}
	}
	if !c.files.Add(key, parsedFile{docs, repeats}, int64(len(data))) {
		return docs, repeats, nil // too big, or kept meanwhile by another load: nobody else holds docs
	}
	return copyDocs(docs), repeats, nil
}

// parseFile parses a manifest file and drops the keys it repeats with
// their value.
func parseFile(data []byte) ([]*yaml.Node, []yamlsafe.RepeatedKey, error) {
	docs, err := ParseDocuments(data)
	if err != nil {
		return nil, nil, err
	}
	repeats, err := yamlsafe.DropRepeatedKeys(docs...)
	if err != nil {
		return nil, nil, repeatError(err)
	}
	return docs, repeats, nil
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
