// Command ociimage builds olm-cmp's image as an OCI image layout, without
// Docker, and pushes it (hack/ociimage; make image, make image-push).
//
//	go run ./hack/cmd/ociimage build -out bin/oci -version v0.2.0   # SOURCE_DATE_EPOCH from the environment
//	go run ./hack/cmd/ociimage push -layout bin/oci registry.example.com/olm-cmp:v0.2.0
//	go run ./hack/cmd/ociimage pin -tag v0.2.0 -digest sha256:…   # deploy/ names the pushed image
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/olm-cmp/olm-cmp/hack/ociimage"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: ociimage build|push|pin [flags]")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	switch args[0] {
	case "build":
		out := fs.String("out", "bin/oci", "OCI image layout directory to write (replaced)")
		platforms := fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated os/arch")
		version := fs.String("version", "dev", "version stamped into the binary and naming the index")
		sbomFile := fs.String("sbom", "", "also write the SBOM (CycloneDX JSON) to this file")
		ca := fs.String("ca-certs", ociimage.DefaultCACerts, "PEM bundle installed at "+ociimage.CACertsPath+" (Debian's ca-certificates)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		epochStr := os.Getenv("SOURCE_DATE_EPOCH")
		if epochStr == "" {
			return fmt.Errorf("SOURCE_DATE_EPOCH is not set: set it to the commit's time (git log -1 --format=%%ct), as make image does")
		}
		epoch, err := strconv.ParseInt(epochStr, 10, 64)
		if err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH=%q: not a number of seconds", epochStr)
		}
		res, err := ociimage.Build(*out, ociimage.Options{
			Repo: ".", Platforms: strings.Split(*platforms, ","), Version: *version,
			Epoch: time.Unix(epoch, 0).UTC(), CACerts: *ca, SBOMFile: *sbomFile,
		})
		if err != nil {
			return err
		}
		fmt.Printf("%s: index %s (%s)\n", *out, res.Index, *version)
		ps := make([]string, 0, len(res.Image))
		for p := range res.Image {
			ps = append(ps, p)
		}
		sort.Strings(ps)
		for _, p := range ps {
			fmt.Printf("  %-12s %s  %.1f MiB compressed\n", p, res.Image[p], float64(res.Size[p])/(1<<20))
		}
		fmt.Printf("  sbom         %s  (CycloneDX JSON, referrer of the index)\n", res.SBOM)
	case "push":
		dir := fs.String("layout", "bin/oci", "OCI image layout directory (make image)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return fmt.Errorf("push: give the image reference, e.g. registry.example.com/olm-cmp:v0.2.0")
		}
		d, err := ociimage.Push(*dir, fs.Arg(0), remote.WithAuthFromKeychain(authn.DefaultKeychain))
		if err != nil {
			return err
		}
		ref := fs.Arg(0)
		if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
			ref = ref[:i]
		}
		fmt.Printf("%s@%s\n", ref, d)
	case "pin":
		deploy := fs.String("deploy", "deploy", "the deploy/ directory")
		tag := fs.String("tag", "", "release tag, e.g. v0.2.0")
		digest := fs.String("digest", "", "the pushed index's digest, sha256:...")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		p, err := ociimage.ReadPin(*deploy)
		if err != nil {
			return err
		}
		p.Tag, p.Digest = *tag, *digest
		if err := ociimage.WritePin(*deploy, p); err != nil {
			return err
		}
		fmt.Println(p.Ref())
	default:
		return fmt.Errorf("unknown command %q: use build, push or pin", args[0])
	}
	return nil
}
