package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/gitbase"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/upgrade"
)

// gitBaseRequest builds the FROM request of `diff DIR --git-base REV`: the
// spec in DIR as it was at REV (gitbase.Extract). The request is nil when
// DIR had no olm-cmp.yaml at REV (a new application).
//
// With --apps-from (appsFrom; ix, the manifests as they are now), the spec
// is the one the application naming DIR at REV made the plugin render.
func gitBaseRequest(cmd *cobra.Command, dir, rev string, appsFrom []string, ix *upgrade.Index) (*render.Request, func(), error) {
	cleanup := func() {}
	tree, err := gitbase.Extract(cmd.Context(), dir, rev, appsFrom)
	if err != nil || tree == nil {
		return nil, cleanup, err
	}
	cleanup = tree.Close
	req, err := loadRequest(cmd, tree.Dir, nil)
	if err != nil {
		return nil, cleanup, fmt.Errorf("--git-base %s: %w", echo.Quote(rev), err)
	}
	if ix != nil {
		old, err := tree.Index(cmd.Context(), ix)
		if err != nil {
			return nil, cleanup, err
		}
		if old == nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "note: none of the --apps-from manifests existed at %s: %s there is olm-cmp.yaml alone\n", echo.Text(rev), echo.Text(dir))
		} else if _, err := withApp(cmd, old, tree.Dir, dir+" at "+rev, &req); err != nil {
			return nil, cleanup, fmt.Errorf("--git-base %s: %w", echo.Quote(rev), err)
		}
	}
	return &req, cleanup, nil
}

// appsIndex scans the --apps-from manifests of the repository holding dir;
// nil without the flag.
func appsIndex(cmd *cobra.Command, dir string, appsFrom []string) (*upgrade.Index, error) {
	if len(appsFrom) == 0 {
		return nil, nil
	}
	if err := upgrade.CheckNamed(appsFrom); err != nil {
		return nil, err
	}
	root, err := upgrade.RepoRoot(dir)
	if err != nil {
		return nil, err
	}
	return upgrade.Scan(cmd.Context(), root, appsFrom...)
}

// withApp applies to req's spec the plugin parameters and env of the
// application of ix naming dir (upgrade.Rendered), saying so on stderr when
// none does; name is dir for that line ("" for dir itself). A nil ix
// (--apps-from not given) changes nothing. applied says whether an
// application's parameters were applied.
func withApp(cmd *cobra.Command, ix *upgrade.Index, dir, name string, req *render.Request) (applied bool, err error) {
	if name == "" {
		name = dir
	}
	if ix == nil {
		return false, nil
	}
	s, app, err := upgrade.Rendered(ix, dir, req.Spec)
	if err != nil {
		return false, err
	}
	if app == nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: no Argo CD application in the --apps-from manifests renders %s: it is olm-cmp.yaml alone\n", echo.Text(name))
		return false, nil
	}
	req.Spec = s
	return true, nil
}
