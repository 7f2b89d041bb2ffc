// Package verify checks that an image, named by its manifest digest, is
// signed the way the cluster's trust policy (internal/trust) demands, before
// render reads a byte of it.
//
// Two signature formats are looked for, in this order:
//   - cosign v3's Sigstore bundle (application/vnd.dev.sigstore.bundle.v0.3+json)
//     attached to the image as an OCI 1.1 referrer (found through the
//     referrers API, or its sha256-<hex> tag fallback), verified offline with
//     sigstore-go, in olm-cmp-check (bundle.go), against the scope's keys or
//     trusted root;
//   - cosign's legacy sha256-<hex>.sig tag: simple-signing payload layers
//     whose signature is the dev.cosignproject.cosign/signature annotation
//     (with, when the scope names a Rekor key, the dev.sigstore.cosign/bundle
//     annotation's transparency-log entry checked offline), verified in
//     process with the standard library's crypto (legacy.go). Red Hat signs
//     registry.redhat.io this way.
//
// Every signature must name the same manifest digest and the repository the
// scope expects (the image's own, or its remapped name for mirrors).
// Everything read from the registry is bounded (Limits): counts, sizes, time.
// Only successes are cached, by policy hash, repository and digest.
package verify

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/trust"
)

// Result is the verdict on one image.
type Result struct {
	// Image is the repository checked, Digest its manifest digest.
	Image, Digest string
	// Scope is the policy scope that covered the image ("" when none did).
	Scope string
	// Mode is the mode applied: the scope's, or enforce when the caller
	// required verification.
	Mode trust.Mode
	// Signer names the key (its policy name, or fingerprint) or the keyless
	// identity that verified the image; "" when it is not verified.
	Signer string
	// Format is the signature format that verified it: FormatBundle or
	// FormatTag; "" when not verified.
	Format string
	// Problem says why the image is not verified, in warn mode (what an
	// enforce scope would have refused it for); "" when verified or when
	// the mode is off.
	Problem string
	// Fix is what would make the image verify, with Problem.
	Fix string
	// Cached is true when the verdict came from the verdict cache.
	Cached bool
}

// Signature formats a Result names.
const (
	FormatBundle = "sigstore-bundle"
	FormatTag    = "cosign-sig-tag"
)

// (FormatGPG, for GPG simple signatures from a lookaside server, is in gpg.go.)

// Unverified is what Annotation says for an image no signature verified.
const Unverified = "unverified"

// Annotation is the olm-cmp.dev/signature annotation's value: the signer,
// or "unverified".
func (r Result) Annotation() string {
	if r.Signer == "" {
		return Unverified
	}
	return r.Signer
}

// Verified reports whether a signature verified.
func (r Result) Verified() bool { return r.Signer != "" }

// Limits bound what a verification reads from a registry. Signatures are
// small (a simple-signing payload is a few hundred bytes, a Sigstore bundle
// a few KiB): anything much larger is hostile.
type Limits struct {
	// MaxCandidates caps the signatures tried per format: referrers that
	// can be an image signature (a Sigstore bundle, not an attestation
	// cosign annotated with another predicate type), signature layers of
	// the .sig manifest, lookaside signatures.
	MaxCandidates int
	// MaxReferrers caps the referrers looked at, signatures or not: a
	// registry that reports the empty config type for every artifact
	// makes olm-cmp open each to learn what it is, and an image may carry
	// many attestations (SBOMs, provenance) besides its signature.
	MaxReferrers int
	// MaxLayers refuses a .sig manifest with more layers than this.
	MaxLayers int
	// MaxManifestBytes caps a signature manifest.
	MaxManifestBytes int64
	// MaxBlobBytes caps a signature payload or bundle blob.
	MaxBlobBytes int64
	// Timeout bounds one Verify call, registry calls included.
	Timeout time.Duration
}

// DefaultLimits are used for zero fields of Options.Limits.
var DefaultLimits = Limits{
	MaxCandidates:    16,
	MaxReferrers:     128,
	MaxLayers:        64,
	MaxManifestBytes: 256 << 10,
	MaxBlobBytes:     1 << 20,
	Timeout:          60 * time.Second,
}

// Options configure a Verifier.
type Options struct {
	// Remote are the go-containerregistry options every registry call uses
	// (transport, auth); the Verifier adds the context.
	Remote []remote.Option
	// Lookaside carries the requests to GPG lookaside servers (a scope's
	// gpg.lookaside); http.DefaultTransport when nil. Limits.Timeout bounds
	// them with the rest.
	Lookaside http.RoundTripper
	// Limits; zero fields take DefaultLimits'.
	Limits Limits
	// CacheEntries bounds the verdict cache (default 4096).
	CacheEntries int
	// Insecure reports a registry (host or host:port) the operator listed
	// as insecure (--insecure-registry): its repositories are parsed with
	// name.Insecure, so plain HTTP is allowed for them as it is for pulls.
	Insecure func(registry string) bool
}

