package inspect

import (
	"context"
	"path/filepath"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// The bundle inspect reports on is found as a render finds it: through
// render's Resolve and Load, verified against the trust policy in
// between. Each loader returns the Resolved whose signatures (and, for a
// spec, request) Report uses.

// LoadRequest resolves and loads the bundle a spec's request names, as
// render would.
func LoadRequest(ctx context.Context, r *render.Renderer, req render.Request) (*render.Resolved, *bundle.Bundle, error) {
	rv, err := r.Resolve(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	b, err := r.Load(ctx, rv)
	if err != nil {
		return nil, nil, err
	}
	return &rv, b, nil
}

// LoadFromCatalog loads the bundle a spec naming this catalog would render,
// through the same Resolve and Load; a ./directory is relative to the
// working directory (render.CatalogArg).
func LoadFromCatalog(ctx context.Context, r *render.Renderer, ref, pkg, channel, versions string) (*render.Resolved, *bundle.Bundle, *Catalog, error) {
	ref, err := render.CatalogArg(ref)
	if err != nil {
		return nil, nil, nil, err
	}
	// Resolve validates the catalog fields as a spec's; the namespace it
	// also requires plays no part in choosing.
	rv, err := r.Resolve(ctx, render.Request{Spec: spec.Spec{Catalog: ref, Package: pkg, Channel: channel, Version: versions, Namespace: "inspect"}})
	if err != nil {
		return nil, nil, nil, err
	}
	b, err := r.Load(ctx, rv)
	if err != nil {
		return nil, nil, nil, err
	}
	// The bundle alone is reported as a default spec renders it (with the
	// signatures this Resolve checked).
	only := &render.Resolved{Signatures: rv.Signatures}
	return only, b, CatalogOf(rv.Catalog), nil
}

// LoadRef loads a directory (an explicit path, or one that exists) or an
// image named on the command line (render.CheckRefArg), verified against
// the trust policy in between. The Resolved it returns holds only the
// signatures (nil without a policy).
func LoadRef(ctx context.Context, r *render.Renderer, ref string) (*render.Resolved, *bundle.Bundle, error) {
	if err := render.CheckRefArg("", ref); err != nil {
		return nil, nil, err
	}
	if render.IsLocalDir(ref) {
		abs, err := filepath.Abs(ref)
		if err != nil {
			return nil, nil, err
		}
		b, err := bundle.LoadDir(abs)
		if err != nil {
			return nil, nil, err
		}
		sigs, err := r.VerifyOrigin(ctx, b.Origin, ref)
		return &render.Resolved{Signatures: sigs}, b, err
	}
	o, err := r.Loader.Resolve(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	sigs, err := r.VerifyOrigin(ctx, o, ref)
	if err != nil {
		return nil, nil, err
	}
	b, err := r.Loader.Load(ctx, o)
	return &render.Resolved{Signatures: sigs}, b, err
}

// Report is the summary of b with its catalog's choice (nil without one),
// the trust policy's verdicts and the requirements report: of rv's spec
// when it has one (a source directory), else of the bundle alone as a
// default spec renders it.
func Report(ctx context.Context, rv *render.Resolved, b *bundle.Bundle, cat *Catalog) (*Summary, error) {
	s, err := Summarize(b)
	if err != nil {
		return nil, err
	}
	s.Catalog = cat
	if rv == nil || rv.Request.Spec.Namespace == "" {
		// No spec: the bundle alone, as a default spec renders it.
		var sigs []render.Signature
		if rv != nil {
			sigs = rv.Signatures
		}
		rv = &render.Resolved{Request: DefaultRequest(b), Origin: b.Origin, Signatures: sigs}
	}
	s.AddSignatures(rv.Signatures)
	s.AddRequirements(ctx, *rv, b)
	return s, nil
}
