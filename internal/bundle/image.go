package bundle

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/singleflight"

	"github.com/olm-cmp/olm-cmp/internal/registry"
)

// DefaultMaxBytes caps the uncompressed size of an image's layers. The largest
// real bundle (eclipse-che, 2 MB CRD) is far below it.
const DefaultMaxBytes int64 = 256 << 20

// DefaultPullTimeout bounds one image pull. A pull is shared by every caller
// waiting for the same digest, so it does not end when the first caller gives up.
const DefaultPullTimeout = 5 * time.Minute

// ImageLoader resolves image references and loads bundles from OCI images (and
// from directories already located by the caller). It implements
// render.Loader and catalog.Puller, and is safe for concurrent use; copy it
// only before first use.
//
// Extracted images are kept under CacheDir/<algorithm>/<hex>/ (manifests/ and
// metadata/ only), catalog images under CacheDir/catalogs/<algorithm>/<hex>/
// (their file-based catalog only). An entry is extracted into a temporary directory beside it
// and renamed into place, so a directory that exists is complete, and several
// processes may share the cache.
type ImageLoader struct {
	// CacheDir holds extracted images. Empty means no cache: each Load
	// extracts into a temporary directory and removes it afterwards.
	CacheDir string
	// Keychain, RegistryConfig and Insecure are the registry client's
	// (registry.Options): credentials, and the registries that may be
	// reached over plain HTTP or an unverified certificate.
	Keychain       authn.Keychain
	RegistryConfig string
	Insecure       []string
	// MaxBytes caps the total uncompressed size of an image's layers (and
	// their compressed size); 0 means DefaultMaxBytes.
	MaxBytes int64
	// MaxFiles caps the files extracted from manifests/ and metadata/; 0 means 10000.
	MaxFiles int
	// MaxLayers caps an image's layers, checked on its manifest before any
	// layer is fetched; 0 means DefaultMaxLayers.
	MaxLayers int
	// MaxCatalogBytes and MaxCatalogFiles are MaxBytes and MaxFiles for
	// catalog images (LoadCatalog); 0 means DefaultMaxCatalogBytes and 100000.
	MaxCatalogBytes int64
	MaxCatalogFiles int
	// PullTimeout bounds one pull; 0 means DefaultPullTimeout.
	PullTimeout time.Duration
	// Timeouts, AllowedRegistries and Transport are the registry client's
	// too (registry.Options): AllowedRegistries applies to bundles, catalogs
	// and the bundles catalogs name alike.
	Timeouts          registry.Timeouts
	AllowedRegistries []string
	Transport         http.RoundTripper
	// Parsed, when set, keeps parsed manifest files in memory so loading the
	// same bundle again (every Argo CD refresh) copies nodes instead of
	// parsing YAML, which is most of a load's cost. Used for images and
	// directories alike.
	Parsed *ParseCache
	// Observer, when set, is told of every tag resolution and image pull
	// sent to a registry (metrics).
	Observer RegistryObserver

	// Concurrent resolves of one reference share one registry round trip,
	// concurrent pulls of one digest share one pull: see shared.
	resolves, pulls singleflight.Group
	clientOnce      sync.Once
	client          *registry.Client
	// waiting, when set (tests only), is called by Load just before it joins
	// or starts the pull of a digest that is not cached.
	waiting func()
}

// RegistryObserver is told of the registry work an ImageLoader does.
type RegistryObserver interface {
	// Resolved follows each tag resolution sent to a registry (concurrent
	// ones for one reference share one).
	Resolved(err error)
	// Pulled follows each image pull, bundle or catalog (concurrent ones for
	// one digest share one; an image already in CacheDir is not pulled).
	Pulled(err error)
}

