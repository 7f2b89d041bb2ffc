package catalog

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
)

// A YAML catalog is split into documents at "---" lines; a line longer than
// the reader's buffer arrives in pieces, and a piece that happens to start
// with "---" is the middle of a line, not a document start. Taking it for
// one would read a bundle hidden inside a description, one that opm (and
// so OLM) never sees, and choose it.
func TestYAMLDocumentStartOnlyAtALineStart(t *testing.T) {
	const indent = "      "
	hidden := "--- {schema: olm.bundle, name: p.v9.0.0, package: p, image: example.com/evil, properties: [{type: olm.package, value: {packageName: p, version: 9.0.0}}]}"
	pad := strings.Repeat("x", 64<<10-len(indent))
	catalog := `schema: olm.package
name: p
---
schema: olm.bundle
name: p.v1.0.0
package: p
image: example.com/good
properties:
- type: olm.package
  value: {packageName: p, version: 1.0.0}
- type: olm.csv.metadata
  value:
    description: |
` + indent + pad + hidden + "\n"
	img, v, err := Choose(context.Background(), fstest.MapFS{"c.yaml": {Data: []byte(catalog)}}, Query{Package: "p"})
	if err != nil || img != "example.com/good" || v != "1.0.0" {
		t.Fatalf("chose %q %q, %v; want example.com/good 1.0.0, the only bundle of the catalog", img, v, err)
	}
}
