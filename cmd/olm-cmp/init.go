package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/olm-cmp/olm-cmp/internal/initspec"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/upgrade"
)

func newInitCmd() *cobra.Command {
	var (
		rf    registryFlags
		req   initspec.Request
		force bool
	)
	cmd := &cobra.Command{
		Use:   "init REF|DIR | --catalog CATALOG --package P",
		Short: "Write a first olm-cmp.yaml for a bundle, one that renders with --strict",
		Long: `Init writes DIR/olm-cmp.yaml (-d, default the working directory, which must
exist) for the bundle image or directory REF, or for the bundle a catalog (an
image or ./directory) chooses for --package, --channel and --version (a range):
  - the bundle pinned as olm-cmp resolve --write pins it (an image: its
    repository, its tag as spec.version and spec.digest; a catalog: the exact
    version chosen and its bundle's digest; a directory, relative to DIR);
  - the namespace the CSV suggests (operatorframework.io/suggested-namespace),
    else the package name, marked TODO; -n chooses it;
  - watchNamespaces when the operator cannot watch every namespace;
  - excludeFiles, the bundle files given with --exclude-file;
  - the alm-examples kinds, as a commented examples line;
  - every finding of the requirements report answered, each under a comment
    quoting it: clusterAPIs for an API to install (cert-manager for webhook
    certificates), accept for the rest, grouped by message, with a glob for
    the RBAC-only groups of the bundle's own API family (api:*.kubevirt.io).
The spec is rendered with --strict before it is written (the other YAML files
of DIR are its extra manifests, other tools' files left out): if that fails,
nothing is written. A bundle or catalog directory outside DIR's Git repository
is warned about: the plugin refuses it. Lines
marked TODO: are what init could not decide. An existing olm-cmp.yaml is never
replaced without --force; init writes nothing else, and writes atomically.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if req.Catalog != "" {
				if len(args) > 0 {
					return fmt.Errorf("give either a bundle (%s) or --catalog, not both", args[0])
				}
				return nil
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := initspec.CheckDir(req.Dir, force); err != nil {
				return err
			}
			if len(args) == 1 {
				if err := render.CheckRefArg("", args[0]); err != nil {
					return err
				}
				req.Ref = args[0]
			}
			if req.Catalog != "" {
				if err := render.DirOrImage("--catalog", "catalog", req.Catalog); err != nil {
					return err
				}
				if !render.IsDirRef(req.Catalog) && render.IsLocalDir(req.Catalog) {
					req.Catalog = "./" + req.Catalog // a directory that exists, as the shell completed it
				}
			}
			req.RepoRoot = upgrade.GitRepository(req.Dir)
			r, err := rf.renderer()
			if err != nil {
				return err
			}
			res, err := initspec.Build(cmd.Context(), r, req)
			if err != nil {
				return err
			}
			file, err := initspec.Write(req.Dir, res.Text, force)
			if err != nil {
				return err
			}
			printWarnings(cmd.ErrOrStderr(), res.Warnings)
			total, todo := initspec.Lines(res.Text)
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d lines; requirement findings answered: %d; entries marked TODO: %d (grep -n '# TODO:' %s); it renders with olm-cmp render --strict %s\n",
				file, total, res.Findings, todo, file, req.Dir)
			if len(res.LeftOut) > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "left out of the extra manifests, as other tools' files (spec.extraManifests.exclude; remove an entry to render that file): %s\n", initspec.OtherToolsNote(res.LeftOut))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&req.Dir, "dir", "d", ".", "directory to write olm-cmp.yaml into (it must exist; its other YAML files are the spec's extra manifests)")
	f.BoolVar(&force, "force", false, "replace an existing olm-cmp.yaml")
	f.StringVarP(&req.Namespace, "namespace", "n", "", "install namespace (default: the CSV's suggested namespace, else the package name)")
	f.StringVar(&req.Catalog, "catalog", "", "file-based catalog image or ./directory to choose the bundle from")
	f.StringVar(&req.Package, "package", "", "package to choose from --catalog")
	f.StringVar(&req.Channel, "channel", "", "channel(s) of --package, comma-separated; default every channel")
	f.StringVar(&req.Version, "version", "", "with --catalog a version range (1.2.x, \">=1.0.0 <2\"; default the newest), with an image its tag")
	f.StringArrayVar(&req.ExcludeFiles, "exclude-file", nil, "bundle file to skip unread (spec.excludeFiles), repeatable: manifests/broken.yaml, as a load error names it")
	rf.register(f)
	return cmd
}
