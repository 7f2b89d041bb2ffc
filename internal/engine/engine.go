// Package engine is the render cache every transport shares: the Argo CD
// plugin's gRPC server, the HTTP render and the classic mode call one
// Engine. It sits on render's seam (Resolve, then Load, then RenderLoaded):
// it keys each render on what Resolve pins and the files the render reads,
// keeps rendered output in a bounded cache, lets concurrent identical
// requests share one render, and counts all of it in Prometheus metrics.
// Registry work (one resolve per reference, one pull per digest at a time)
// is shared by the bundle package's image loader, not here.
package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/bytecache"
	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/tenancy"
	"github.com/olm-cmp/olm-cmp/internal/verify"
)

// Renderer is what the transports call: render one request and say how it
// was served. *Engine implements it.
type Renderer interface {
	// Render returns the complete result or an error. The result may be
	// shared with a cache and other callers: treat it as read-only. It
	// returns soon after ctx ends, whatever step the render is in, with an
	// error that wraps ctx's cause; work that still reads req.SourceDir
	// then is announced by Info.Running.
	Render(ctx context.Context, req render.Request) (*render.Result, Info, error)
}

// Info says how a render was served, for logs.
type Info struct {
	// Cache is "hit", "inflight" (joined an identical render), "miss" or
	// "off" (rendered uncached: the cache is disabled, or the source files
	// could not be read, which the render then reports).
	Cache string
	// Digest is the bundle digest the request resolved to.
	Digest string
	// Running, when not nil, is closed once no work of this request reads
	// its source directory any more: Render returned at the request's
	// deadline while a step that does not check its context was still
	// running. The caller removes the directory only then.
	Running <-chan struct{}
}

// EngineOptions configure an Engine. The zero value is usable.
type EngineOptions struct {
	// Loader resolves and loads bundle images and pulls catalog images (the
	// bundle package's image loader, which caches extracted images on disk by
	// digest); nil means directory bundles and catalogs only.
	Loader render.Loader
	// Verifier returns the verifier of the cluster's trust policy
	// (render.Renderer.Verifier) for each request, so that a policy file
	// reloaded since takes effect on the next render; an error (a policy
	// that no longer loads) fails the request. nil means no policy.
	Verifier func() (*verify.Verifier, error)
	// Tenancy, when set, gives the renderer of the Argo CD project asking
	// (render.Request.Project) under the tenancy policy, in place of Loader
	// and Verifier's: its loader with its own credentials, its trust
	// policies and its admission. A refusal (or a policy that no longer
	// loads) fails the request before anything is resolved.
	Tenancy func(project string) (Tenant, error)
	// MaxEntries and MaxBytes bound the rendered-output cache (defaults 256
	// entries, 256 MiB of manifests, YAML and JSON counted). MaxEntries < 0
	// disables it.
	MaxEntries int
	MaxBytes   int64
	Metrics    *Metrics
}

// Engine renders with a warm cache. It keys rendered output by everything
// that decides it: the bundle render.Renderer.Resolve pins (an image's tag
// is resolved on every request, because tags move; a directory is digested
// by the bundle package), the catalog choice, the normalized spec, the
// target cluster's API versions, the contents of the source directory's
// files the render reads (extra manifests, patch files), and the trust
// policy's hash and verdicts (Resolve verifies on every request, so a policy
// change or a signature pushed since takes effect on the next render; a
// refusal is an error, never cached). It is safe for concurrent use.
type Engine struct {
	r       *render.Renderer
	trust   func() (*verify.Verifier, error)
	tenancy func(project string) (Tenant, error)
	results *bytecache.Cache[string, *render.Result] // nil when disabled
	flights flights
	m       *Metrics
}

// NewEngine builds an Engine.
func NewEngine(o EngineOptions) *Engine {
	e := &Engine{r: &render.Renderer{Loader: o.Loader}, trust: o.Verifier, tenancy: o.Tenancy, m: o.Metrics}
	if o.MaxEntries >= 0 {
		n, max := o.MaxEntries, o.MaxBytes
		if n == 0 {
			n = 256
		}
		if max <= 0 {
			max = 256 << 20
		}
		// One huge result must not flush everything else.
		e.results = bytecache.New[string, *render.Result](n, max, max/4)
	}
	return e
}

// Render implements Renderer. The work runs in a goroutine of its own, so
// that the caller gets its answer (a *StoppedError naming the phase that
// was slow) when ctx ends, even while a step is busy; the work itself stops
// when that step next checks its context.
func (e *Engine) Render(ctx context.Context, req render.Request) (*render.Result, Info, error) {
	p := &progress{}
	done := make(chan struct{})
	var (
		res  *render.Result
		info Info
		err  error
	)
	go func() {
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				res, err = nil, &PanicError{Value: r, Stack: debug.Stack()}
			}
		}()
		res, info, err = e.renderRequest(ctx, req, p)
	}()
	select {
	case <-done:
		return res, info, err
	case <-ctx.Done():
		select {
		case <-done: // it ended too: its own error names the step
			return res, info, err
		default:
			return nil, Info{Running: done}, stopped(ctx, p)
		}
	}
}

