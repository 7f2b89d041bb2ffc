package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/catalog"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/versions"
)

func newVersionsCmd() *cobra.Command {
	var (
		rf                        registryFlags
		output                    string
		catalogRef, pkg, channels string
	)
	cmd := &cobra.Command{
		Use:   "versions REF | --catalog C --package P",
		Short: "List a bundle repository's versions (its tags by semver), or a catalog package's channels, heads, upgrade edges and deprecations",
		Long: `Versions answers which versions of an operator exist.

For REF, a bundle image repository (a tag or digest in REF is ignored), it lists
every tag, all pages of the registry's list: the tags that are semantic versions
(v1.2.3 or 1.2.3, pre-releases too; build metadata after "_", as a tag cannot
hold "+"), lowest first, then the others (latest, 1.2, signatures) apart.

With --catalog (a catalog image or ./directory) and --package instead, it shows
the package's channels (--channel: only those, comma-separated), each with its
head (the entry no other entry replaces or skips, as OLM computes it) and every
version in it, lowest first, with the upgrade edges its channel entry declares
(replaces, skips, skipRange) and whether it, its channel or the package is
deprecated. What opm validate would refuse says so: a channel with no head or
several, a replaces cycle or stranded entries, a bundle in no channel, a
default channel or deprecation naming nothing.

Exit status: 0 listed, 1 failure (the repository or package is not there, the
registry or catalog could not be read).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if catalogRef != "" {
				if len(args) > 0 {
					return fmt.Errorf("versions takes REF (a bundle repository) or --catalog with --package, not both")
				}
				return nil
			}
			if pkg != "" || channels != "" {
				return fmt.Errorf("--package and --channel need --catalog")
			}
			if len(args) != 1 || strings.TrimSpace(args[0]) == "" {
				return fmt.Errorf("versions takes one bundle repository (quay.io/org/operator-bundle), or --catalog C --package P")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "text" && output != "json" {
				return fmt.Errorf("--output %s: use text or json", echo.Quote(output))
			}
			loader, err := rf.loader()
			if err != nil {
				return err
			}
			var report interface{ WriteText(io.Writer) error }
			if catalogRef != "" {
				if pkg == "" {
					return fmt.Errorf("--catalog needs --package: the package whose versions to list")
				}
				report, err = catalogVersions(cmd.Context(), loader, catalogRef, pkg, channels)
			} else {
				report, err = tagVersions(cmd.Context(), loader, args[0])
			}
			if err != nil {
				return err
			}
			if pr, ok := report.(*versions.PackageReport); ok && output == "json" {
				if n := pr.JSONSize(); n > versions.MaxJSONReport {
					return fmt.Errorf("the -o json report of package %s would be over %d MiB (every entry repeats the channels listing its bundle, and this package lists its bundles in many channels): show fewer channels with --channel, or use the text output", echo.Quote(pr.Package), versions.MaxJSONReport>>20)
				}
			}
			if output == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(report)
			}
			return report.WriteText(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	cmd.Flags().StringVar(&catalogRef, "catalog", "", "file-based catalog image or ./directory whose package to show")
	cmd.Flags().StringVar(&pkg, "package", "", "package of --catalog")
	cmd.Flags().StringVar(&channels, "channel", "", "only these channels of --package, comma-separated; default every channel")
	rf.register(cmd.Flags())
	return cmd
}

// openCatalog opens --catalog: an image (pulled, cached by digest, with
// its per-package index beside it) or a directory. image is the catalog
// image pinned by digest ("" for a directory).
func openCatalog(ctx context.Context, loader *bundle.ImageLoader, ref string) (fsys fs.FS, image string, done func(), err error) {
	ref, err = render.CatalogArg(ref)
	if err != nil {
		return nil, "", nil, err
	}
	if render.IsLocalDir(ref) {
		root, err := os.OpenRoot(ref)
		if err != nil {
			return nil, "", nil, fmt.Errorf("--catalog %s: %w", echo.Quote(ref), err)
		}
		return catalog.Open(root.FS(), ""), "", func() { root.Close() }, nil
	}
	fsys, o, err := loader.LoadCatalog(ctx, ref)
	if err != nil {
		return nil, "", nil, fmt.Errorf("--catalog %s: %w", echo.Quote(ref), err)
	}
	return catalog.Open(fsys, bundle.CatalogIndexFile(o.Dir)), o.Image, func() {}, nil
}

// tagVersions is `versions REF`: REF checked to be a repository with its
// registry, then its tags.
func tagVersions(ctx context.Context, loader *bundle.ImageLoader, ref string) (*versions.TagsReport, error) {
	if render.IsLocalDir(ref) {
		return nil, fmt.Errorf("%s is a directory: versions REF lists the tags of a bundle image repository (quay.io/org/operator-bundle); for a catalog directory give --catalog %s --package P", echo.Short(ref), echo.Short(ref))
	}
	if !render.HasRegistry(ref) {
		last := ref[strings.LastIndexByte(ref, '/')+1:]
		return nil, fmt.Errorf("%s: not an image repository with its registry: give it as quay.io/org/%s (docker.io/org/%s for Docker Hub)", echo.Short(ref), echo.Short(last), echo.Short(last))
	}
	return versions.Tags(ctx, loader, ref)
}

// catalogVersions is `versions --catalog C --package P`.
func catalogVersions(ctx context.Context, loader *bundle.ImageLoader, ref, pkg, channels string) (*versions.PackageReport, error) {
	fsys, image, done, err := openCatalog(ctx, loader, ref)
	if err != nil {
		return nil, err
	}
	defer done()
	return versions.Report(ctx, fsys, ref, image, pkg, channels)
}
