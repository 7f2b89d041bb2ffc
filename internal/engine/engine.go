package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/render"
)

// Renderer is the render function the transports call; *render.Renderer and
// *Engine implement it.
type Renderer interface {
	Render(ctx context.Context, req render.Request) (*render.Result, error)
}

// EngineOptions configure an Engine. The zero value is usable.
type EngineOptions struct {
	// Loader resolves and loads bundle images (the bundle package's image
	// loader, itself caching extracted bundles on disk by digest); nil means
	// directory bundles only.
	Loader render.Loader
	// NewRenderer builds the inner renderer around the engine's collapsing
	// loader; nil means &render.Renderer{Loader: l}. Tests swap it.
	NewRenderer func(l render.Loader) Renderer
	// MaxEntries and MaxBytes bound the rendered-output cache (defaults 256
	// entries, 256 MiB of manifests, YAML and JSON counted). MaxEntries < 0
	// disables it.
	MaxEntries int
	MaxBytes   int64
	// RegistryTimeout bounds one shared resolve or pull, which outlives the
	// request that started it (default 5 minutes).
	RegistryTimeout time.Duration
	Metrics         *Metrics
}

// Engine renders with a warm cache. It keys rendered output by everything
// that decides it: the bundle's digest (an image's tag is re-resolved on every
// request, because tags move; a directory's files are hashed), the normalized
// spec, the target cluster's API versions and the contents of the source
// directory's files (olm-cmp.yaml, extra manifests, patch files).
//
// Three layers keep N concurrent requests for one bundle down to one piece of
// work each: concurrent resolves of one reference share one registry round
// trip, concurrent loads of one digest share one pull, and concurrent renders
// of one key share one render.
type Engine struct {
	inner   Renderer
	loader  *collapsingLoader // nil without an image loader
	results *lru.Cache[string, *Rendered]
	bytes   atomic.Int64
	max     int64
	m       *Metrics

	mu      sync.Mutex
	flights map[string]*flight
}

// flight is one render in progress that later identical requests wait for.
type flight struct {
	done chan struct{}
	res  *Rendered
	err  error
}

// Rendered is a render as the engine caches it: the Result (YAML manifests,
// for people: the HTTP render) and the same manifests as compact JSON (for
// the repo-server), converted once per render.
type Rendered struct {
	*render.Result
	// JSON holds Result.Manifests as compact JSON, one object per string, in
	// the same order; a manifest JSON cannot say exactly is the YAML string
	// itself (see ManifestsJSON).
	JSON []string
	// KeptYAML counts those.
	KeptYAML int
}

func NewRendered(res *render.Result) *Rendered {
	js, kept := ManifestsJSON(res.Manifests)
	return &Rendered{Result: res, JSON: js, KeptYAML: kept}
}

// size is what the entry holds in bytes: both forms of every manifest (a
// manifest kept as YAML is one string, counted once) and the warnings.
func (r *Rendered) size() int64 {
	var n int64
	for i, m := range r.Manifests {
		n += int64(len(m))
		if r.JSON[i] != m { // equal only when it is the same string
			n += int64(len(r.JSON[i]))
		}
	}
	for _, w := range r.Warnings {
		n += int64(len(w))
	}
	return n + 512
}

// NewEngine builds an Engine.
func NewEngine(o EngineOptions) *Engine {
	e := &Engine{m: o.Metrics, flights: map[string]*flight{}, max: o.MaxBytes}
	if e.max <= 0 {
		e.max = 256 << 20
	}
	if o.RegistryTimeout <= 0 {
		o.RegistryTimeout = 5 * time.Minute
	}
	var inner render.Loader
	if o.Loader != nil {
		e.loader = &collapsingLoader{base: o.Loader, timeout: o.RegistryTimeout, m: o.Metrics}
		inner = e.loader
	}
	if o.NewRenderer != nil {
		e.inner = o.NewRenderer(inner)
	} else {
		e.inner = &render.Renderer{Loader: inner}
	}
	n := o.MaxEntries
	if n == 0 {
		n = 256
	}
	if n > 0 {
		e.results, _ = lru.NewWithEvict(n, func(_ string, r *Rendered) {
			e.bytes.Add(-r.size())
		})
	}
	return e
}

// Info says how a render was served, for logs.
type Info struct {
	// Cache is "hit", "inflight" (joined an identical render), "miss" or
	// "off" (the inputs could not be keyed; rendered uncached).
	Cache string
	// Digest is the bundle digest the request resolved to ("" when unkeyed).
	Digest string
}

// Render implements Renderer. The returned Result is shared with the cache
// and other callers: treat it as read-only.
func (e *Engine) Render(ctx context.Context, req render.Request) (*render.Result, error) {
	res, _, err := e.RenderInfo(ctx, req)
	if err != nil {
		return nil, err
	}
	return res.Result, nil
}

