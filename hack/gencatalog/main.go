// Command gencatalog writes a synthetic file-based catalog shaped like a
// vendor index (internal/catalog/catalogtest), for sizing and benchmarks:
//
//	go run ./hack/gencatalog -bundles 10000 -out /tmp/catalog
//
// 1,000 bundles are about 13 MB, 10,000 about 131 MB, 50,000 about 650 MB.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/olm-cmp/olm-cmp/internal/catalog/catalogtest"
)

func main() {
	var o catalogtest.Options
	out := flag.String("out", "", "directory to write the catalog into (required)")
	flag.IntVar(&o.Bundles, "bundles", 1000, "number of bundles")
	flag.IntVar(&o.PerPackage, "per-package", 40, "bundles per package")
	flag.StringVar(&o.ImagePrefix, "image-prefix", "example.com/vendor", "registry and namespace of the bundle images")
	flag.BoolVar(&o.SingleFile, "single-file", false, "write one catalog.json instead of one per package")
	flag.Parse()
	if *out == "" || o.Bundles <= 0 {
		fmt.Fprintln(os.Stderr, "gencatalog: give -out DIR and -bundles N (N > 0)")
		os.Exit(2)
	}
	n, err := catalogtest.Generate(*out, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gencatalog:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %d bundles (%.1f MB) to %s\n", o.Bundles, float64(n)/1e6, *out)
}
