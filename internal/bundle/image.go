package bundle

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"golang.org/x/sync/singleflight"
)

// DefaultMaxBytes caps the uncompressed size of an image's layers. The largest
// real bundle (eclipse-che, 2 MB CRD) is far below it.
const DefaultMaxBytes int64 = 256 << 20

// DefaultPullTimeout bounds one image pull. A pull is shared by every caller
// waiting for the same digest, so it does not end when the first caller gives up.
const DefaultPullTimeout = 5 * time.Minute

// ImageLoader resolves and loads bundles from OCI images and from directories.
// It implements render.Loader and is safe for concurrent use; copy it only
// before first use.
//
// Extracted images are kept under CacheDir/<algorithm>/<hex>/ (manifests/ and
// metadata/ only). An entry is extracted into a temporary directory beside it
// and renamed into place, so a directory that exists is complete, and several
// processes may share the cache.
type ImageLoader struct {
	// CacheDir holds extracted images. Empty means no cache: each Load
	// extracts into a temporary directory and removes it afterwards.
	CacheDir string
	// Keychain supplies registry credentials. Nil means RegistryConfig when
	// set, else authn.DefaultKeychain (docker config.json, $DOCKER_CONFIG,
	// podman's auth.json).
	Keychain authn.Keychain
	// RegistryConfig is a docker config.json to read credentials from
	// (--registry-config); used when Keychain is nil.
	RegistryConfig string
	// Insecure lists registries (host or host:port, as in the image
	// reference) that may be reached over plain HTTP or with an unverified
	// TLS certificate. Nothing is insecure unless listed: plain HTTP is refused
	// for every other registry, including the loopback and private addresses
	// go-containerregistry would otherwise try over HTTP.
	Insecure []string
	// MaxBytes caps the total uncompressed size of an image's layers (and
	// their compressed size); 0 means DefaultMaxBytes.
	MaxBytes int64
	// MaxFiles caps the files extracted from manifests/ and metadata/; 0 means 10000.
	MaxFiles int
	// PullTimeout bounds one pull; 0 means DefaultPullTimeout.
	PullTimeout time.Duration
	// Transport is the HTTP transport; nil means remote.DefaultTransport.
	Transport http.RoundTripper
	// Parsed, when set, keeps parsed manifest files in memory so loading the
	// same bundle again (every Argo CD refresh) copies nodes instead of
	// parsing YAML, which is most of a load's cost. Used for images and
	// directories alike.
	Parsed *ParseCache

	pulls singleflight.Group
	// waiting, when set (tests only), is called by Load just before it joins
	// or starts the pull of a digest that is not cached.
	waiting func()
}

// Resolve pins ref. A ref naming an existing directory is a directory bundle:
// Origin{Ref, Dir} without digest (Load computes it). Otherwise ref is an image
// reference; a tag is resolved with a HEAD request on every call (tags move),
// a digest reference is returned as is.
func (l *ImageLoader) Resolve(ctx context.Context, ref string) (Origin, error) {
	if fi, err := os.Stat(ref); err == nil && fi.IsDir() {
		abs, err := filepath.Abs(ref)
		if err != nil {
			return Origin{}, fmt.Errorf("bundle directory %q: %w", ref, err)
		}
		return Origin{Ref: ref, Dir: abs}, nil
	}
	r, err := l.parse(ref)
	if err != nil {
		return Origin{}, err
	}
	if d, ok := r.(name.Digest); ok {
		return Origin{Ref: ref, Image: d.String(), Digest: d.DigestStr()}, nil
	}
	opts := l.remoteOptions(ctx)
	var digest v1.Hash
	desc, err := remote.Head(r, opts...)
	if err == nil {
		digest = desc.Digest
	} else if !isAuthOrNotFound(err) {
		// Some registries answer HEAD on manifests badly; GET is the fallback
		// `crane digest` uses too.
		full, gerr := remote.Get(r, opts...)
		if gerr != nil {
			return Origin{}, registryError(ref, "resolving", gerr)
		}
		digest = full.Digest
	} else {
		return Origin{}, registryError(ref, "resolving", err)
	}
	return Origin{Ref: ref, Image: r.Context().Digest(digest.String()).String(), Digest: digest.String()}, nil
}

// Load returns the bundle of a resolved origin: a directory bundle through
// LoadDir, an image from the cache or else pulled, extracted and cached.
// Concurrent loads of one digest share one pull.
func (l *ImageLoader) Load(ctx context.Context, o Origin) (*Bundle, error) {
	if o.Image == "" {
		if o.Dir == "" {
			return nil, fmt.Errorf("bundle origin %q has neither an image nor a directory; call Resolve first", o.Ref)
		}
		b, err := loadDir(o.Dir, l.Parsed)
		if err != nil {
			return nil, err
		}
		if o.Ref != "" {
			b.Origin.Ref = o.Ref
		}
		return b, nil
	}
	r, err := l.parse(o.Image)
	if err != nil {
		return nil, err
	}
	d, ok := r.(name.Digest)
	if !ok {
		return nil, fmt.Errorf("image %q is not pinned by digest; call Resolve first", o.Image)
	}
	hash, err := v1.NewHash(d.DigestStr())
	if err != nil { // name.ParseReference accepts digests v1.Hash refuses; the hash names a directory
		return nil, fmt.Errorf("image %q: %w", o.Image, err)
	}
	if o.Digest != "" && o.Digest != hash.String() {
		return nil, fmt.Errorf("image %q does not match origin digest %s", o.Image, o.Digest)
	}
	o.Digest = hash.String()

	if l.CacheDir == "" {
		tmp, err := os.MkdirTemp("", "olm-cmp-bundle-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir := filepath.Join(tmp, "bundle")
		if err := l.pull(ctx, d, filepath.Dir(dir), dir); err != nil {
			return nil, err
		}
		return loadImageDir(dir, o, false, l.Parsed)
	}

	dir := filepath.Join(l.CacheDir, hash.Algorithm, hash.Hex)
	if _, err := os.Stat(dir); err == nil {
		return loadImageDir(dir, o, true, l.Parsed)
	}
	if l.waiting != nil {
		l.waiting()
	}
	ch := l.pulls.DoChan(dir, func() (any, error) {
		if _, err := os.Stat(dir); err == nil { // pulled while we waited for the lock
			return nil, nil
		}
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.pullTimeout())
		defer cancel()
		parent := filepath.Dir(dir)
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, fmt.Errorf("bundle cache: %w", err)
		}
		return nil, l.pull(pctx, d, parent, dir)
	})
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("loading image %s: %w", o.Image, ctx.Err())
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
	}
	return loadImageDir(dir, o, true, l.Parsed)
}