// Verifier verifies images against one policy. Safe for concurrent use.
type Verifier struct {
	policy *trust.Policy
	opts   Options
	lim    Limits
	cache  *lru.Cache[string, Result]
	// flight shares one check among concurrent renders of the same image
	// (every Application of a catalog verifies the catalog image).
	flight singleflight.Group
}

// New returns a Verifier for p (nil: no policy, every image unverified and
// not refused unless required).
func New(p *trust.Policy, o Options) *Verifier {
	l := o.Limits
	d := DefaultLimits
	if l.MaxCandidates <= 0 {
		l.MaxCandidates = d.MaxCandidates
	}
	if l.MaxReferrers <= 0 {
		l.MaxReferrers = d.MaxReferrers
	}
	if l.MaxLayers <= 0 {
		l.MaxLayers = d.MaxLayers
	}
	if l.MaxManifestBytes <= 0 {
		l.MaxManifestBytes = d.MaxManifestBytes
	}
	if l.MaxBlobBytes <= 0 {
		l.MaxBlobBytes = d.MaxBlobBytes
	}
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	n := o.CacheEntries
	if n <= 0 {
		n = 4096
	}
	c, _ := lru.New[string, Result](n)
	return &Verifier{policy: p, opts: o, lim: l, cache: c}
}

// Policy is the policy the Verifier checks against.
func (v *Verifier) Policy() *trust.Policy { return v.policy }

var digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// Verify checks the image repo@digest (repo without tag or digest, digest
// "sha256:<hex>"). require demands verification even where the scope says
// warn or off (an Application can tighten the policy, never loosen it).
//
// An error is a refusal, one line naming the image, the digest, the scope,
// what was found and the fix. In warn mode a failed check is not an error:
// the Result has Signer "" and says why in Problem.
func (v *Verifier) Verify(ctx context.Context, repo, digest string, require bool) (Result, error) {
	if i := strings.Index(repo, "@"); i >= 0 {
		repo = repo[:i]
	}
	res := Result{Image: repo, Digest: digest, Mode: trust.Off}
	// A tag (repo:tag, as a pinned spec writes it) names the same
	// repository: the digest is what is verified.
	ref, err := name.NewRepository(repo, name.WeakValidation)
	if err != nil {
		if t, terr := name.NewTag(repo, name.WeakValidation); terr == nil {
			ref, err = t.Context(), nil
			repo = ref.Name()
			res.Image = repo
		}
	}
	if err != nil {
		return res, fmt.Errorf("signature check: %s is not an image repository: give the image as registry/repository", echo.Quote(repo))
	}
	if v.opts.Insecure != nil && v.opts.Insecure(ref.RegistryStr()) {
		if r, ierr := name.NewRepository(ref.Name(), name.WeakValidation, name.Insecure); ierr == nil {
			ref = r
		}
	}
	if !digestRE.MatchString(digest) {
		return res, fmt.Errorf("signature check of %s: %s is not a sha256 manifest digest: verification is by digest, resolve the tag first", repo, echo.Quote(digest))
	}
	scope := v.policy.Lookup(repo)
	mode := trust.Off
	if scope != nil {
		res.Scope = scope.Match
		mode = scope.Mode
	}
	if require {
		mode = trust.Enforce
	}
	res.Mode = mode
	if mode == trust.Off {
		return res, nil
	}
	if !scope.HasTrust() {
		f := failure{rank: rankConfig, what: "the trust policy has no keys or keyless identities for this image",
			fix: "add a scope covering it with keys (docs/signatures.md), or stop requiring verification for it"}
		if v.policy == nil {
			f.what = "no trust policy is configured"
			f.fix = "give the plugin a trust policy (--trust-policy, docs/signatures.md) with a scope covering this image, or stop requiring verification for it"
		}
		return v.fail(res, scope, mode, f)
	}
	key := v.policy.Hash() + "\x00" + trust.NormalizeRepo(repo) + "\x00" + digest
	if cached, ok := v.cache.Get(key); ok {
		cached.Mode, cached.Cached = mode, true
		return cached, nil
	}
	type outcome struct {
		signer, format string
		f              *failure
	}
	// The shared check runs under its own timeout, detached from the first
	// caller's cancellation (another caller may still wait for it); each
	// caller stops waiting when its own context ends.
	ch := v.flight.DoChan(key, func() (any, error) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), v.lim.Timeout)
		defer cancel()
		c := &check{v: v, ctx: cctx, scope: scope, repo: ref, digest: digest,
			want: scope.SignedName(repo)}
		signer, format, f := c.run()
		if f == nil {
			r := res
			r.Signer, r.Format = signer, format
			v.cache.Add(key, r)
		}
		return outcome{signer, format, f}, nil
	})
	var o outcome
	select {
	case r := <-ch:
		o = r.Val.(outcome)
	case <-ctx.Done():
		return v.fail(res, scope, mode, failure{rank: rankRegistry,
			what: "the render was cancelled or timed out while its signatures were being checked",
			fix:  "check the registry's health and the network path to it, then retry"})
	}
	if o.f != nil {
		return v.fail(res, scope, mode, *o.f)
	}
	res.Signer, res.Format = o.signer, o.format
	return res, nil
}

