// Package registry is olm-cmp's one way to talk to OCI registries: the
// transport (timeouts, bounded retries of idempotent calls, size caps, error
// classes, redaction of credentials), the allow-list and the insecure opt-in,
// credentials (the keychain, a --registry-config file), resolving tags,
// pulling manifests (verified against the digest that names them) and
// listing tags. It knows nothing of bundles or catalogs: bundle pulls images
// through it, and signature verification talks to registries with the
// options it gives (RemoteOptions), so that every call has the same limits
// and no error carries a credential.
package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// Options configure a Client. The zero value reaches registries over HTTPS
// with the default keychain and timeouts.
type Options struct {
	// Keychain supplies registry credentials. Nil means RegistryConfig when
	// set, else authn.DefaultKeychain (docker config.json, $DOCKER_CONFIG,
	// podman's auth.json).
	Keychain authn.Keychain
	// RegistryConfig is a docker config.json to read credentials from
	// (--registry-config); used when Keychain is nil.
	RegistryConfig string
	// Insecure lists registries (host or host:port, as in the image
	// reference) that may be reached over plain HTTP or with an unverified
	// TLS certificate. Nothing is insecure unless listed: plain HTTP is
	// refused for every other registry, including the loopback and private
	// addresses go-containerregistry would otherwise try over HTTP.
	Insecure []string
	// Timeouts bound each request; zero fields take the defaults.
	Timeouts Timeouts
	// AllowedRegistries, when not empty, lists the only registries (host or
	// host:port, as in image references; docker.io for Docker Hub) images
	// may come from. Other references are refused by Parse, before any
	// network call. Redirects a listed registry answers with (to its blob
	// storage) are followed.
	AllowedRegistries []string
	// Transport is the HTTP transport; nil means remote.DefaultTransport.
	// An *http.Transport is cloned and given Timeouts; another RoundTripper
	// is used as is.
	Transport http.RoundTripper
	// RetryWait is the first backoff between attempts (it doubles on each);
	// 0 means 500ms. Tests shorten or lengthen it.
	RetryWait time.Duration
}

// Client talks to registries. Its transports are built once, so connections
// are reused, and it remembers the credentials it has sent, so that no error
// text can carry them. Safe for concurrent use.
type Client struct {
	opts             Options
	timeouts         Timeouts
	secure, insecure http.RoundTripper
	secrets          secrets
}

// New returns a Client for o.
func New(o Options) *Client {
	c := &Client{opts: o, timeouts: o.Timeouts.withDefaults()}
	base := o.Transport
	if base == nil {
		base = remote.DefaultTransport
	}
	c.secure = withTimeouts(base, c.timeouts)
	c.insecure = skipVerify(c.secure)
	if c.opts.RetryWait <= 0 {
		c.opts.RetryWait = defaultRetryWait
	}
	return c
}

// RemoteOptions are the go-containerregistry options of one registry call
// under ctx: this client's transport and credentials. Code that talks to a
// registry through go-containerregistry itself (signature verification)
// passes these, so its calls get the same limits, errors and redaction.
func (c *Client) RemoteOptions(ctx context.Context) []remote.Option {
	return []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(&recordingKeychain{inner: c.keychain(), secrets: &c.secrets}),
		remote.WithTransport(c.transport()),
		remote.WithUserAgent("olm-cmp"),
		// The transport retries what is worth retrying; the library's own
		// retries on top would multiply the attempts and the waits.
		remote.WithRetryStatusCodes(),
	}
}

// keychain is Keychain, else RegistryConfig's file, else the default one.
func (c *Client) keychain() authn.Keychain {
	switch {
	case c.opts.Keychain != nil:
		return c.opts.Keychain
	case c.opts.RegistryConfig != "":
		return &fileKeychain{path: c.opts.RegistryConfig}
	}
	return authn.DefaultKeychain
}

func (c *Client) transport() *registryTransport {
	return &registryTransport{
		secure:    c.secure,
		insecure:  c.insecure,
		allowed:   c.isInsecure,
		timeouts:  c.timeouts,
		secrets:   &c.secrets,
		retryWait: c.opts.RetryWait,
	}
}

func (c *Client) isInsecure(registry string) bool {
	return slices.Contains(c.opts.Insecure, registry)
}

// IsInsecure reports whether registry (host or host:port) is listed as
// insecure: code that parses references itself (signature verification)
// parses such a registry's with name.Insecure, as Parse does.
func (c *Client) IsInsecure(registry string) bool { return c.isInsecure(registry) }

// HTTPTransport is this client's transport for plain HTTPS requests that
// are not registry API calls (a GPG lookaside server): the same connect,
// TLS and header timeouts, without registry auth or retries.
func (c *Client) HTTPTransport() http.RoundTripper { return c.secure }

// Parse parses the image reference ref, refusing (before any network call)
// a registry the allow-list does not name; a registry listed as insecure
// gets a reference go-containerregistry may reach over plain HTTP.
func (c *Client) Parse(ref string) (name.Reference, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		// ref may be a catalog's value and the parser's error repeats it.
		return nil, fmt.Errorf("image reference %s: %s", echo.Quote(ref), echo.Short(err.Error()))
	}
	if err := CheckPath(r.Context().RepositoryStr()); err != nil {
		return nil, fmt.Errorf("image reference %s: %w", echo.Quote(ref), err)
	}
	if err := c.checkAllowed(ref, r); err != nil {
		return nil, err
	}
	if c.isInsecure(r.Context().RegistryStr()) {
		if r, err = name.ParseReference(ref, name.Insecure); err != nil {
			return nil, fmt.Errorf("image reference %s: %s", echo.Quote(ref), echo.Short(err.Error()))
		}
	}
	return r, nil
}

