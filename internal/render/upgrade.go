package render

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/safety"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// Resolve validates the spec and pins its bundle (see resolveBundle) and,
// when the spec names upgradeFrom, the bundle of that version too: a tag can
// move and a catalog can change, so what FROM is belongs to the resolved
// request (a cache keys on it) as much as TO. spec.catalog is read once for
// both, so they are chosen from the same catalog.
func (r *Renderer) Resolve(ctx context.Context, req Request) (Resolved, error) {
	if err := req.Spec.Validate(); err != nil {
		return Resolved{}, err
	}
	if err := CheckAPIVersions("KUBE_API_VERSIONS (the API versions the cluster serves)", req.APIVersions); err != nil {
		return Resolved{}, err
	}
	if err := r.admitSpec(req); err != nil {
		return Resolved{}, err
	}
	var cat *openedCatalog
	if req.Spec.Catalog != "" {
		if err := r.checkCatalogPin(ctx, req.Spec); err != nil {
			return Resolved{}, err
		}
		var err error
		if cat, err = r.openCatalog(ctx, req, ""); err != nil {
			return Resolved{}, err
		}
		defer cat.close()
	}
	rv, err := r.resolveBundle(ctx, req, cat)
	if err == nil {
		err = r.verifyBundle(ctx, &rv, cat)
	}
	if err != nil || req.Spec.UpgradeFrom == "" {
		return rv, err
	}
	fromReq, err := upgradeFromRequest(req)
	if err != nil {
		return Resolved{}, err
	}
	err = fromReq.Spec.Validate()
	var from Resolved
	if err == nil {
		from, err = r.resolveBundle(ctx, fromReq, cat)
	}
	if err != nil {
		return Resolved{}, fmt.Errorf("spec.upgradeFrom %s: %w", echo.Quote(req.Spec.UpgradeFrom), err)
	}
	rv.UpgradeFrom = &from
	return rv, nil
}

// upgradeFromRequest is the request of the bundle spec.upgradeFrom names: the
// same spec with the image tag, or the catalog version, set to it. A catalog
// bundle is looked up in every channel: the cluster may run it from another.
func upgradeFromRequest(req Request) (Request, error) {
	s := req.Spec
	v := s.UpgradeFrom
	from := req
	from.Spec.UpgradeFrom = ""
	from.Spec.Digest = "" // it pins TO's bundle
	switch {
	case s.Catalog != "":
		from.Spec.Version = v // a Masterminds constraint of one version: exactly it
		from.Spec.Channel = ""
	case IsDirRef(s.Bundle):
		return Request{}, fmt.Errorf("spec.upgradeFrom %s needs an image or catalog bundle: spec.bundle %s is a directory, which holds one version only (compare two directories with olm-cmp diff)", echo.Quote(v), echo.Quote(s.Bundle))
	default:
		ref, err := name.ParseReference(s.Bundle, name.WithDefaultTag(""))
		if err != nil {
			return Request{}, fmt.Errorf("spec.bundle %s is neither a directory (write ./path) nor an image reference (registry/repository:tag or @sha256:digest): %w", echo.Quote(s.Bundle), echo.Err(err))
		}
		// ref.Context() drops the tag and the digest, which pin TO.
		from.Spec.Bundle = ref.Context().String()
		from.Spec.Version = v
	}
	return from, nil
}

// checkUpgradeFrom runs the safety checks from the bundle of spec.upgradeFrom
// (rv.UpgradeFrom) to to, the bundle rv resolved to. Errors fail the render:
// the error lists every finding, one per line (Argo CD shows it as is);
// warnings are returned as render warnings. Without upgradeFrom it does
// nothing.
func (r *Renderer) checkUpgradeFrom(ctx context.Context, rv Resolved, to *bundle.Bundle) (warnings []string, err error) {
	if rv.UpgradeFrom == nil {
		return nil, nil
	}
	v := rv.Request.Spec.UpgradeFrom
	from, err := r.Load(ctx, *rv.UpgradeFrom)
	if err != nil {
		return nil, fmt.Errorf("spec.upgradeFrom %s: %w", echo.Quote(v), err)
	}
	fs, unmatched, err := r.CheckUpgrade(ctx, rv, from, to)
	if err != nil {
		return nil, fmt.Errorf("spec.upgradeFrom %s: %w", echo.Quote(v), err)
	}
	warnings = unmatched
	what := fmt.Sprintf("the upgrade from %s to %s", from.CSV.Name, to.CSV.Name)
	var failing []safety.Finding
	for _, f := range fs {
		if f.Fails(safety.Error) {
			failing = append(failing, f)
		}
	}
	switch {
	case len(failing) == 1 && failing[0].Rule == "upgradeEdge":
		// The edge alone: its message names both bundles and the fixes.
		return nil, fmt.Errorf("spec.upgradeFrom %s: %s", echo.Quote(v), echo.Text(failing[0].Message))
	case len(failing) > 0:
		var b strings.Builder
		fmt.Fprintf(&b, "spec.upgradeFrom %q: %s is unsafe; fix the bundle or the spec, or acknowledge each error you have judged safe in spec.acknowledge (rule, crd, version, path and a reason):", v, what)
		for _, f := range fs {
			b.WriteString("\n" + f.String())
		}
		return nil, fmt.Errorf("%s", b.String())
	}
	for _, f := range fs {
		// A render warning is printed after "warning: ": the finding's own
		// severity is said only when it is not that (an acknowledged error).
		warnings = append(warnings, what+": "+strings.TrimPrefix(f.String(), string(safety.Warning)+": "))
	}
	return warnings, nil
}

// CheckUpgrade returns the safety findings of going from the loaded bundle
// from (what the cluster runs) to tb, the bundle to resolved to (see package
// safety), judged with TO's spec: its keepCRDs, upgradeConstraintPolicy,
// strict (for acknowledge entries that match nothing) and catalog. The
// bundles are the ones rendered, not resolved again (a tag that moved in
// between would judge other bundles than those compared), and the catalog
// is the one TO was chosen from (pinned by Resolve), not spec.catalog's tag
// asked again.
//
// TO's spec.acknowledge entries mark the findings they name
// (safety.Acknowledge); the entries that name none are returned as
// warnings, or with spec.strict are the error.
func (r *Renderer) CheckUpgrade(ctx context.Context, to Resolved, from, tb *bundle.Bundle) ([]safety.Finding, []string, error) {
	fs, err := r.checkUpgrade(ctx, to, from, tb)
	if err != nil {
		return nil, nil, err
	}
	unmatched := safety.Acknowledge(fs, to.Request.Spec.Acknowledge)
	if to.Request.Spec.Strict && len(unmatched) > 0 {
		return nil, nil, errors.New("strict: " + strings.Join(unmatched, "\nstrict: "))
	}
	return fs, unmatched, nil
}

func (r *Renderer) checkUpgrade(ctx context.Context, to Resolved, from, tb *bundle.Bundle) ([]safety.Finding, error) {
	s := to.Request.Spec
	o := safety.Options{KeepCRDs: s.KeepsCRDs(), SelfCertified: s.UpgradePolicy() == spec.UpgradeSelfCertified}
	if s.Catalog != "" {
		var pinned string
		if to.Catalog != nil {
			pinned = to.Catalog.Image
		}
		cat, err := r.openCatalog(ctx, to.Request, pinned)
		if err != nil {
			return nil, err
		}
		defer cat.close()
		o.Catalog, o.Package, o.Channel = cat.fsys, s.Package, s.Channel
	}
	return safety.Check(ctx, from, tb, o)
}