// RenderInfo renders, with the manifests also as JSON, and says how. The
// returned value is shared with the cache and other callers: read-only.
func (e *Engine) RenderInfo(ctx context.Context, req render.Request) (*Rendered, Info, error) {
	ctx, key, digest, err := e.key(ctx, req)
	if err != nil {
		return nil, Info{}, err
	}
	if key == "" || e.results == nil {
		res, err := e.inner.Render(ctx, req)
		e.m.render(err)
		if err == nil && res == nil {
			err = errors.New("internal error: the renderer returned no result and no error")
		}
		if err != nil {
			return nil, Info{Cache: "off", Digest: digest}, err
		}
		return NewRendered(res), Info{Cache: "off", Digest: digest}, nil
	}
	info := Info{Cache: "hit", Digest: digest}
	for {
		if res, ok := e.results.Get(key); ok {
			e.m.cacheHit("render")
			return res, info, nil
		}
		e.mu.Lock()
		f, waiting := e.flights[key]
		if !waiting {
			f = &flight{done: make(chan struct{})}
			e.flights[key] = f
		}
		e.mu.Unlock()

		if !waiting {
			e.m.cacheMiss("render")
			e.own(ctx, key, f, req)
			info.Cache = "miss"
			return f.res, info, f.err
		}

		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, info, ctx.Err()
		}
		if f.err != nil && isContextError(f.err) && ctx.Err() == nil {
			// The owner's deadline or cancellation ended the shared render,
			// not ours: take over.
			continue
		}
		e.m.cacheHit("inflight")
		info.Cache = "inflight"
		return f.res, info, f.err
	}
}

// own runs the render of flight f. The owner renders on its own goroutine
// with its own context: req.SourceDir is its temporary directory, removed
// when it returns, so the render must not outlive it. The flight is closed
// even if the render panics, or every later identical request would wait
// for it forever.
func (e *Engine) own(ctx context.Context, key string, f *flight, req render.Request) {
	defer func() {
		if r := recover(); r != nil {
			f.res, f.err = nil, fmt.Errorf("internal error: render panicked: %v", r)
			e.finish(key, f)
			panic(r) // the server's interceptor turns it into this request's error
		}
		e.finish(key, f)
	}()
	res, err := e.inner.Render(ctx, req)
	if err == nil && res == nil {
		err = errors.New("internal error: the renderer returned no result and no error")
	}
	e.m.render(err)
	if err != nil {
		f.err = err
		return
	}
	f.res = NewRendered(res)
	e.store(key, f.res)
}

func (e *Engine) finish(key string, f *flight) {
	e.mu.Lock()
	delete(e.flights, key)
	e.mu.Unlock()
	close(f.done)
}

func (e *Engine) store(key string, res *Rendered) {
	size := res.size()
	if size > e.max/4 {
		return // one huge result must not flush everything else
	}
	if found, _ := e.results.ContainsOrAdd(key, res); found {
		return
	}
	// Evict the least recently used entries past the byte budget; the evict
	// callback keeps e.bytes in step.
	for e.bytes.Add(size); e.bytes.Load() > e.max; {
		if _, _, ok := e.results.RemoveOldest(); !ok {
			break
		}
	}
}

// Purge empties the rendered-output cache (tests, and a future admin endpoint).
func (e *Engine) Purge() {
	if e.results != nil {
		e.results.Purge()
	}
}

