package main

import (
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

func newResolveCmd() *cobra.Command {
	var (
		rf    registryFlags
		write bool
	)
	cmd := &cobra.Command{
		Use:   "resolve [DIR | DIR/olm-cmp.yaml]",
		Short: "Print the exact image@sha256 DIR/olm-cmp.yaml renders today; --write pins it in the file",
		Long: `Resolve pins the bundle of DIR/olm-cmp.yaml as a render would (a tag asked of the
registry, a catalog read and its choice made), ignoring the pins the file already
has (they may be stale: that is what it is for), and prints it:
  an image bundle    the bundle image by digest;
  a catalog          the catalog, the chosen version and its bundle image by digest;
  a directory        nothing moves: it is pinned by its content digest, printed.
With --write, the file is changed in place so the next render takes the same
bundle: spec.version holds the tag (moved there from spec.bundle, which keeps the
repository) and spec.digest the bundle image's digest, beside it; for a catalog,
spec.version becomes the exact version chosen and spec.digest its bundle image's
digest (the catalog's tag may move: the render checks the bundle it chooses against
the pin). A later bump is a change of spec.version: the render then refuses the old
digest, naming both, until resolve --write pins the new one. Comments, blank
lines, line endings and key order stay as they are; a symbolic link is written
through to its target. Running it again changes nothing.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// The same argument rule as render (render.SourceDirArg): --write edits
			// exactly the file that was resolved.
			req, err := loadRequest(cmd, firstArg(args), nil)
			if err != nil {
				return err
			}
			pinned := req.Spec
			req.Spec = render.Unpinned(req.Spec)
			file := filepath.Join(req.SourceDir, spec.FileName)
			r, err := rf.renderer()
			if err != nil {
				return err
			}
			rv, err := r.Resolve(cmd.Context(), req)
			if err != nil {
				return err
			}
			p := render.PinOf(pinned, req.Spec, rv)
			p.Print(cmd.OutOrStdout())
			if !write {
				return nil
			}
			return p.Write(cmd.OutOrStdout(), file)
		},
	}
	rf.register(cmd.Flags())
	cmd.Flags().BoolVar(&write, "write", false, "pin the result in olm-cmp.yaml in place")
	return cmd
}