func loadImageDir(dir string, o Origin, keep bool, cache *ParseCache) (*Bundle, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", o.Image, err)
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
// renames it to dir. If another process renamed its copy first, ours is
// dropped: both hold the same content.
func (l *ImageLoader) pull(ctx context.Context, ref name.Digest, parent, dir string) error {
	img, err := remote.Image(ref, l.remoteOptions(ctx)...)
	if err != nil {
		return registryError(ref.String(), "pulling", err)
	}
	tmp, err := os.MkdirTemp(parent, ".tmp-")
	if err != nil {
		return fmt.Errorf("bundle cache: %w", err)
	}
	if err := extractBundle(ctx, img, tmp, l.maxBytes(), l.maxFiles()); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("image %s: %w", ref, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Stat(dir); serr == nil {
			return nil
		}
		return fmt.Errorf("bundle cache: %w", err)
	}
	return nil
}

func (l *ImageLoader) parse(ref string) (name.Reference, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, fmt.Errorf("image reference %q: %w", ref, err)
	}
	if l.insecure(r.Context().RegistryStr()) {
		if r, err = name.ParseReference(ref, name.Insecure); err != nil {
			return nil, fmt.Errorf("image reference %q: %w", ref, err)
		}
	}
	return r, nil
}

func (l *ImageLoader) insecure(registry string) bool {
	return slices.Contains(l.Insecure, registry)
}

func (l *ImageLoader) remoteOptions(ctx context.Context) []remote.Option {
	kc := l.Keychain
	if kc == nil {
		if l.RegistryConfig != "" {
			kc = &fileKeychain{path: l.RegistryConfig}
		} else {
			kc = authn.DefaultKeychain
		}
	}
	base := l.Transport
	if base == nil {
		base = remote.DefaultTransport
	}
	return []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(kc),
		remote.WithTransport(&guardTransport{secure: base, insecure: skipVerify(base), allowed: l.insecure}),
		remote.WithUserAgent("olm-cmp"),
	}
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

func (l *ImageLoader) pullTimeout() time.Duration {
	if l.PullTimeout > 0 {
		return l.PullTimeout
	}
	return DefaultPullTimeout
}

// guardTransport enforces the Insecure opt-in: go-containerregistry falls
// back to plain HTTP on its own for localhost and private addresses, which
// would let anyone on the network path serve a bundle.
type guardTransport struct {
	secure, insecure http.RoundTripper
	allowed          func(host string) bool
}

func (g *guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !g.allowed(req.URL.Host) {
		if req.URL.Scheme != "https" {
			return nil, fmt.Errorf("refusing plain HTTP to registry %s: list it in the insecure registries to allow it", req.URL.Host)
		}
		return g.secure.RoundTrip(req)
	}
	return g.insecure.RoundTrip(req)
}

// skipVerify returns a copy of t that does not verify TLS certificates, or t
// itself when it is not an *http.Transport it can copy.
func skipVerify(t http.RoundTripper) http.RoundTripper {
	ht, ok := t.(*http.Transport)
	if !ok {
		return t
	}
	c := ht.Clone()
	if c.TLSClientConfig == nil {
		c.TLSClientConfig = &tls.Config{}
	}
	c.TLSClientConfig.InsecureSkipVerify = true //nolint:gosec // only for registries the user listed as insecure
	return c
}

func isAuthOrNotFound(err error) bool {
	var te *transport.Error
	if errors.As(err, &te) {
		switch te.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
			return true
		}
	}
	return false
}

// registryError adds what the user can do about the common failures. It
// never includes credentials: go-containerregistry's errors carry the
// request URL and status, not headers.
func registryError(ref, doing string, err error) error {
	var te *transport.Error
	if errors.As(err, &te) {
		switch te.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("%s image %s: access denied (%w); log in to the registry (docker login) or pass a registry config with credentials", doing, ref, err)
		case http.StatusNotFound:
			return fmt.Errorf("%s image %s: not found in the registry: %w", doing, ref, err)
		}
	}
	return fmt.Errorf("%s image %s: %w", doing, ref, err)
}

// fileKeychain reads credentials from one docker config file, chosen with
// --registry-config, with the same lookup as authn.DefaultKeychain (exact
// repository, then registry; docker.io under its legacy key).
type fileKeychain struct{ path string }

func (k *fileKeychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	f, err := os.Open(k.path)
	if err != nil {
		return nil, fmt.Errorf("registry config: %w", err)
	}
	defer f.Close()
	return authFromConfig(f, k.path, target)
}