// renderRequest resolves req, then answers from the cache, from an
// identical render in flight, or from a new render.
func (e *Engine) renderRequest(ctx context.Context, req render.Request, p *progress) (*render.Result, Info, error) {
	// A signature check is a stage of its own, inside Resolve's phase.
	ctx = render.WithStage(ctx, func(stage string) func() {
		prev := p.current()
		p.enter(stage)
		return func() { p.enter(prev) }
	})
	if req.Spec.Catalog != "" {
		p.enter("choosing the bundle from spec.catalog " + echo.Quote(spec.Redact(req.Spec.Catalog)))
	} else {
		p.enter("resolving spec.bundle " + echo.Quote(spec.Redact(req.Spec.Bundle)))
	}
	if e.tenancy != nil {
		// One olm-cmp-check at a time per project: a tenant's slow cold
		// checks never hold every place (checkproc.WithHolder).
		ctx = checkproc.WithHolder(ctx, "project "+echo.Quote(req.Project))
	}
	var res *render.Result
	var info Info
	r, tenant, err := e.renderer(req.Project)
	if err == nil {
		res, info, err = e.resolveAndRender(ctx, r, tenant, req, p)
	}
	if e.tenancy != nil {
		// Every request of a project is counted, refused or rendered.
		e.m.project(tenant.Label, err)
	}
	return res, info, err
}

// Tenant is the renderer of one project under the tenancy policy
// (EngineOptions.Tenancy).
type Tenant struct {
	Renderer *render.Renderer
	// Key is the tenant's part of the cache key: the tenancy policy's hash
	// and the entry's, so that an edited policy, or another entry, never
	// shares a render by accident. Renders are shared across projects of
	// equal Key only after each project's own Resolve (its admission, and
	// its credentials' access to every image) passed.
	Key string
	// Label names the tenant in metrics (the policy entry: bounded).
	Label string
}

// TenantsOf is rs as EngineOptions.Tenancy: each project's renderer, the
// policy's and entry's hashes as its key part, its entry as its metrics
// label. nil for a nil rs (no tenancy policy).
func TenantsOf(rs *tenancy.Renderers) func(project string) (Tenant, error) {
	if rs == nil {
		return nil
	}
	return func(project string) (Tenant, error) {
		r, t, err := rs.For(project)
		if err != nil {
			return Tenant{}, err
		}
		return Tenant{Renderer: r, Key: t.Key(), Label: t.Label()}, nil
	}
}

// resolveAndRender resolves req with r, then answers from the cache, from
// an identical render in flight, or from a new render.
func (e *Engine) resolveAndRender(ctx context.Context, r *render.Renderer, tenant Tenant, req render.Request, p *progress) (*render.Result, Info, error) {
	rv, err := r.Resolve(ctx, req)
	if err != nil {
		return nil, Info{}, err
	}
	info := Info{Cache: "off", Digest: rv.Origin.Digest}
	if e.results == nil {
		res, err := e.render(ctx, r, rv, p)
		return res, info, err
	}
	key, err := key(rv, r.PolicyHash()+" tenancy:"+tenant.Key)
	if err != nil {
		res, err := e.render(ctx, r, rv, p) // it reports what could not be read
		return res, info, err
	}
	if res, ok := e.results.Get(key); ok {
		e.m.cacheHit("render")
		info.Cache = "hit"
		return res, info, nil
	}
	info.Cache = "miss"
	res, joined, err := e.flights.do(ctx, key, p, func(ctx context.Context, p *progress) (*render.Result, error) {
		if res, ok := e.results.Get(key); ok { // stored by a render that just ended
			info.Cache = "hit"
			e.m.cacheHit("render")
			return res, nil
		}
		e.m.cacheMiss("render")
		res, err := e.render(ctx, r, rv, p)
		if err == nil {
			e.results.Add(key, res, size(res))
		}
		return res, err
	})
	if joined {
		info.Cache = "inflight"
		e.m.cacheHit("inflight")
	}
	return res, info, err
}

// renderer is the renderer of one request: the project's under a tenancy
// policy, else the engine's with the trust policy's verifier as it is now.
func (e *Engine) renderer(project string) (*render.Renderer, Tenant, error) {
	if e.tenancy != nil {
		t, err := e.tenancy(project)
		if err != nil {
			return nil, t, err
		}
		return t.Renderer, t, nil
	}
	if e.trust == nil {
		return e.r, Tenant{}, nil
	}
	v, err := e.trust()
	if err != nil {
		return nil, Tenant{}, err
	}
	r := *e.r
	r.Verifier = v
	return &r, Tenant{}, nil
}

