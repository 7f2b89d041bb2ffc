// Package render is the pipeline every transport shares: spec → bundle →
// OLM conversion → the objects and annotations olm-cmp adds, sync waves →
// exclude, images, patches → cluster APIs → one deterministic YAML stream
// (pipeline.go's steps; docs/spec.md, "Pipeline").
// The CLI, the Argo CD plugin (both modes) and the HTTP API call Render and
// nothing else, so they cannot drift apart.
package render

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/catalog"
	"github.com/olm-cmp/olm-cmp/internal/convert"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/requirements"
	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/transform"
	"github.com/olm-cmp/olm-cmp/internal/verify"
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
	// with a warning, or fail the render when a kept object needs them.
	APIVersions []string
	// Project is the Argo CD project asking (ARGOCD_APP_PROJECT_NAME from
	// the repo-server, or --project): under a tenancy policy the engine
	// renders with that project's Renderer. It changes no output.
	Project string
}

// Locate names the file and line of the spec field err is about
// (patches[0]: ...), from the request's olm-cmp.yaml read again: only a
// failed render pays for it. Without a source directory, or when the file
// no longer reads, err is returned as it is; its kind (errors.As) is kept.
func (r Request) Locate(err error) error {
	if r.SourceDir == "" {
		return err
	}
	f, ferr := spec.Load(r.SourceDir)
	if ferr != nil {
		return err
	}
	return f.Locate(err, &r.Spec)
}

// Result is a rendered bundle.
type Result struct {
	// Origin is the bundle that was rendered, pinned by digest.
	Origin bundle.Origin
	// Catalog, for a spec that names a catalog, says which catalog (pinned)
	// and which of its bundles was chosen; nil otherwise.
	Catalog *catalog.Choice
	// Package and Version identify the operator (CSV spec.version).
	Package, Version string
	// CSVName is the ClusterServiceVersion's metadata.name.
	CSVName string
	// Manifests are the objects, one YAML document each, in apply order.
	Manifests []string
	// JSON holds the same objects as compact JSON, one per string, in the
	// same order, written from the objects themselves (the plugin server
	// sends them: the repo-server reads JSON faster). An object JSON cannot
	// say exactly is its YAML document (see transform.SerializeJSON).
	// Empty when the Renderer is YAMLOnly.
	JSON []string
	// KeptYAML counts the objects JSON holds as YAML.
	KeptYAML int
	// Warnings are things the user should know but that did not stop the render.
	Warnings []string
	// Requirements are the requirements report's findings (package
	// requirements), accepted ones included; the others are also Warnings.
	Requirements []requirements.Finding
	// Signatures are Resolved.Signatures: what the trust policy said about
	// the images rendered.
	Signatures []Signature
}

// YAML joins the manifests into one multi-document stream (in one
// allocation: a large bundle's stream is megabytes).
func (r *Result) YAML() []byte {
	n := 0
	for _, m := range r.Manifests {
		n += len("---\n") + len(m) + 1
	}
	b := make([]byte, 0, n)
	for _, m := range r.Manifests {
		b = append(b, "---\n"...)
		b = append(b, m...)
		if !strings.HasSuffix(m, "\n") {
			b = append(b, '\n')
		}
	}
	return b
}

// WriteYAML writes the stream YAML returns to w, through a small buffer
// instead of a copy of the whole stream (a large bundle's is megabytes, at
// the moment a one-shot command's memory peaks).
func (r *Result) WriteYAML(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	for _, m := range r.Manifests {
		bw.WriteString("---\n")
		bw.WriteString(m)
		if !strings.HasSuffix(m, "\n") {
			bw.WriteByte('\n')
		}
	}
	return bw.Flush() // a bufio.Writer keeps its first error and returns it here
}

