package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/inspect"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/requirements"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

func newInspectCmd() *cobra.Command {
	var (
		rf                              registryFlags
		output                          string
		catalog, pkg, channel, versions string
		bundleRef                       string
		strict                          bool
	)
	cmd := &cobra.Command{
		Use:   "inspect REF|DIR [--bundle REF|DIR] | --catalog CATALOG --package P",
		Short: "Summarise a bundle: package, version, install modes, CRDs, deployments, webhooks, images",
		Long: `Inspect summarises the bundle image or directory REF. With --catalog (a
catalog image or ./directory) and --package instead, it first shows which
bundle the catalog chooses for --channel and --version (a range), as a spec
naming that catalog would render.

Requirements lists what the operator needs from a cluster without OLM or
OpenShift (docs/requirements.md): for a source directory holding olm-cmp.yaml,
as its spec renders it; otherwise as a default spec would. --bundle replaces
the bundle a source directory's spec names (as render's --bundle does: an
image, or a directory relative to the working directory), so an example
whose spec names an image can be inspected from a local copy of its bundle;
alone, it names the bundle to inspect. --strict exits non-zero when a
finding is not accepted.`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case catalog != "":
				return cobra.NoArgs(cmd, args)
			case cmd.Flags().Changed("bundle"):
				return cobra.MaximumNArgs(1)(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := rf.renderer()
			if err != nil {
				return err
			}
			var b *bundle.Bundle
			var cat *inspect.Catalog
			var rv *render.Resolved
			switch {
			case catalog != "":
				rv, b, cat, err = inspect.LoadFromCatalog(cmd.Context(), r, catalog, pkg, channel, versions)
			case pkg != "" || channel != "" || versions != "":
				return fmt.Errorf("--package, --channel and --version need --catalog")
			case len(args) == 0:
				rv, b, err = inspect.LoadRef(cmd.Context(), r, bundleRef)
			case render.NamesSource(args[0]):
				// Only the flags sf holds that were given apply.
				var sf *specFlags
				if cmd.Flags().Changed("bundle") {
					sf = &specFlags{bundle: bundleRef}
				}
				var req render.Request
				if req, err = loadRequest(cmd, args[0], sf); err == nil {
					rv, b, err = inspect.LoadRequest(cmd.Context(), r, req)
				}
			case cmd.Flags().Changed("bundle"):
				return fmt.Errorf("--bundle replaces the bundle of a source directory's %s, and %s has none: inspect the bundle itself (olm-cmp inspect %s)", spec.FileName, args[0], bundleRef)
			default:
				rv, b, err = inspect.LoadRef(cmd.Context(), r, args[0])
			}
			if err != nil {
				return err
			}
			s, err := inspect.Report(cmd.Context(), rv, b, cat)
			if err != nil {
				return err
			}
			if err := writeSummary(cmd.OutOrStdout(), s, output); err != nil {
				return err
			}
			if pending := requirements.Pending(s.Requirements); strict && len(pending) > 0 {
				where := "listed above"
				if output == "json" {
					where = `the "requirements" entries of the JSON output with "accepted": false`
				}
				return fmt.Errorf("strict: %d requirement(s) not met (%s)", len(pending), where)
			}
			if strict && s.RequirementsError != "" {
				return fmt.Errorf("strict: no requirements report: %s", s.RequirementsError)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	cmd.Flags().BoolVar(&strict, "strict", false, "exit non-zero when a requirements finding is not accepted")
	cmd.Flags().StringVar(&catalog, "catalog", "", "file-based catalog image or ./directory to choose the bundle from")
	cmd.Flags().StringVar(&pkg, "package", "", "package to choose from --catalog")
	cmd.Flags().StringVar(&channel, "channel", "", "channel(s) of --package, comma-separated; default every channel")
	cmd.Flags().StringVar(&versions, "version", "", "version range for --package (1.2.x, \">=1.0.0 <2\"); default the newest")
	cmd.Flags().StringVar(&bundleRef, "bundle", "", "bundle image reference, or a directory relative to the working directory, replacing the one DIR/olm-cmp.yaml names (as render --bundle does)")
	rf.register(cmd.Flags())
	return cmd
}

// writeSummary prints the summary as text or JSON.
func writeSummary(out io.Writer, s *inspect.Summary, output string) error {
	switch output {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	case "text", "":
		return s.WriteText(out)
	}
	return fmt.Errorf("--output %q: use text or json", output)
}