// Resolve pins the image reference ref: a tag is resolved with a HEAD request
// on every call (tags move), concurrent calls for one reference sharing one;
// a digest reference is returned as is. Only images: which references name
// directories is the spec's rule (render.IsDirRef), decided before a loader
// is asked.
func (l *ImageLoader) Resolve(ctx context.Context, ref string) (Origin, error) {
	r, err := l.Registry().Parse(ref)
	if err != nil {
		return Origin{}, err
	}
	if d, ok := r.(name.Digest); ok {
		return Origin{Ref: ref, Image: d.String(), Digest: d.DigestStr()}, nil
	}
	v, err := l.joined(ctx, &l.resolves, ref, func(ctx context.Context) (any, error) {
		d, err := l.Registry().Resolve(ctx, ref)
		if l.Observer != nil {
			l.Observer.Resolved(err)
		}
		if err != nil {
			return Origin{}, err
		}
		return Origin{Ref: ref, Image: d.String(), Digest: d.DigestStr()}, nil
	})
	if err != nil {
		return Origin{}, err
	}
	return v.(Origin), nil
}

// WithKeychain is a new loader with l's settings (cache directory, limits,
// parse cache, observer) and keychain k for its credentials: a tenant's
// loader (internal/tenancy). It shares l's on-disk cache, where an image is
// named by its digest, but none of its resolves or pulls in flight, so one
// project never joins another's registry call made with other credentials.
// A nil k keeps l's credentials.
//
// Field by field, not n := *l: the singleflight groups and sync.Once hold
// mutexes (go vet's copylocks), and a copied clientOnce and client would hand
// the tenant l's registry client, credentials included.
// TestWithKeychainCopiesEverySetting fails when a new setting is left out.
func (l *ImageLoader) WithKeychain(k authn.Keychain) *ImageLoader {
	n := &ImageLoader{
		CacheDir: l.CacheDir, Keychain: l.Keychain, RegistryConfig: l.RegistryConfig, Insecure: l.Insecure,
		MaxBytes: l.MaxBytes, MaxFiles: l.MaxFiles, MaxLayers: l.MaxLayers,
		MaxCatalogBytes: l.MaxCatalogBytes, MaxCatalogFiles: l.MaxCatalogFiles, PullTimeout: l.PullTimeout,
		Timeouts: l.Timeouts, AllowedRegistries: l.AllowedRegistries, Transport: l.Transport,
		Parsed: l.Parsed, Observer: l.Observer,
	}
	if k != nil {
		n.Keychain, n.RegistryConfig = k, ""
	}
	return n
}

// Registry is the client every registry call of this loader goes through,
// built from the loader's fields on first use.
func (l *ImageLoader) Registry() *registry.Client {
	l.clientOnce.Do(func() {
		l.client = registry.New(registry.Options{
			Keychain:          l.Keychain,
			RegistryConfig:    l.RegistryConfig,
			Insecure:          l.Insecure,
			Timeouts:          l.Timeouts,
			AllowedRegistries: l.AllowedRegistries,
			Transport:         l.Transport,
		})
	})
	return l.client
}

// Load returns the bundle of a resolved origin: a directory bundle through
// LoadDir, an image from the cache or else pulled, extracted and cached.
// Concurrent loads of one digest share one pull.
func (l *ImageLoader) Load(ctx context.Context, o Origin) (*Bundle, error) {
	if o.Image == "" {
		if o.Dir == "" {
			return nil, fmt.Errorf("bundle origin %q has neither an image nor a directory; call Resolve first", o.Ref)
		}
		b, err := loadDir(o.Dir, o.SkipFiles, l.Parsed)
		if err != nil {
			return nil, err
		}
		if o.Ref != "" {
			b.Origin.Ref = o.Ref
		}
		return b, nil
	}
	d, hash, err := l.pinned(o)
	if err != nil {
		return nil, err
	}
	o.Digest = hash.String()
	var b *Bundle
	err = l.withImage(ctx, d, hash, l.bundleKind(), func(dir string, cached bool) error {
		var err error
		b, err = loadImageDir(dir, o, cached, l.Parsed)
		return err
	})
	return b, err
}