// Renderer renders requests; it is safe for concurrent use. A render is three
// steps, each exported so a cache can sit between them (internal/engine):
// Resolve pins the bundle (what a cache keys on), Load reads it, RenderLoaded
// checks spec.upgradeFrom and converts it (RenderBundle).
type Renderer struct {
	// Loader resolves and loads bundle images (and pulls catalog images when
	// it is a catalog.Puller); nil means directories only.
	Loader Loader
	// CatalogMemo, when set, keeps each catalog package read for the
	// Renderer's life (catalog.Memo): for a run that reads one catalog
	// several times (`olm-cmp upgrade`), never for a server.
	CatalogMemo *catalog.Memo

	// Verifier checks the signatures of the catalog and bundle images
	// against the cluster's trust policy, after Resolve pins them and
	// before anything reads them (signature.go); nil means no policy.
	Verifier *verify.Verifier
	// ProjectVerifier is the trust policy of the project asking (the
	// tenancy policy's trustPolicy), checked after Verifier's: it can only
	// refuse more. nil without one.
	ProjectVerifier *verify.Verifier
	// Admit, when set, decides before any registry call whether the
	// project asking may use what its spec names (admission.go); nil
	// admits everything.
	Admit Admission

	// YAMLOnly leaves Result.JSON and Result.KeptYAML empty, for a caller
	// that only prints Manifests (`olm-cmp render -o yaml` to stdout):
	// writing every object as JSON is a few percent of a large render's CPU
	// and a copy of its output in memory.
	YAMLOnly bool
}

// Loader resolves image references to digests and loads bundles.
type Loader interface {
	// Resolve pins the image reference ref (a tag moves, so this asks the
	// registry every time). Directories never reach it.
	Resolve(ctx context.Context, ref string) (bundle.Origin, error)
	// Load returns the bundle of a resolved origin (an image, or a directory
	// Resolve located), from cache when it can, as a bundle of the caller's
	// own: Render changes the CRDs of the bundle it loads.
	Load(ctx context.Context, o bundle.Origin) (*bundle.Bundle, error)
}

// Resolved is a request whose bundle is pinned: everything Load and
// RenderBundle need, and everything about the bundle a cache keys on.
type Resolved struct {
	// Request is the request, its spec valid.
	Request Request
	// Origin is the bundle: an image pinned by digest, or a directory
	// (located, inside RootDir) with its content digest (bundle.DirDigest).
	Origin bundle.Origin
	// Catalog says which bundle spec.catalog chose; nil without a catalog.
	Catalog *catalog.Choice
	// UpgradeFrom is the bundle of spec.upgradeFrom, resolved the same way;
	// nil without it (see RenderLoaded).
	UpgradeFrom *Resolved
	// Signatures are the trust policy's verdicts, the catalog image's (when
	// spec.catalog names one) then the bundle's; nil when no trust policy
	// applies (none configured, and the spec demands none).
	Signatures []Signature
}

// Render runs the whole pipeline. It returns either the complete output or an
// error; never a partial stream.
func (r *Renderer) Render(ctx context.Context, req Request) (*Result, error) {
	// Resolve and Load at once: a directory is digested by its load (the
	// Result's Origin is the loaded bundle's), not read a second time first.
	rv, err := r.resolve(ctx, req, false)
	if err != nil {
		return nil, err
	}
	b, err := r.Load(ctx, rv)
	if err != nil {
		return nil, err
	}
	// Nothing else holds b (a Loader returns a bundle of its own each
	// time): the render may change its CRDs instead of copying them.
	return r.renderLoaded(ctx, rv, b, true)
}

// RenderLoaded is the step after Load: spec.upgradeFrom's safety check
// (checkUpgradeFrom: its errors fail the render, its warnings come first),
// then RenderBundle.
// b is left as it was: the caller may render it again.
func (r *Renderer) RenderLoaded(ctx context.Context, rv Resolved, b *bundle.Bundle) (*Result, error) {
	return r.renderLoaded(ctx, rv, b, false)
}