// ErrUncleanPath is CheckPath's refusal, for errors.Is.
var ErrUncleanPath = errors.New("unclean repository path")

// CheckPath refuses a repository path (go-containerregistry's
// RepositoryStr) with an empty, "." or ".." component. The distribution
// reference grammar forbids them, but go-containerregistry's parser checks
// only the characters, and a registry that cleans paths (Go's ServeMux
// redirects them) then serves another repository than the one every policy
// judged as a string: team-a/../team-b is under a team-a prefix and is
// team-b's image. Every reference read from user input passes Parse, so a
// render never reaches a registry with such a path.
func CheckPath(repo string) error {
	for part := range strings.SplitSeq(repo, "/") {
		if part == "" || part == "." || part == ".." {
			return &pathError{repo: repo}
		}
	}
	return nil
}

type pathError struct{ repo string }

func (e *pathError) Error() string {
	return fmt.Sprintf("repository path %s has an empty, \".\" or \"..\" component, which the image reference grammar forbids (a registry may serve another repository for it): write the repository path without it", echo.Quote(e.repo))
}

func (e *pathError) Is(target error) bool { return target == ErrUncleanPath }

// checkAllowed refuses a reference whose registry AllowedRegistries does
// not list.
func (c *Client) checkAllowed(ref string, r name.Reference) error {
	if len(c.opts.AllowedRegistries) == 0 {
		return nil
	}
	reg := r.Context().RegistryStr()
	for _, a := range c.opts.AllowedRegistries {
		if normalRegistry(a) == reg {
			return nil
		}
	}
	return fmt.Errorf("image %s: %w: %s is not one of %s (--allowed-registries)", ref, ErrNotAllowed, reg, strings.Join(c.opts.AllowedRegistries, ", "))
}

// Resolve pins the image reference ref: a digest reference is returned as
// is, a tag is asked of the registry (a HEAD request; GET when the registry
// answers HEAD badly). A tag the registry does not have gets the nearest
// tags it does have in the message.
func (c *Client) Resolve(ctx context.Context, ref string) (name.Digest, error) {
	r, err := c.Parse(ref)
	if err != nil {
		return name.Digest{}, err
	}
	if d, ok := r.(name.Digest); ok {
		return d, nil
	}
	opts := c.RemoteOptions(ctx)
	var digest v1.Hash
	desc, err := remote.Head(r, opts...)
	if err == nil {
		digest = desc.Digest
	} else if !headFailureIsFinal(err) {
		// Some registries answer HEAD on manifests badly; GET is the fallback
		// `crane digest` uses too.
		full, gerr := remote.Get(r, opts...)
		if gerr != nil {
			return name.Digest{}, c.Error(ref, "resolving", gerr)
		}
		digest = full.Digest
	} else {
		return name.Digest{}, c.withNote(c.Error(ref, "resolving", err), c.missingTag(ctx, r, err))
	}
	return r.Context().Digest(digest.String()), nil
}

// Head asks the registry for the manifest of the image d with this
// client's credentials, reading nothing of it: whether they may read it
// (a HEAD request; GET when the registry answers HEAD badly). The tenancy
// gate asks it before a project uses an image another project's pull put in
// the cache.
func (c *Client) Head(ctx context.Context, d name.Digest) error {
	opts := c.RemoteOptions(ctx)
	_, err := remote.Head(d, opts...)
	if err != nil && !headFailureIsFinal(err) {
		_, err = remote.Get(d, opts...)
	}
	if err != nil {
		return c.Error(d.String(), "checking access to", err)
	}
	return nil
}

// Pull fetches the manifest of the image d (go-containerregistry checks it
// against d's digest) and returns the image, whose layers are fetched when
// read and verified against their digests at their end, and its manifest.
func (c *Client) Pull(ctx context.Context, d name.Digest) (v1.Image, *v1.Manifest, error) {
	img, err := remote.Image(d, c.RemoteOptions(ctx)...)
	if err != nil {
		return nil, nil, c.Error(d.String(), "pulling", err)
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, nil, c.Error(d.String(), "pulling", err)
	}
	return img, m, nil
}

// Error says which call on which image failed and what the user can do, in
// one line with the credentials this client used removed (the transport
// already removed them from registry bodies; this also covers what the
// library adds). doing is the call: "resolving", "pulling".
func (c *Client) Error(ref, doing string, err error) error {
	if re := AsError(err); re != nil {
		err = re // the most telling failure first, for errors.As too
	}
	msg := fmt.Sprintf("%s image %s: %v", doing, ref, err)
	return &redactedError{msg: c.secrets.redact(oneLine(msg)), err: err}
}

// withNote appends note (registry data: credentials removed) to an Error's
// message.
func (c *Client) withNote(err error, note string) error {
	re, ok := err.(*redactedError)
	if !ok || note == "" {
		return err
	}
	return &redactedError{msg: re.msg + c.secrets.redact(oneLine(note)), err: re.err}
}

// redactedError shows msg but keeps err's chain for errors.Is and errors.As.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