// key computes the cache key of req, resolving an image tag on the way (and
// pinning the answer in the returned context so the render does not ask the
// registry again). An empty key means "render uncached": the inputs could not
// be hashed, and the render itself will report why.
func (e *Engine) key(ctx context.Context, req render.Request) (context.Context, string, string, error) {
	s := req.Spec
	h := sha256.New()
	var digest, catalog string
	var ref string
	var isDir bool
	if s.Catalog != "" {
		// The bundle is whatever the catalog chooses now: key on that
		// bundle's digest (and the catalog's, which the result reports), and
		// pin the choice so the render uses it rather than reading the
		// catalog again, whose tag may have moved meanwhile.
		var l render.Loader
		if e.loader != nil {
			l = e.loader
		}
		if err := s.Validate(); err != nil {
			return ctx, "", "", nil // the render reports it
		}
		c, err := render.ChooseBundle(ctx, l, req)
		if err != nil {
			return ctx, "", "", nil // the render reads the catalog again and reports it
		}
		ctx = render.WithCatalog(ctx, c)
		ref, catalog = c.Bundle, c.Image
	} else {
		var err error
		if ref, isDir, err = render.BundleRef(req); err != nil {
			return ctx, "", "", nil // the render reports it
		}
	}
	if isDir {
		d, err := hashBundleDir(ref)
		if err != nil {
			return ctx, "", "", nil
		}
		digest = d
	} else {
		if e.loader == nil {
			return ctx, "", "", nil
		}
		o, err := e.loader.Resolve(ctx, ref)
		if err != nil {
			return ctx, "", "", err
		}
		digest = o.Digest
		ctx = pin(ctx, ref, o)
	}
	if digest == "" {
		return ctx, "", "", nil
	}
	src, err := hashSourceFiles(req)
	if err != nil {
		return ctx, "", digest, nil
	}
	apis := slices.Clone(req.APIVersions)
	slices.Sort(apis)
	apis = slices.Compact(apis)
	// Fields are length-prefixed so no two different inputs hash alike.
	for _, part := range []string{digest, catalog, string(s.Normalized()), req.Name, fmt.Sprint(req.APIVersions != nil), strings.Join(apis, ","), src} {
		fmt.Fprintf(h, "%d:%s;", len(part), part)
	}
	return ctx, hex.EncodeToString(h.Sum(nil)), digest, nil
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// hashBundleDir hashes every regular file below dir, the bundle directory
// render.BundleRef resolved (and kept inside the repository): a superset of
// what the loader reads, so any change that could change the render changes
// the key.
func hashBundleDir(dir string) (string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	h := sha256.New()
	err = fs.WalkDir(root.FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return hashFile(h, path, root, path)
	})
	if err != nil {
		return "", err
	}
	return "dir:sha256:" + hex.EncodeToString(h.Sum(nil)), nil
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

// pinKey carries the resolutions made while keying a request, so the render
// reuses them: one registry round trip per request, and the render is of the
// very digest the key names.
type pinKey struct{}

type pins map[string]bundle.Origin

func pin(ctx context.Context, ref string, o bundle.Origin) context.Context {
	p := pins{}
	if old, ok := ctx.Value(pinKey{}).(pins); ok {
		for k, v := range old {
			p[k] = v
		}
	}
	p[ref] = o
	return context.WithValue(ctx, pinKey{}, p)
}

// collapsingLoader wraps the bundle loader: concurrent calls for the same
// reference or digest share one call to the base loader.
type collapsingLoader struct {
	base     render.Loader
	timeout  time.Duration
	m        *Metrics
	resolves singleflight.Group
	loads    singleflight.Group
	catalogs singleflight.Group
}

// Resolve pins ref, asking the registry every time (tags move) unless this
// request already did, or an identical resolve is in flight.
func (l *collapsingLoader) Resolve(ctx context.Context, ref string) (bundle.Origin, error) {
	if p, ok := ctx.Value(pinKey{}).(pins); ok {
		if o, ok := p[ref]; ok {
			return o, nil
		}
	}
	v, _, err := l.shared(ctx, &l.resolves, ref, func(c context.Context) (any, error) {
		o, err := l.base.Resolve(c, ref)
		l.m.resolve(err)
		return o, err
	})
	if err != nil {
		return bundle.Origin{}, err
	}
	return v.(bundle.Origin), nil
}

// Load loads a resolved bundle; concurrent loads of one digest pull once.
// Each caller gets its own *bundle.Bundle (renders may modify the nodes they
// are given): a caller that joined another's pull loads again, from the base
// loader's on-disk cache.
func (l *collapsingLoader) Load(ctx context.Context, o bundle.Origin) (*bundle.Bundle, error) {
	if o.Digest == "" {
		return l.base.Load(ctx, o)
	}
	v, mine, err := l.shared(ctx, &l.loads, o.Digest, func(c context.Context) (any, error) {
		b, err := l.base.Load(c, o)
		if o.Image != "" {
			l.m.pull(err)
		}
		return b, err
	})
	if err != nil {
		return nil, err
	}
	if !mine {
		return l.base.Load(ctx, o)
	}
	return v.(*bundle.Bundle), nil
}

// LoadCatalog loads a catalog image when the base loader can; concurrent
// loads of one reference share one resolve and pull.
func (l *collapsingLoader) LoadCatalog(ctx context.Context, ref string) (fs.FS, bundle.Origin, error) {
	cl, ok := l.base.(render.CatalogLoader)
	if !ok {
		return nil, bundle.Origin{}, errors.New("this loader cannot pull catalog images")
	}
	type loaded struct {
		fsys fs.FS
		o    bundle.Origin
	}
	v, _, err := l.shared(ctx, &l.catalogs, ref, func(c context.Context) (any, error) {
		fsys, o, err := cl.LoadCatalog(c, ref)
		return loaded{fsys, o}, err
	})
	if err != nil {
		return nil, bundle.Origin{}, err
	}
	r := v.(loaded)
	return r.fsys, r.o, nil
}

// shared runs fn once for all concurrent callers with the same key. fn runs
// detached from the caller's cancellation (bounded by l.timeout) so one
// impatient caller does not fail the others; each caller still returns when
// its own context ends. mine reports whether this caller's call ran fn.
func (l *collapsingLoader) shared(ctx context.Context, g *singleflight.Group, key string, fn func(context.Context) (any, error)) (any, bool, error) {
	token := new(byte)
	type out struct {
		v     any
		owner *byte
	}
	ch := g.DoChan(key, func() (any, error) {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.timeout)
		defer cancel()
		v, err := fn(c)
		return out{v, token}, err
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, false, r.Err
		}
		o := r.Val.(out)
		return o.v, o.owner == token, nil
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

// Stats reports the rendered-output cache's entry count and byte size.
func (e *Engine) Stats() (entries int, bytes int64) {
	if e.results == nil {
		return 0, 0
	}
	return e.results.Len(), e.bytes.Load()
}