// ConfigsLabel is the image config label naming the directory of a catalog
// image that holds its file-based catalog.
const ConfigsLabel = "operators.operatorframework.io.index.configs.v1"

// DefaultConfigsDir is the catalog directory when an image has no ConfigsLabel.
const DefaultConfigsDir = "/configs"

// DefaultMaxCatalogBytes caps the uncompressed size of a catalog image's
// layers. Catalog images carry an opm base image and every package's
// metadata (a Red Hat index is several hundred MB), so bundles' cap is too low.
const DefaultMaxCatalogBytes int64 = 4 << 30

// LoadCatalog pins the catalog image ref (a tag is resolved on every call:
// catalogs are republished under the same tag) and returns its file-based
// catalog, the directory its ConfigsLabel names, as the root of fsys. Only
// that directory is extracted, with the same checks as bundles, and cached by
// digest under CacheDir/catalogs/, apart from bundles. Without a CacheDir
// the catalog is read into memory and nothing is kept on disk. Concurrent
// loads of one digest share one pull.
func (l *ImageLoader) LoadCatalog(ctx context.Context, ref string) (fsys fs.FS, o Origin, err error) {
	if o, err = l.Resolve(ctx, ref); err != nil {
		return nil, Origin{}, err
	}
	d, hash, err := l.pinned(o)
	if err != nil {
		return nil, Origin{}, err
	}
	err = l.withImage(ctx, d, hash, l.catalogKind(), func(dir string, cached bool) error {
		if cached {
			// Written by withImage from regular files only: safe to read as is.
			fsys, o.Dir = os.DirFS(dir), dir
			return nil
		}
		fsys, err = memoryFS(dir)
		return err
	})
	if err != nil {
		return nil, Origin{}, err
	}
	return fsys, o, nil
}

// CatalogIndexFile is where the per-package index of a cached catalog image
// is kept (see catalog.Open): beside its extracted catalog, dir (the
// Origin.Dir LoadCatalog returns), so it is named by the same digest,
// lives on the same volume and goes with it. "" for a catalog not cached.
func CatalogIndexFile(dir string) string {
	if dir == "" {
		return ""
	}
	return filepath.Clean(dir) + ".index"
}

// pinned parses the digest reference of a resolved origin.
func (l *ImageLoader) pinned(o Origin) (name.Digest, v1.Hash, error) {
	r, err := l.Registry().Parse(o.Image)
	if err != nil {
		return name.Digest{}, v1.Hash{}, err
	}
	d, ok := r.(name.Digest)
	if !ok {
		return name.Digest{}, v1.Hash{}, fmt.Errorf("image %q is not pinned by digest; call Resolve first", o.Image)
	}
	hash, err := v1.NewHash(d.DigestStr())
	if err != nil { // name.ParseReference accepts digests v1.Hash refuses; the hash names a directory
		return name.Digest{}, v1.Hash{}, fmt.Errorf("image %q: %w", o.Image, err)
	}
	if o.Digest != "" && o.Digest != hash.String() {
		return name.Digest{}, v1.Hash{}, fmt.Errorf("image %q does not match origin digest %s", o.Image, o.Digest)
	}
	return d, hash, nil
}

// imageKind is what an image is pulled for: bundles and catalogs differ in
// what they keep, their limits and where their cache entries live.
type imageKind struct {
	// cacheSub is the subdirectory of CacheDir for this kind; bundles use
	// CacheDir itself (their layout predates catalogs), catalogs "catalogs",
	// which no digest algorithm is named, so the two never collide.
	cacheSub string
	// selection reads from the image what to extract.
	selection func(img v1.Image) (selection, error)
	maxBytes  int64
	maxFiles  int
	maxLayers int
	what      string // names the kind in messages, before its selection is known
}

