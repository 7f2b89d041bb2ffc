package diff

import (
	"context"
	"fmt"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/requirements"
	"github.com/olm-cmp/olm-cmp/internal/safety"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// RenderOptions are what Renders tells its caller on the way, and where
// FROM came from.
type RenderOptions struct {
	// GitBase is the revision FROM is the tree at (`diff --git-base`), ""
	// for none: FROM's errors name it, and a nil FROM is "no olm-cmp.yaml
	// at" it.
	GitBase string
	// RenderedTO is handed TO's result as soon as TO is rendered, before
	// FROM is (the CLI prints its notes then); nil: nothing.
	RenderedTO func(*render.Result)
	// Unmatched is handed TO's spec.acknowledge entries that matched no
	// finding of the upgrade check; nil: nothing.
	Unmatched func([]string)
}

// Renders renders both sides with r, judges FROM -> TO's upgrade safety on
// the very bundles rendered, and pairs the objects. from is nil when
// --git-base found no spec at the revision: everything is added.
func Renders(ctx context.Context, r *render.Renderer, from, to *render.Request, opts RenderOptions) (*Report, error) {
	toReq := *to
	if from != nil {
		// With a FROM side, diff judges FROM -> TO itself (below) and
		// reports the findings; TO's own spec.upgradeFrom check would fail
		// its render on those very findings (a blocked bump that upgrade
		// --write wrote with upgradeFrom), leaving nothing to review.
		toReq.Spec.UpgradeFrom = ""
	}
	toRV, toBundle, toRes, err := r.Stepwise(ctx, toReq)
	if err != nil {
		return nil, fmt.Errorf("rendering TO: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("rendering TO: %w", err)
	}
	if opts.RenderedTO != nil {
		opts.RenderedTO(toRes)
	}
	var fromManifests []string
	var fromRequirements []requirements.Finding
	fromSide := Side{Source: fmt.Sprintf("(no %s at %s)", spec.FileName, opts.GitBase)}
	var findings []safety.Finding
	if from != nil {
		// The safety checks judge the very bundles rendered: resolving the
		// tags (or catalogs) again could find others, and pull again.
		_, fromBundle, fromRes, err := r.Stepwise(ctx, *from)
		if err != nil {
			if opts.GitBase != "" {
				// Not the checkout: what is (not) there is the tree at REV.
				return nil, fmt.Errorf("rendering FROM (the tree at %s): %w", echo.Text(opts.GitBase), err)
			}
			return nil, fmt.Errorf("rendering FROM: %w", err)
		}
		fromManifests, fromRequirements, fromSide = fromRes.Manifests, fromRes.Requirements, SideOf(fromRes)
		var unmatched []string
		if findings, unmatched, err = r.CheckUpgrade(ctx, toRV, fromBundle, toBundle); err != nil {
			return nil, fmt.Errorf("checking the upgrade: %w", err)
		}
		if opts.Unmatched != nil {
			opts.Unmatched(unmatched)
		}
	}
	report, err := CompareContext(ctx, fromManifests, toRes.Manifests, fromSide.CSV, toRes.CSVName)
	if err != nil {
		return nil, err
	}
	report.From, report.To, report.Safety = fromSide, SideOf(toRes), findings
	report.Requirements = CompareRequirements(fromRequirements, toRes.Requirements)
	return report, nil
}

// SideOf identifies a render: an image by digest, a directory with its
// content digest.
func SideOf(res *render.Result) Side {
	src := res.Origin.Image
	if src == "" {
		src = res.Origin.Ref + " (" + res.Origin.Digest + ")"
	}
	return Side{Package: res.Package, Version: res.Version, CSV: res.CSVName, Source: src}
}
