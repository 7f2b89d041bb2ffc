// Package render is the pipeline every transport shares: spec → bundle →
// OLM conversion → patches → sync waves → one deterministic YAML stream.
// The CLI, the Argo CD plugin (both modes) and the HTTP API call Render and
// nothing else, so they cannot drift apart.
package render

import (
	"context"
	"fmt"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/convert"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// Request is one render.
type Request struct {
	// Spec is the effective spec (file + overrides), not yet validated.
	Spec spec.Spec
	// Name is metadata.name of the spec (for annotations and logs).
	Name string
	// SourceDir is the directory holding olm-cmp.yaml; relative bundle paths and
	// extra manifests are read from it. Empty means no extra manifests.
	SourceDir string
	// RootDir bounds relative bundle paths (the repository root in the plugin);
	// empty means SourceDir's filesystem is trusted (CLI).
	RootDir string
	// APIVersions, when non-nil, are the group/versions the target cluster
	// serves (Argo CD's KUBE_API_VERSIONS); objects of other APIs are dropped
	// with a warning.
	APIVersions []string
}

// Result is a rendered bundle.
type Result struct {
	// Origin is the bundle that was rendered, pinned by digest.
	Origin bundle.Origin
	// Package and Version identify the operator (CSV spec.version).
	Package, Version string
	// CSVName is the ClusterServiceVersion's metadata.name.
	CSVName string
	// Manifests are the objects, one YAML document each, in apply order.
	Manifests []string
	// Warnings are things the user should know but that did not stop the render.
	Warnings []string
}

// YAML joins the manifests into one multi-document stream.
func (r *Result) YAML() []byte {
	var b strings.Builder
	for _, m := range r.Manifests {
		b.WriteString("---\n")
		b.WriteString(m)
		if !strings.HasSuffix(m, "\n") {
			b.WriteByte('\n')
		}
	}
	return []byte(b.String())
}

// Renderer renders requests; it is safe for concurrent use.
type Renderer struct {
	// Loader resolves and loads bundle images; nil means directories only.
	Loader Loader
}

// Loader resolves image references to digests and loads bundles.
type Loader interface {
	// Resolve pins ref (a tag moves, so this asks the registry every time).
	Resolve(ctx context.Context, ref string) (bundle.Origin, error)
	// Load returns the bundle for a resolved origin, from cache when it can.
	Load(ctx context.Context, o bundle.Origin) (*bundle.Bundle, error)
}

// Render runs the whole pipeline. It returns either the complete output or an
// error; never a partial stream.
func (r *Renderer) Render(ctx context.Context, req Request) (*Result, error) {
	origin, err := r.Resolve(ctx, req)
	if err != nil {
		return nil, err
	}
	b, err := r.Load(ctx, origin)
	if err != nil {
		return nil, err
	}
	return RenderBundle(ctx, req, b)
}

// Resolve validates the spec and pins its bundle: a directory is located (and
// kept inside RootDir), an image tag is resolved to a digest. Callers that
// cache renders key them on the returned origin's digest.
func (r *Renderer) Resolve(ctx context.Context, req Request) (bundle.Origin, error) {
	if err := req.Spec.Validate(); err != nil {
		return bundle.Origin{}, err
	}
	ref, isDir, err := BundleRef(req)
	if err != nil {
		return bundle.Origin{}, err
	}
	if isDir {
		return bundle.Origin{Ref: req.Spec.Bundle, Dir: ref}, nil
	}
	if r.Loader == nil {
		return bundle.Origin{}, fmt.Errorf("spec.bundle %q is an image reference, but this renderer has no registry access configured", ref)
	}
	o, err := r.Loader.Resolve(ctx, ref)
	if err != nil {
		return bundle.Origin{}, fmt.Errorf("spec.bundle %q: %w", ref, err)
	}
	return o, nil
}

// Load reads the bundle of a resolved origin. Directories go through the
// Loader too when there is one, so its parse cache serves them as well.
func (r *Renderer) Load(ctx context.Context, o bundle.Origin) (*bundle.Bundle, error) {
	if r.Loader == nil {
		b, err := bundle.LoadDir(o.Dir)
		if err != nil {
			return nil, fmt.Errorf("spec.bundle %q: %w", o.Ref, err)
		}
		b.Origin.Ref = o.Ref
		return b, nil
	}
	b, err := r.Loader.Load(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("spec.bundle %q: %w", o.Ref, err)
	}
	return b, nil
}

// RenderBundle converts an already loaded bundle. The bundle is not modified,
// so a cached bundle can be rendered by many requests at once.
func RenderBundle(ctx context.Context, req Request, b *bundle.Bundle) (*Result, error) {
	if err := req.Spec.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := newPipeline(req, b)
	if err != nil {
		return nil, err
	}
	manifests, err := p.run()
	if err != nil {
		return nil, err
	}
	return &Result{
		Origin:    b.Origin,
		Package:   b.Package,
		Version:   b.CSV.Spec.Version.String(),
		CSVName:   b.CSV.Name,
		Manifests: manifests,
		Warnings:  p.warnings,
	}, nil
}

// certProvider picks the webhook certificate provider: the spec's choice, else
// cert-manager when the bundle has webhooks (the one provider that works on
// any cluster), else none.
func certProvider(s spec.Spec, b *bundle.Bundle) convert.CertProvider {
	switch s.CertificateProvider {
	case spec.CertProviderCertManager:
		return convert.CertManager
	case spec.CertProviderServiceCA:
		return convert.ServiceCA
	case spec.CertProviderNone:
		return convert.NoCertProvider
	}
	if len(b.CSV.Spec.WebhookDefinitions) > 0 {
		return convert.CertManager
	}
	return convert.NoCertProvider
}