func (l *ImageLoader) bundleKind() imageKind {
	return imageKind{
		selection: func(v1.Image) (selection, error) { return bundleSelection, nil },
		maxBytes:  l.maxBytes(),
		maxFiles:  l.maxFiles(),
		maxLayers: l.maxLayers(),
		what:      bundleSelection.what,
	}
}

func (l *ImageLoader) catalogKind() imageKind {
	maxBytes := l.MaxCatalogBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxCatalogBytes
	}
	maxFiles := l.MaxCatalogFiles
	if maxFiles <= 0 {
		maxFiles = 100000
	}
	return imageKind{cacheSub: "catalogs", selection: catalogConfigs, maxBytes: maxBytes, maxFiles: maxFiles, maxLayers: l.maxLayers(), what: catalogImage}
}

// catalogConfigs selects the directory the image's ConfigsLabel names.
func catalogConfigs(img v1.Image) (selection, error) {
	cfg, err := img.ConfigFile()
	if err != nil {
		return selection{}, fmt.Errorf("reading the image config: %w", err)
	}
	label := cfg.Config.Labels[ConfigsLabel]
	if label == "" {
		label = DefaultConfigsDir
	}
	dir := path.Clean("/" + label)[1:]
	if dir == "" || slices.Contains(strings.Split(label, "/"), "..") {
		return selection{}, fmt.Errorf("label %s=%q does not name a directory below the image root", ConfigsLabel, label)
	}
	return catalogSelection(dir), nil
}

// withImage calls use with a directory holding what kind extracts of image d:
// the cache entry (cached true; pulled first if missing), or without a
// CacheDir a temporary directory removed when use returns.
func (l *ImageLoader) withImage(ctx context.Context, d name.Digest, hash v1.Hash, kind imageKind, use func(dir string, cached bool) error) error {
	if l.CacheDir == "" {
		tmp, err := os.MkdirTemp("", "olm-cmp-image-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir := filepath.Join(tmp, "image")
		err = l.pull(ctx, d, kind, tmp, dir)
		if l.Observer != nil {
			l.Observer.Pulled(err)
		}
		if err != nil {
			return err
		}
		return use(dir, false)
	}

	dir := filepath.Join(l.CacheDir, kind.cacheSub, hash.Algorithm, hash.Hex)
	if _, err := os.Stat(dir); err == nil {
		return use(dir, true)
	}
	if l.waiting != nil {
		l.waiting()
	}
	_, err := l.shared(ctx, &l.pulls, dir, func(ctx context.Context) (any, error) {
		if _, err := os.Stat(dir); err == nil { // pulled while we waited for the lock
			return nil, nil
		}
		parent := filepath.Dir(dir)
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, fmt.Errorf("image cache: %w", err)
		}
		err := l.pull(ctx, d, kind, parent, dir)
		if l.Observer != nil {
			l.Observer.Pulled(err)
		}
		return nil, err
	})
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("loading image %s: %w", d, ctx.Err())
		}
		return err
	}
	return use(dir, true)
}

