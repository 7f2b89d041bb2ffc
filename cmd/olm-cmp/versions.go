package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

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
				fsys, image, done, err := render.OpenCatalogArg(cmd.Context(), loader, catalogRef)
				if err != nil {
					return err
				}
				defer done()
				if report, err = versions.Report(cmd.Context(), fsys, catalogRef, image, pkg, channels); err != nil {
					return err
				}
			} else {
				if err := render.RepositoryArg(args[0]); err != nil {
					return err
				}
				report, err = versions.Tags(cmd.Context(), loader, args[0])
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
