package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/upgrade"
)

func newUpgradeCmd() *cobra.Command {
	var (
		rf       registryFlags
		write    bool
		policy   string
		output   string
		root     string
		from     []string
		repoURLs []string
	)
	cmd := &cobra.Command{
		Use:   "upgrade [DIR...]",
		Short: "Find the version each application may move to, check it is safe, and with --write bump it where the repository keeps it",
		Long: `Upgrade answers, for each application directory (one holding olm-cmp.yaml; a
directory above them stands for all of them; default: the working directory),
which version it renders today, which versions it may move to and which one it
would choose:
  a catalog         OLM v1's successors of the running bundle (replaces, skips or
                    skipRange name it; deprecated last, then the highest) within the
                    spec's channels and version range (--policy olmv1, default), or
                    OLM v0's one hop along the channel (--policy olmv0);
  an image bundle   the repository's newer semver tags whose CSV replaces or skips
                    the running one or has an olm.skipRange holding its version.
The move is judged by olm-cmp diff's safety check (CRD upgrade safety, the
upgrade edge under the spec's upgradeConstraintPolicy, which the report names). With --write, the version is changed where the repository keeps
it: olm-cmp.yaml (spec.version or the tag of spec.bundle), or the version
parameter (or plugin env) of the Argo CD Application or ApplicationSet list
element in the same repository whose path is the directory; the digest pin
moves with it (the new bundle image's digest), and upgradeFrom is set to the
version left, so the plugin checks the upgrade again. Comments and layout are
kept; a second run changes nothing. An unsafe upgrade is written too, so that
a bot can open a draft pull request that says why.
Exit status: 0 nothing to move to, 2 an upgrade available (or written) and
safe, 3 an upgrade available (or written) but blocked by a safety error or a
render error, 1 a failure (the report still lists every application).
See docs/upgrade.md.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var p upgrade.Policy
			switch policy {
			case "olmv1", "v1":
				p = upgrade.OLMv1
			case "olmv0", "v0":
				p = upgrade.OLMv0
			default:
				return fmt.Errorf("--policy %s: use olmv1 (OLM v1's successors, the default) or olmv0 (one hop along the channel)", echo.Quote(policy))
			}
			if output != "text" && output != "json" {
				return fmt.Errorf("--output %s: use text or json", echo.Quote(output))
			}
			if len(args) == 0 {
				args = []string{"."}
			}
			dirs, err := upgrade.Dirs(cmd.Context(), args)
			if err != nil {
				return err
			}
			loader, err := rf.loader()
			if err != nil {
				return err
			}
			loader, admit, err := rf.projectLoader(loader)
			if err != nil {
				return err
			}
			if root == "" {
				if root, err = upgrade.RepoRoot(dirs[0]); err != nil {
					return err
				}
			}
			var ix *upgrade.Index
			if len(from) != 1 || from[0] != "none" {
				if ix, err = upgrade.Scan(cmd.Context(), root, from...); err != nil {
					return err
				}
				if err := ix.AddRepoURLs(repoURLs...); err != nil {
					return err
				}
			}
			rep := upgrade.Run(cmd.Context(), upgrade.Options{Policy: p, Write: write, Loader: loader, Admit: admit, Index: ix}, dirs)
			w := cmd.OutOrStdout()
			if output == "json" {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else {
				rep.WriteText(w, write)
			}
			if code := rep.ExitStatus(); code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
	rf.register(cmd.Flags())
	rf.registerTenancy(cmd.Flags(), true)
	f := cmd.Flags()
	f.BoolVar(&write, "write", false, "write the chosen version, its digest and upgradeFrom where the repository keeps the version")
	f.StringVar(&policy, "policy", "olmv1", "how a catalog's next version is chosen: olmv1 (the best successor) or olmv0 (one hop along the channel)")
	f.StringVarP(&output, "output", "o", "text", "text, or json (docs/upgrade.md)")
	f.StringVar(&root, "repo-root", "", "where to look for the Argo CD Applications and ApplicationSets that pass versions (default: the Git work tree holding the first DIR)")
	f.StringArrayVar(&repoURLs, "repo-url", nil, "a URL Argo CD Applications name this repository by, besides its Git remotes (repeatable: a mirror's, or when the checkout has no remote); an Application whose repoURL is another repository is skipped")
	f.StringArrayVar(&from, "apps-from", nil, "read Applications and ApplicationSets from these files or directories of the repository only (repeatable; none: from no manifest, the versions are in olm-cmp.yaml)")
	return cmd
}