// renderLoaded is RenderLoaded; ownsBundle hands b over to the render
// (convert.Options.OwnsBundle), for a caller that reads it no more.
func (r *Renderer) renderLoaded(ctx context.Context, rv Resolved, b *bundle.Bundle, ownsBundle bool) (*Result, error) {
	upgradeWarnings, err := r.checkUpgradeFrom(ctx, rv, b)
	if err != nil {
		return nil, err
	}
	res, err := renderBundle(ctx, rv, b, renderMode{json: !r.YAMLOnly, ownsBundle: ownsBundle})
	if err != nil {
		return nil, err
	}
	res.Warnings = append(upgradeWarnings, res.Warnings...)
	return res, nil
}

// resolveBundle pins the bundle of a validated spec: a directory is located
// (and kept inside RootDir) and digested, an image tag is resolved to a
// digest, the bundle the catalog cat (spec.catalog, opened by the caller)
// chooses is resolved.
func (r *Renderer) resolveBundle(ctx context.Context, req Request, cat *openedCatalog, digestDir bool) (Resolved, error) {
	s := req.Spec
	rv := Resolved{Request: req}
	if s.Catalog != "" {
		c, err := chooseBundle(ctx, req, cat)
		if err != nil {
			return Resolved{}, err
		}
		if r.Loader == nil {
			return Resolved{}, fmt.Errorf("spec.catalog %s chose the bundle image %s, but this renderer has no registry access configured", echo.Quote(c.Ref), c.Bundle)
		}
		if r.Admit != nil {
			if err := r.Admit.Image(RoleBundle, chosen(c), c.Bundle); err != nil {
				return Resolved{}, err
			}
		}
		if rv.Origin, err = r.Loader.Resolve(ctx, c.Bundle); err != nil {
			return Resolved{}, fmt.Errorf("%s: %w", chosen(c), err)
		}
		rv.Catalog = c
		if err := r.checkChosenPin(ctx, s, rv); err != nil {
			return Resolved{}, err
		}
		return rv, nil
	}
	dir, img, isDir, err := bundleRef(req)
	if err != nil {
		return Resolved{}, err
	}
	if isDir {
		rv.Origin = bundle.Origin{Ref: s.Bundle, Dir: dir}
		if digestDir {
			d, err := bundle.DirDigest(dir)
			if err != nil {
				return Resolved{}, dirError(fmt.Sprintf("spec.bundle %q", s.Bundle), err)
			}
			rv.Origin.Digest = d
		}
		return rv, nil
	}
	if r.Loader == nil {
		return Resolved{}, fmt.Errorf("spec.bundle %s is an image reference, but this renderer has no registry access configured", echo.Quote(img.ref()))
	}
	if rv.Origin, err = r.resolvePinned(ctx, img); err != nil {
		return Resolved{}, err
	}
	return rv, nil
}

// chooseBundle picks from cat, the catalog spec.catalog names (see
// openCatalog), the bundle of spec.package in spec.channel matching the
// spec.version range, as OLM v1 would install it.
func chooseBundle(ctx context.Context, req Request, cat *openedCatalog) (*catalog.Choice, error) {
	s := req.Spec
	q := catalog.Query{Package: s.Package, Channel: s.Channel, Range: s.Version}
	c, err := catalog.FromFS(ctx, s.Catalog, cat.image, cat.fsys, q)
	if err != nil {
		return nil, fmt.Errorf("spec.catalog %s: %w", echo.Quote(s.Catalog), err)
	}
	// The catalog is data from wherever it was published: its bundle must be
	// an image, never a path (by the spec's own rule).
	if IsDirRef(c.Bundle) {
		return nil, fmt.Errorf("spec.catalog %s: package %s version %s has image %s, which is not an image reference", echo.Quote(s.Catalog), echo.Quote(s.Package), c.Version, echo.Quote(c.Bundle))
	}
	return c, nil
}