// shared runs fn once for all concurrent callers with the same key. The
// work is shared, so it runs detached from the caller that started it,
// bounded by PullTimeout: one caller giving up fails no other. Each caller
// still returns when its own context ends. This is the one place registry
// work outlives a request.
func (l *ImageLoader) shared(ctx context.Context, g *singleflight.Group, key string, fn func(context.Context) (any, error)) (any, error) {
	ch := g.DoChan(key, func() (any, error) {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.pullTimeout())
		defer cancel()
		return fn(c)
	})
	select {
	case r := <-ch:
		return r.Val, r.Err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// joined runs fn once for all concurrent callers with the same key, under
// the context of the caller that started it: a tag lookup is one small
// request, so it keeps that caller's deadline and its cause (the error then
// names the step and the limit that fired). A joiner whose own context is
// still live when the starter's ended takes over with a fresh call.
func (l *ImageLoader) joined(ctx context.Context, g *singleflight.Group, key string, fn func(context.Context) (any, error)) (any, error) {
	for {
		ch := g.DoChan(key, func() (any, error) { return fn(ctx) })
		select {
		case r := <-ch:
			if r.Err != nil && ctx.Err() == nil && (errors.Is(r.Err, context.Canceled) || errors.Is(r.Err, context.DeadlineExceeded)) {
				continue // the starter's context ended, not ours
			}
			return r.Val, r.Err
		case <-ctx.Done():
			// The call ends at once when it runs under our context: wait a
			// moment for its error, which names the step that was cut short.
			select {
			case r := <-ch:
				if r.Err != nil {
					return nil, r.Err
				}
			case <-time.After(250 * time.Millisecond):
			}
			return nil, context.Cause(ctx)
		}
	}
}

func loadImageDir(dir string, o Origin, keep bool, cache *ParseCache) (*Bundle, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", o.Image, fsReason(err))
	}
	defer root.Close()
	if keep {
		o.Dir = dir
	}
	b, err := loadFS(root.FS(), o, cache)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", o.Image, err)
	}
	return b, nil
}

// pull extracts the image into a new temporary directory under parent and
// renames it to dir only once every layer was read and verified whole. If
// another process renamed its copy first, ours is dropped: both hold the
// same content.
func (l *ImageLoader) pull(ctx context.Context, ref name.Digest, kind imageKind, parent, dir string) error {
	img, m, err := l.Registry().Pull(ctx, ref)
	if err != nil {
		return err
	}
	if err := checkManifest(m, kind.what, kind.maxLayers, kind.maxBytes); err != nil {
		return fmt.Errorf("image %s: %w", ref, err)
	}
	sel, err := kind.selection(img)
	if err != nil {
		return fmt.Errorf("image %s: %w", ref, err)
	}
	tmp, err := os.MkdirTemp(parent, ".tmp-")
	if err != nil {
		return fmt.Errorf("image cache: %w", err)
	}
	err = extract(ctx, img, m, tmp, sel, kind.maxBytes, kind.maxFiles)
	if err == nil && sel.nonEmpty {
		// An empty catalog would only fail later as "package not found";
		// say what is wrong with the image instead.
		if entries, rerr := os.ReadDir(tmp); rerr == nil && len(entries) == 0 {
			err = fmt.Errorf("no files in %s (set by the label %s, default %s)", sel.dirs, ConfigsLabel, DefaultConfigsDir)
		}
	}
	if err != nil {
		os.RemoveAll(tmp)
		if registry.AsError(err) != nil {
			// A layer fetch that failed at the registry: name the host, the
			// step and the limit, with the registry's words redacted.
			return l.Registry().Error(ref.String(), "pulling", err)
		}
		return fmt.Errorf("image %s: %w", ref, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Stat(dir); serr == nil {
			return nil
		}
		return fmt.Errorf("image cache: %w", err)
	}
	return nil
}

// memoryFS reads the files below dir into memory, for a catalog that is not
// cached and whose temporary directory is about to be removed. The files are
// stored (not compressed) in an in-memory zip archive, whose reader is an
// fs.FS with directories and all.
func memoryFS(dir string) (fs.FS, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: filepath.ToSlash(rel), Method: zip.Store})
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		return nil, err
	}
	return zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
}

func (l *ImageLoader) maxBytes() int64 {
	if l.MaxBytes > 0 {
		return l.MaxBytes
	}
	return DefaultMaxBytes
}

func (l *ImageLoader) maxFiles() int {
	if l.MaxFiles > 0 {
		return l.MaxFiles
	}
	return 10000
}

func (l *ImageLoader) maxLayers() int {
	if l.MaxLayers > 0 {
		return l.MaxLayers
	}
	return DefaultMaxLayers
}

func (l *ImageLoader) pullTimeout() time.Duration {
	if l.PullTimeout > 0 {
		return l.PullTimeout
	}
	return DefaultPullTimeout
}
