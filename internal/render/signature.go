package render

import (
	"context"
	"fmt"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/requirements"
	"github.com/olm-cmp/olm-cmp/internal/trust"
	"github.com/olm-cmp/olm-cmp/internal/verify"
)

// AnnotationSignature names, on every rendered object, the key or keyless
// identity that verified the bundle image the object came from, or
// "unverified". It is set only when a trust policy is configured (or the
// spec demands verification): without one, nothing was checked and nothing
// is claimed.
const AnnotationSignature = "olm-cmp.dev/signature"

// Roles of the images a render verifies.
const (
	RoleBundle  = "bundle"
	RoleCatalog = "catalog"
)

// Signature is the trust policy's verdict on one image a render reads (or on
// a directory, which nothing signs: Result.Image is then the directory as
// the spec names it, and Result.Digest its content digest).
type Signature struct {
	// Role is RoleBundle or RoleCatalog.
	Role string
	// Dir is true for a directory bundle or catalog.
	Dir bool
	verify.Result
}

// noPolicy verifies for a renderer without a trust policy whose spec
// demands verification: every verification is a refusal that says no
// policy is configured and how to give one.
var noPolicy = verify.New(nil, verify.Options{})

// verifier is the Verifier of a render whose spec demands verification or
// not (spec.requireSignature): r.Verifier, else noPolicy when it does; nil
// when there is nothing to check.
func (r *Renderer) verifier(requireSignature bool) *verify.Verifier {
	switch {
	case r.Verifier != nil:
		return r.Verifier
	case requireSignature:
		return noPolicy
	}
	return nil
}

// verifiers are the verifiers of a render: the cluster's (verifier), then
// the project's own (ProjectVerifier, from the tenancy policy), which can
// only add refusals: an image passes when both pass it.
func (r *Renderer) verifiers(requireSignature bool) []*verify.Verifier {
	var vs []*verify.Verifier
	if v := r.verifier(requireSignature); v != nil {
		vs = append(vs, v)
	}
	if r.ProjectVerifier != nil {
		vs = append(vs, r.ProjectVerifier)
	}
	return vs
}

// PolicyHash is the hash of the renderer's trust policies ("" without
// one): part of the render cache's key, so that a policy change takes
// effect on the next render.
func (r *Renderer) PolicyHash() string {
	h := ""
	if r.Verifier != nil {
		h = r.Verifier.Policy().Hash()
	}
	if r.ProjectVerifier != nil {
		h += " project:" + r.ProjectVerifier.Policy().Hash()
	}
	return h
}

// verifyImage checks the signature of the image o pinned (by its digest, in
// the repository it is pulled from: mirrors are the policy's business).
// what names it in a refusal (spec.bundle "…", the bundle a catalog chose,
// spec.catalog "…").
func verifyImage(ctx context.Context, v *verify.Verifier, role, what string, o bundle.Origin, require bool) (*Signature, error) {
	repo, _, _ := strings.Cut(o.Image, "@")
	// A check that may read the registry is a stage of its own: a deadline
	// that stops it names it.
	p, policyName := v.Policy(), ""
	if p != nil {
		policyName = p.Name
	}
	if scope := p.Lookup(repo); require || scope != nil && scope.Mode != trust.Off {
		done := enterStage(ctx, fmt.Sprintf("checking the signature of %s@%s under trust %s",
			repo, o.Digest, scope.Describe(policyName)))
		defer done()
	}
	res, err := v.Verify(ctx, repo, o.Digest, require)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &Signature{Role: role, Result: res}, nil
}

// stageKey is the context key of a request's stage recorder (WithStage).
type stageKey struct{}

// WithStage returns ctx carrying enter, which a render calls as it begins a
// stage a deadline may cut short, and whose returned function it calls when
// that stage ends: the engine's progress, so that a request its deadline
// stops says "still checking the signature of <image>@<digest> under trust
// scope …" rather than the phase the engine last entered (resolving
// spec.bundle), which the signature check is part of.
func WithStage(ctx context.Context, enter func(stage string) (done func())) context.Context {
	return context.WithValue(ctx, stageKey{}, enter)
}