// chosen names the bundle a catalog chose, for errors.
func chosen(c *catalog.Choice) string {
	// The image and version are the catalog's: escaped and capped.
	return fmt.Sprintf("bundle %s (%s %s from spec.catalog %s)", echo.Short(c.Bundle), echo.Short(c.Package), echo.Short(c.Version), echo.Quote(c.Ref))
}

// Load reads the bundle of a resolved request. Directories go through the
// Loader too when there is one, so its parse cache serves them as well.
func (r *Renderer) Load(ctx context.Context, rv Resolved) (*bundle.Bundle, error) {
	o := rv.Origin
	what := fmt.Sprintf("spec.bundle %q", o.Ref)
	if rv.Catalog != nil {
		what = chosen(rv.Catalog)
	}
	o.SkipFiles = rv.Request.Spec.ExcludeFiles
	if r.Loader == nil {
		b, err := bundle.LoadDir(o.Dir, o.SkipFiles...)
		if err != nil {
			return nil, skipHint(dirError(what, err))
		}
		b.Origin.Ref = o.Ref
		return b, nil
	}
	b, err := r.Loader.Load(ctx, o)
	if err != nil {
		return nil, skipHint(dirError(what, err))
	}
	if err := checkPromised(rv.Catalog, b); err != nil {
		return nil, err
	}
	return b, nil
}

// dirError names the bundle of a load error as the spec names it (what):
// the directory a bundle.DirError carries is the resolved absolute one, a
// temporary path on the plugin's server.
func dirError(what string, err error) error {
	var de *bundle.DirError
	if errors.As(err, &de) {
		err = de.Err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// RenderBundle converts the loaded bundle of a resolved request. It never
// modifies b (the pipeline copies what it changes), so one loaded bundle can
// be rendered by many requests at once.
func RenderBundle(ctx context.Context, rv Resolved, b *bundle.Bundle) (*Result, error) {
	return renderBundle(ctx, rv, b, renderMode{json: true})
}

// renderMode is what a caller of renderBundle asks of it.
type renderMode struct {
	json       bool // Result.JSON wanted
	ownsBundle bool // b is the render's to change (convert.Options.OwnsBundle)
}

// renderBundle is RenderBundle, writing Result.JSON only when mode.json.
func renderBundle(ctx context.Context, rv Resolved, b *bundle.Bundle, mode renderMode) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := newPipeline(rv.Request, b)
	if err != nil {
		return nil, err
	}
	p.ownsBundle = mode.ownsBundle
	p.signatures = rv.Signatures
	if err := checkExcludeFiles(p, rv.Request.Spec, b); err != nil {
		return nil, err
	}
	nodes, manifests, err := p.run(ctx)
	if err != nil {
		return nil, err
	}
	// The report and the JSON each walk every object once more (a
	// multi-megabyte CRD: a few hundred milliseconds): a deadline that
	// passed meanwhile stops the render here, not after both.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	report, reqWarnings, err := checkRequirements(rv.Request, b, nodes, p.unmatched, unverified(rv.Signatures))
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var js []string
	var kept int
	if mode.json {
		js, kept = transform.SerializeJSON(nodes, manifests)
	}
	return &Result{
		Origin:    b.Origin,
		Catalog:   rv.Catalog,
		Package:   b.Package,
		Version:   b.CSV.Spec.Version.String(),
		CSVName:   b.CSV.Name,
		Manifests: manifests,
		JSON:      js,
		KeptYAML:  kept,
		Warnings:  append(p.warnings, reqWarnings...),

		Requirements: report,
		Signatures:   rv.Signatures,
	}, nil
}

// certProvider picks the webhook certificate provider (spec.CertProvider;
// cert-manager is the default because it is the one provider that works on
// any cluster).
func certProvider(s spec.Spec, b *bundle.Bundle) convert.CertProvider {
	return convert.CertProvider(s.CertProvider(len(b.CSV.Spec.WebhookDefinitions) > 0))
}