// CheckDirectory judges a directory bundle (a path in the Application's
// repository): it carries no signature, so it is never verified. The
// policy's `directories` decides: warn (the default: Problem set, so the
// requirements report lists it), allow (Mode off, nothing reported) or
// refuse (an error); require (the Application demands verification)
// refuses it too. dir is what messages name: give the repository-relative
// path, never a path on the server.
func (v *Verifier) CheckDirectory(dir string, require bool) (Result, error) {
	mode := v.policy.Directories()
	if require {
		mode = trust.Enforce
	}
	res := Result{Image: dir, Mode: mode}
	what := "a directory is never signed: signatures cover images (Git commits have their own, which Argo CD verifies)"
	switch mode {
	case trust.Off:
		return res, nil
	case trust.Warn:
		res.Problem = what
		res.Fix = "publish the bundle as an image and sign it, or set directories: allow in the trust policy to stop reporting directories"
		return res, nil
	}
	scope := "the Application's demand for verification"
	fix := "publish the bundle as an image and sign it, or stop requiring verification for this Application"
	if !require {
		name := "the trust policy"
		if v.policy.Name != "" {
			name = filepath.Base(v.policy.Name)
		}
		scope = name + " (directories: refuse)"
		fix = "publish the bundle as an image and sign it, or set directories: allow in the trust policy"
	}
	return res, fmt.Errorf("signature check refused the directory bundle %s under %s: %s; fix: %s", echo.Quote(dir), scope, what, fix)
}

// fail turns a failure into the Result (warn) or the refusal (enforce).
func (v *Verifier) fail(res Result, scope *trust.Scope, mode trust.Mode, f failure) (Result, error) {
	if mode != trust.Enforce {
		res.Problem, res.Fix = f.what, f.fix
		return res, nil
	}
	name := ""
	if v.policy != nil {
		name = v.policy.Name
	}
	return res, &RefusalError{Image: res.Image, Digest: res.Digest, Scope: scope.Describe(name), What: f.what, Fix: f.fix}
}

// RefusalError is a refused image.
type RefusalError struct {
	Image, Digest, Scope, What, Fix string
}

func (e *RefusalError) Error() string {
	return fmt.Sprintf("signature check refused %s@%s under trust %s: %s; fix: %s",
		e.Image, e.Digest, e.Scope, oneLine(e.What), e.Fix)
}

// failure is why one check did not verify. The most informative failure of
// all signatures tried is reported: one that verified cryptographically but
// names something else says more than "no signature".
type failure struct {
	rank      int
	what, fix string
}

const (
	rankNone     = iota // no signature found
	rankRegistry        // the registry could not be read
	rankMalformed
	rankUnknownKey
	rankTlog
	rankPayload // signed by a trusted key, but for something else
	// rankHelper: a signature olm-cmp-check could not check (it is
	// missing or failed) may have been the one that verifies: that is the
	// thing to fix first.
	rankHelper
	rankConfig
)

func better(a *failure, b failure) *failure {
	if a == nil || b.rank > a.rank {
		return &b
	}
	return a
}

// oneLine collapses whitespace, so a message stays on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// untrusted quotes a value read from a registry or a signature, cut short.
func untrusted(s string) string { return echo.Quote(oneLine(s)) }

// registryFailure words an error from a registry call.
func (c *check) registryFailure(doing string, err error) failure {
	if c.ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return failure{rank: rankRegistry,
			what: fmt.Sprintf("the registry did not answer in time while %s (after %s)", doing, c.v.lim.Timeout),
			fix:  "check the registry's health and the network path to it, then retry"}
	}
	why := echo.Short(oneLine(err.Error()))
	// A registry's error repeats the request's URL, which would use up
	// the words a message may quote before the cause: the status and the
	// registry's error code say it.
	var te *transport.Error
	if errors.As(err, &te) {
		why = fmt.Sprintf("HTTP %d", te.StatusCode)
		if len(te.Errors) > 0 {
			why += " " + echo.Short(oneLine(te.Errors[0].String()))
		}
	}
	return failure{rank: rankRegistry,
		what: fmt.Sprintf("the registry failed while %s: %s", doing, why),
		fix:  "check the registry's health and the credentials for it, then retry"}
}
