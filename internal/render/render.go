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
	// Catalog, for a spec that names a catalog, says which catalog (pinned)
	// and which of its bundles was chosen; nil otherwise.
	Catalog *Catalog
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
	origin, cat, err := r.resolve(ctx, req)
	if err != nil {
		return nil, err
	}
	b, err := r.load(ctx, origin, cat)
	if err != nil {
		return nil, err
	}
	res, err := RenderBundle(ctx, req, b)
	if err != nil {
		return nil, err
	}
	res.Catalog = cat
	return res, nil
}

// Resolve validates the spec and pins its bundle: a directory is located (and
// kept inside RootDir), an image tag is resolved to a digest, a catalog is
// read and the bundle it chooses resolved. Callers that cache renders key
// them on the returned origin's digest.
func (r *Renderer) Resolve(ctx context.Context, req Request) (bundle.Origin, error) {
	o, _, err := r.resolve(ctx, req)
	return o, err
}

func (r *Renderer) resolve(ctx context.Context, req Request) (bundle.Origin, *Catalog, error) {
	if err := req.Spec.Validate(); err != nil {
		return bundle.Origin{}, nil, err
	}
	if req.Spec.Catalog != "" {
		cat, err := ChooseBundle(ctx, r.Loader, req)
		if err != nil {
			return bundle.Origin{}, nil, err
		}
		if r.Loader == nil {
			return bundle.Origin{}, nil, fmt.Errorf("spec.catalog %q chose the bundle image %s, but this renderer has no registry access configured", cat.Ref, cat.Bundle)
		}
		o, err := r.Loader.Resolve(ctx, cat.Bundle)
		if err != nil {
			return bundle.Origin{}, nil, fmt.Errorf("bundle %s (%s %s from spec.catalog %q): %w", cat.Bundle, cat.Package, cat.Version, cat.Ref, err)
		}
		if o.Image == "" {
			// A loader may take an existing directory for a reference; a
			// catalog must never make the server read its own directories.
			return bundle.Origin{}, nil, fmt.Errorf("bundle %s (%s %s from spec.catalog %q): not an image reference", cat.Bundle, cat.Package, cat.Version, cat.Ref)
		}
		return o, cat, nil
	}
	ref, isDir, err := BundleRef(req)
	if err != nil {
		return bundle.Origin{}, nil, err
	}
	if isDir {
		return bundle.Origin{Ref: req.Spec.Bundle, Dir: ref}, nil, nil
	}
	if r.Loader == nil {
		return bundle.Origin{}, nil, fmt.Errorf("spec.bundle %q is an image reference, but this renderer has no registry access configured", ref)
	}
	o, err := r.Loader.Resolve(ctx, ref)
	if err != nil {
		return bundle.Origin{}, nil, fmt.Errorf("spec.bundle %q: %w", ref, err)
	}
	if o.Image == "" {
		// The loader treats an existing directory as a bundle; a reference
		// without ./ must never reach the server's own files (RootDir would
		// not bound it).
		return bundle.Origin{}, nil, fmt.Errorf("spec.bundle %q names a local directory: write it as ./%s (relative to olm-cmp.yaml)", ref, ref)
	}
	return o, nil, nil
}

// Load reads the bundle of a resolved origin. Directories go through the
// Loader too when there is one, so its parse cache serves them as well.
func (r *Renderer) Load(ctx context.Context, o bundle.Origin) (*bundle.Bundle, error) {
	return r.load(ctx, o, nil)
}

// load is Load; errors name the catalog when cat chose the bundle.
func (r *Renderer) load(ctx context.Context, o bundle.Origin, cat *Catalog) (*bundle.Bundle, error) {
	what := fmt.Sprintf("spec.bundle %q", o.Ref)
	if cat != nil {
		what = fmt.Sprintf("bundle %s (%s %s from spec.catalog %q)", o.Ref, cat.Package, cat.Version, cat.Ref)
	}
	if r.Loader == nil {
		b, err := bundle.LoadDir(o.Dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		b.Origin.Ref = o.Ref
		return b, nil
	}
	b, err := r.Loader.Load(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
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
