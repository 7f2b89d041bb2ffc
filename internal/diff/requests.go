package diff

import (
	"context"
	"fmt"
	"io"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/gitbase"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/upgrade"
)

// Sides are the two sides `olm-cmp diff` compares, as its arguments and
// flags name them (docs/diff.md): FROM_DIR and TO_DIR, or DIR with TO
// changed (ToVersion, ToBundle, the spec flags) or FROM at a Git revision
// (GitBase).
type Sides struct {
	// Dir is DIR, or FROM_DIR; ToDir is TO_DIR ("": Dir).
	Dir, ToDir string
	// ToVersion and ToBundle change TO's spec (--to-version, --to-bundle).
	ToVersion, ToBundle string
	// GitBase is the revision FROM is DIR at (--git-base); "": none.
	GitBase string
	// AppsFrom are the Argo CD manifests whose application naming a side's
	// directory passes the plugin parameters (--apps-from).
	AppsFrom []string
	// Load reads a source directory's request; flags: with the command
	// line's spec flags applied (TO's).
	Load func(dir string, flags bool) (render.Request, error)
	// Reflag applies the spec flags again, over an application's
	// parameters; nil when none was given.
	Reflag func(*spec.Spec) error
	// Notes receives the lines that say which application (none) a side
	// renders with.
	Notes io.Writer
}

// Requests builds the FROM and TO requests. from is nil when GitBase's
// tree has no olm-cmp.yaml in DIR (a new application); cleanup removes
// what GitBase extracted, and is never nil.
func (sd Sides) Requests(ctx context.Context) (from, to *render.Request, cleanup func(), err error) {
	cleanup = func() {}
	toDir := sd.ToDir
	if toDir == "" {
		toDir = sd.Dir
	}
	t, err := sd.Load(toDir, true)
	if err != nil {
		return nil, nil, cleanup, err
	}
	ix, err := upgrade.ScanNamed(ctx, sd.Dir, sd.AppsFrom)
	if err != nil {
		return nil, nil, cleanup, err
	}
	if applied, err := sd.withApp(ix, toDir, "", &t); err != nil {
		return nil, nil, cleanup, err
	} else if applied && sd.Reflag != nil {
		// The spec flags change TO last, over the application's
		// parameters too (Load applied them to the file alone).
		if err := sd.Reflag(&t.Spec); err != nil {
			return nil, nil, cleanup, err
		}
	}
	if err := sd.retarget(&t); err != nil {
		return nil, nil, cleanup, err
	}
	if sd.GitBase != "" {
		f, c, err := sd.gitBaseRequest(ctx, ix)
		return f, &t, c, err
	}
	f, err := sd.Load(sd.Dir, false)
	if err != nil {
		return nil, nil, cleanup, err
	}
	if _, err := sd.withApp(ix, sd.Dir, "", &f); err != nil {
		return nil, nil, cleanup, err
	}
	return &f, &t, cleanup, nil
}

// retarget applies ToBundle and ToVersion to TO's spec.
func (sd Sides) retarget(req *render.Request) error {
	s := &req.Spec
	if sd.ToBundle != "" || sd.ToVersion != "" {
		s.Digest = "" // spec.digest pins FROM's bundle
	}
	if sd.ToBundle != "" {
		if err := render.SetBundleArg(s, "--to-bundle", sd.ToBundle); err != nil {
			return err
		}
		// An image's tag is in REF: spec.version (or a catalog's
		// range) was FROM's.
		s.Version = ""
		s.Catalog, s.Package, s.Channel = "", "", ""
	}
	if sd.ToVersion == "" {
		return nil
	}
	switch {
	case s.Catalog != "":
		s.Version = sd.ToVersion
	case render.IsDirRef(s.Bundle):
		return fmt.Errorf("--to-version %q: spec.bundle %q is a directory, which has no versions to choose from: give the new bundle's directory with --to-bundle DIR", sd.ToVersion, s.Bundle)
	default:
		// The new version replaces the tag or digest the reference has.
		s.Bundle, _ = render.Untagged(s.Bundle)
		s.Version = sd.ToVersion
	}
	return nil
}

// gitBaseRequest builds the FROM request of `diff DIR --git-base REV`: the
// spec in DIR as it was at REV (gitbase.Extract). The request is nil when
// DIR had no olm-cmp.yaml at REV (a new application).
//
// With AppsFrom (ix, the manifests as they are now), the spec is the one
// the application naming DIR at REV made the plugin render.
func (sd Sides) gitBaseRequest(ctx context.Context, ix *upgrade.Index) (*render.Request, func(), error) {
	cleanup := func() {}
	rev := sd.GitBase
	tree, err := gitbase.Extract(ctx, sd.Dir, rev, sd.AppsFrom)
	if err != nil || tree == nil {
		return nil, cleanup, err
	}
	cleanup = tree.Close
	req, err := sd.Load(tree.Dir, false)
	if err != nil {
		return nil, cleanup, fmt.Errorf("--git-base %s: %w", echo.Quote(rev), err)
	}
	if ix != nil {
		old, err := tree.Index(ctx, ix)
		if err != nil {
			return nil, cleanup, err
		}
		if old == nil {
			fmt.Fprintf(sd.Notes, "note: none of the --apps-from manifests existed at %s: %s there is olm-cmp.yaml alone\n", echo.Text(rev), echo.Text(sd.Dir))
		} else if _, err := sd.withApp(old, tree.Dir, sd.Dir+" at "+rev, &req); err != nil {
			return nil, cleanup, fmt.Errorf("--git-base %s: %w", echo.Quote(rev), err)
		}
	}
	return &req, cleanup, nil
}

// withApp applies to req's spec the plugin parameters and env of the
// application of ix naming dir (upgrade.Rendered), saying so on Notes when
// none does; name is dir for that line ("" for dir itself). A nil ix
// (AppsFrom not given) changes nothing. applied says whether an
// application's parameters were applied.
func (sd Sides) withApp(ix *upgrade.Index, dir, name string, req *render.Request) (applied bool, err error) {
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
		fmt.Fprintf(sd.Notes, "note: no Argo CD application in the --apps-from manifests renders %s: it is olm-cmp.yaml alone\n", echo.Text(name))
		return false, nil
	}
	req.Spec = s
	return true, nil
}