// enterStage tells ctx's stage recorder that stage began; the function it
// returns says it ended. Without a recorder both do nothing.
func enterStage(ctx context.Context, stage string) func() {
	if enter, ok := ctx.Value(stageKey{}).(func(string) func()); ok && enter != nil {
		if done := enter(stage); done != nil {
			return done
		}
	}
	return func() {}
}

// verifyDir is a directory's Signature: never verified. The policy's
// directories setting says whether that is reported (warn, the default),
// accepted silently (allow) or refused (refuse); a spec that demands
// verification refuses it. field and ref are the spec field and its value
// as the spec wrote it (never a path on the server).
func verifyDir(v *verify.Verifier, role, field, ref, digest string, require bool) (*Signature, error) {
	res, err := v.CheckDirectory(ref, require)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	res.Digest = digest
	return &Signature{Role: role, Dir: true, Result: res}, nil
}

// verifyBundle checks the bundle rv pinned, and records its verdict (after
// the catalog's, cat) in rv.Signatures. Nothing happens without a trust
// policy unless the spec demands verification.
func (r *Renderer) verifyBundle(ctx context.Context, rv *Resolved, cat *openedCatalog) error {
	s := rv.Request.Spec
	vs := r.verifiers(s.RequireSignature)
	if len(vs) == 0 {
		return nil
	}
	var sigs []Signature
	if cat != nil {
		sigs = append(sigs, cat.sigs...)
	}
	for _, v := range vs {
		var sig *Signature
		var err error
		switch {
		case rv.Origin.Image == "":
			sig, err = verifyDir(v, RoleBundle, "spec.bundle", s.Bundle, rv.Origin.Digest, s.RequireSignature)
		case rv.Catalog != nil:
			sig, err = verifyImage(ctx, v, RoleBundle, chosen(rv.Catalog), rv.Origin, s.RequireSignature)
		default:
			sig, err = verifyImage(ctx, v, RoleBundle, fmt.Sprintf("spec.bundle %s", echo.Quote(s.Bundle)), rv.Origin, s.RequireSignature)
		}
		if err != nil {
			return err
		}
		sigs = append(sigs, *sig)
	}
	rv.Signatures = sigs
	return nil
}

// bundleSignature is the annotation value for the objects of the bundle
// sigs judged, and whether there is one (a trust policy applied).
func bundleSignature(sigs []Signature) (string, bool) {
	for _, s := range sigs {
		if s.Role == RoleBundle {
			return s.Annotation(), true
		}
	}
	return "", false
}

// unverified is what the requirements report lists under its signature
// category: every image (or directory) a policy looked at and did not
// verify. An image under a scope in mode off, or under no scope, was not
// looked at: it is not listed.
func unverified(sigs []Signature) []requirements.Unverified {
	var out []requirements.Unverified
	for _, s := range sigs {
		if s.Verified() || s.Problem == "" {
			continue
		}
		out = append(out, requirements.Unverified{
			Role: s.Role, Image: s.Image, Digest: s.Digest, Dir: s.Dir,
			Scope: s.Scope, Problem: s.Problem, Fix: s.Fix,
		})
	}
	return out
}

// VerifyOrigin checks a bundle resolved without a spec (`inspect REF`: an
// image pinned by the Loader's Resolve, or a directory) against the trust
// policy, before it is loaded. ref names it in a refusal. nil without a
// policy.
func (r *Renderer) VerifyOrigin(ctx context.Context, o bundle.Origin, ref string) ([]Signature, error) {
	if r.Verifier == nil {
		return nil, nil
	}
	var sig *Signature
	var err error
	if o.Image == "" {
		sig, err = verifyDir(r.Verifier, RoleBundle, "bundle "+echo.Quote(ref), ref, o.Digest, false)
	} else {
		sig, err = verifyImage(ctx, r.Verifier, RoleBundle, "bundle "+echo.Quote(ref), o, false)
	}
	if err != nil {
		return nil, err
	}
	return []Signature{*sig}, nil
}
