// Command olm-cmp renders OLM registry+v1 operator bundles into plain,
// ordered Kubernetes manifests, as a CLI or as an Argo CD config-management
// plugin server.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// version is stamped at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "olm-cmp",
		Short: "Install OLM-packaged operators with Argo CD, without OLM",
		Long: `olm-cmp converts an OLM registry+v1 bundle (image or directory) exactly as OLM
would, applies the patches a cluster without OLM needs, orders the result with
Argo CD sync waves, and serves it to argocd-repo-server as a config-management plugin.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		newRenderCmd(),
		newInspectCmd(),
		newDiffCmd(),
		newVersionCmd(),
		newServeCmd(),
		newGenerateCmd(),
	)
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the olm-cmp version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "olm-cmp %s\n", version)
			return err
		},
	}
}