// render loads and renders a resolved request.
func (e *Engine) render(ctx context.Context, r *render.Renderer, rv render.Resolved, p *progress) (*render.Result, error) {
	if rv.Origin.Image != "" {
		p.enter("loading the bundle image " + rv.Origin.Image)
	} else {
		p.enter("loading the bundle")
	}
	b, err := r.Load(ctx, rv)
	var res *render.Result
	if err == nil {
		if rv.UpgradeFrom != nil {
			p.enter("checking the upgrade from spec.upgradeFrom and rendering")
		} else {
			p.enter("rendering")
		}
		res, err = r.RenderLoaded(ctx, rv, b)
	}
	if err == nil && res == nil {
		err = errors.New("internal error: the renderer returned no result and no error")
	}
	e.m.render(err)
	return res, err
}

// Stats reports the rendered-output cache's entry count and byte size.
func (e *Engine) Stats() (entries int, bytes int64) {
	if e.results == nil {
		return 0, 0
	}
	return e.results.Len(), e.results.Bytes()
}

// size is what a cached result holds in bytes: both forms of every object
// (an object kept as YAML is one string, counted once) and the warnings.
func size(r *render.Result) int64 {
	var n int64
	for i, m := range r.Manifests {
		n += int64(len(m))
		if i < len(r.JSON) && r.JSON[i] != m {
			n += int64(len(r.JSON[i]))
		}
	}
	for _, w := range r.Warnings {
		n += int64(len(w))
	}
	return n + 512
}

// key is the cache key of a resolved request. It holds no path of the
// request's own directories (they differ on every request), only what the
// output depends on.
func key(rv render.Resolved, policy string) (string, error) {
	src, err := hashSourceFiles(rv.Request)
	if err != nil {
		return "", err
	}
	req, o := rv.Request, rv.Origin
	var cat string
	if c := rv.Catalog; c != nil {
		// The result names the catalog it came from, which can move while
		// choosing the same bundle.
		cat = c.Image + " " + c.Bundle + " " + c.Version
	}
	// spec.upgradeFrom's bundle decides whether the render fails: its tag
	// can move like TO's, so its pinned digest is part of the key.
	var from string
	if f := rv.UpgradeFrom; f != nil {
		from = f.Origin.Digest + " " + f.Origin.Image
	}
	var sigs strings.Builder
	for _, sg := range rv.Signatures {
		fmt.Fprintf(&sigs, "%q %q %q %q %q %q %q;", sg.Role, sg.Image, sg.Digest, sg.Scope, sg.Mode, sg.Signer, sg.Problem)
	}
	apis := slices.Clone(req.APIVersions)
	slices.Sort(apis)
	apis = slices.Compact(apis)
	h := sha256.New()
	// Fields are length-prefixed so no two different inputs hash alike.
	for _, part := range []string{o.Digest, o.Image, o.Ref, cat, from, string(req.Spec.Normalized()), req.Name, fmt.Sprint(req.APIVersions != nil), strings.Join(apis, ","), src, policy, sigs.String()} {
		fmt.Fprintf(h, "%d:%s;", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashSourceFiles hashes what a render reads from the source directory
// besides the bundle and the spec (which the key holds already): the extra
// manifests (render.ExtraManifestFiles) and the files patches name, through
// an os.Root so a hostile path reads nothing outside.
func hashSourceFiles(req render.Request) (string, error) {
	if req.SourceDir == "" {
		return "", nil
	}
	root, err := os.OpenRoot(req.SourceDir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	h := sha256.New()
	names, err := render.ExtraManifestFiles(req.SourceDir)
	if err != nil {
		return "", err
	}
	for _, n := range names {
		// Not a regular file (a link, a FIFO): the render refuses it unless
		// spec.extraManifests leaves it out; its name and kind are the key's.
		if fi, err := root.Lstat(n); err == nil && !fi.Mode().IsRegular() {
			fmt.Fprintf(h, "%d:%s;%s;", len(n), n, fi.Mode().Type())
			continue
		}
		if err := hashFile(h, n, root, n); err != nil {
			return "", err
		}
	}
	for _, p := range req.Spec.Patches {
		if p.Path == "" {
			continue
		}
		if !filepath.IsLocal(p.Path) {
			return "", errors.New("patch path outside the source directory") // render reports it
		}
		if err := hashFile(h, "patch:"+p.Path, root, p.Path); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashFile writes name, size and content of a regular file to h; other
// kinds of files are skipped (opening a FIFO would block).
func hashFile(h io.Writer, name string, root *os.Root, path string) error {
	fi, err := root.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return nil
	}
	f, err := root.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(h, "%d:%s;%d;", len(name), name, fi.Size())
	_, err = io.Copy(h, f)
	return err
}
