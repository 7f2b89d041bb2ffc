// Package trust is the cluster admin's trust policy: which images must be
// signed, by whom, and what olm-cmp does when they are not. The policy is a
// YAML file mounted into the sidecar (docs/signatures.md); this package
// reads it strictly (unknown keys, wrong types and bad keys are errors that
// name the file, the line and the field), loads every key it names once,
// and answers one question for the verifier: which scope covers an image.
//
// It knows nothing about registries or signature formats: internal/verify
// does the checking.
package trust

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/google/go-containerregistry/pkg/name"
)

// Mode is what a scope does with an image whose signature does not verify.
type Mode string

const (
	// Enforce refuses the image: the render fails.
	Enforce Mode = "enforce"
	// Warn renders the image and marks it unverified.
	Warn Mode = "warn"
	// Off does not look for signatures.
	Off Mode = "off"
)

// APIVersion and Kind name the policy file's format.
const (
	APIVersion = "olm-cmp.dev/v1alpha1"
	Kind       = "TrustPolicy"
)

// Policy is a loaded trust policy. It is read-only once loaded: verifiers
// share it.
type Policy struct {
	// Name is the file the policy came from (for messages).
	Name   string
	Scopes []*Scope
	// DirectoryMode is what renders of directory bundles (from Git, never
	// signed) get: Warn (rendered, annotated unverified and reported as
	// such), Off (rendered, annotated unverified, not reported), Enforce
	// (refused). Written `directories: warn | allow | refuse`; warn by
	// default.
	DirectoryMode Mode
	hash          string
	// files are the files the policy was read from: its own (when
	// loaded by Load) and every key or trusted root file it names.
	files []string
}

// Files are the files the policy was read from: the policy file (loaded by
// Load) and the key and trusted root files it names. A reloader watches
// them all: a rotated key file is a new policy.
func (p *Policy) Files() []string {
	if p == nil {
		return nil
	}
	return slices.Clone(p.files)
}

// Directories is the policy's DirectoryMode; Warn when unset (and for a
// nil policy).
func (p *Policy) Directories() Mode {
	if p == nil || p.DirectoryMode == "" {
		return Warn
	}
	return p.DirectoryMode
}

// Scope is the part of a policy that covers the images under one registry or
// repository prefix.
type Scope struct {
	// Match is the normalized prefix: a registry ("registry.redhat.io"), a
	// repository prefix ("quay.io/operatorhubio"), or "*" for every image.
	Match string
	Mode  Mode
	// Keys verify key-based signatures (cosign sign --key).
	Keys []*Key
	// Rekor, when set, requires each key-based signature to carry a
	// transparency-log entry signed by this key (checked offline).
	Rekor *Key
	// TrustedRootJSON and Identities verify keyless signatures (Fulcio
	// certificates): the trusted root (the file's bytes, which
	// olm-cmp-check parsed when the policy loaded) holds the certificate
	// authorities and logs, Identities the signers accepted. olm-cmp-check,
	// which verifies Sigstore bundles (internal/verify/bundlecheck), is
	// sent the bytes.
	TrustedRootFile string
	TrustedRootJSON []byte
	Identities      []Identity
	// GPG, when set, verifies GPG "simple signing" signatures kept on a
	// lookaside server (containers/image's layout).
	GPG *GPG
	// SignedAs is the prefix the signatures name in place of Match: a
	// mirror of registry.redhat.io whose signatures name
	// registry.redhat.io. Empty: signatures name the image's own
	// repository.
	SignedAs string
	// Line is where the scope starts in the policy file.
	Line int
}

// Key is one trusted public key.
type Key struct {
	// Name is the key's name in the policy, or its fingerprint when the
	// policy gives none: what an annotation shows as the signer.
	Name string
	// Fingerprint is "sha256:" and the hex SHA-256 of the key's DER
	// (SubjectPublicKeyInfo) form.
	Fingerprint string
	Public      crypto.PublicKey
	DER         []byte
}

// Identity is one keyless signer accepted: the OIDC issuer and the
// certificate's subject (an e-mail or URI), exactly or by regular expression.
type Identity struct {
	Issuer        string
	Subject       string
	SubjectRegexp *regexp.Regexp
}

// String is the identity as an annotation shows it.
func (id Identity) String() string {
	s := id.Subject
	if id.SubjectRegexp != nil {
		s = "~" + id.SubjectRegexp.String()
	}
	return s + " (" + id.Issuer + ")"
}

// Hash is a stable digest of everything that decides a verdict (modes,
// prefixes, key bytes, identities, the trusted root's contents), "" for a
// nil policy: the render cache and the verdict cache key on it, so a policy
// change takes effect on the next render. The file's name, comments and
// layout do not change it.
func (p *Policy) Hash() string {
	if p == nil {
		return ""
	}
	return p.hash
}

// Lookup returns the scope covering repo (a repository such as
// "registry.redhat.io/ubi9/ubi"): the longest matching prefix, on a path
// boundary, "*" last. nil when no scope covers it (or p is nil).
func (p *Policy) Lookup(repo string) *Scope {
	if p == nil {
		return nil
	}
	repo = NormalizeRepo(repo)
	var best *Scope
	bestLen := -1
	for _, s := range p.Scopes {
		n, ok := s.covers(repo)
		if !ok {
			continue
		}
		if best == nil || best.Match == "*" || s.Match != "*" && n > bestLen {
			best, bestLen = s, n
		}
	}
	return best
}

// covers reports whether the scope covers repo, and the length of the
// prefix it matched by (longest wins).
func (s *Scope) covers(repo string) (int, bool) {
	if s.Match == "*" {
		return 0, true
	}
	return Covers(s.Match, repo)
}

// Covers reports whether prefix (normalized by NormalizePrefix, not "*")
// covers repo (normalized by NormalizeRepo) on a path boundary, and the
// length it matched by: quay.io/org covers quay.io/org/op, never
// quay.io/organisation. The tenancy policy matches its prefixes by the
// same rule, so that one host spelling means one thing in both files.
func Covers(prefix, repo string) (int, bool) {
	if repo == prefix || strings.HasPrefix(repo, prefix+"/") {
		return len(prefix), true
	}
	if o := official(prefix); o != "" && repo == o {
		return len(o), true
	}
	return 0, false
}

// official is, for a prefix (a scope's match) of one Docker Hub path
// segment (docker.io/busybox), the official image that name stands for as
// docker reads it (index.docker.io/library/busybox): the prefix covers that
// image as well as the namespace index.docker.io/busybox/…, which is what
// the same words mean as a prefix. Otherwise "" (an image name of one
// segment on Docker Hub is always an official image: `match:
// docker.io/busybox` would otherwise cover nothing the admin meant,
// silently).
func official(match string) string {
	hub := name.DefaultRegistry + "/"
	seg, ok := strings.CutPrefix(match, hub)
	if !ok || seg == "" || seg == "library" || strings.Contains(seg, "/") {
		return ""
	}
	return hub + "library/" + seg
}

// SignedName is the repository a signature for repo must name: repo itself,
// or with the scope's Match replaced by SignedAs.
func (s *Scope) SignedName(repo string) string {
	repo = NormalizeRepo(repo)
	if s == nil || s.SignedAs == "" || s.Match == "*" {
		return repo
	}
	out := s.SignedAs + strings.TrimPrefix(repo, s.Match)
	if o := official(s.Match); o != "" && repo == o {
		out = s.SignedAs
	}
	// A Docker Hub name of one segment is an official image: a signedAs of
	// docker.io/busybox names index.docker.io/library/busybox.
	if strings.HasPrefix(out, name.DefaultRegistry+"/") {
		out = NormalizeRepo(out)
	}
	return out
}

// HasTrust reports whether the scope names anything to verify against.
func (s *Scope) HasTrust() bool {
	return s != nil && (len(s.Keys) > 0 || s.TrustedRootJSON != nil && len(s.Identities) > 0 || s.GPG != nil && len(s.GPG.Keys) > 0)
}

// GPG is a scope's GPG simple-signing trust: the lookaside server that
// keeps the signatures and the keys that may have made them.
type GPG struct {
	// Lookaside is the base URL: the signatures of repo@sha256:<hex> are
	// <Lookaside>/<repository path>@sha256=<hex>/signature-<n>, n from 1.
	Lookaside string
	Keys      []*GPGKey
}

// GPGKey is one trusted OpenPGP key (or key ring: a file may hold several).
type GPGKey struct {
	Name     string
	Entities openpgp.EntityList
	// Armored is the key's text, for the policy hash.
	Armored []byte
}

// RedactURL is a lookaside URL as a message may show it: without the user
// name and password it may carry (a policy error or a refusal reaches Argo
// CD's UI). A URL that does not parse loses everything between "://" (or
// its start) and the last "@" before any "?" or "#": a password may hold a
// "/", so the authority cannot be found by the first one.
func RedactURL(u string) string {
	if pu, err := url.Parse(u); err == nil && pu.Opaque == "" {
		pu.User = nil
		if !strings.Contains(pu.String(), "@") || !strings.Contains(u, "@") {
			return pu.String()
		}
	}
	start := 0
	if i := strings.Index(u, "://"); i >= 0 {
		start = i + len("://")
	}
	end := len(u)
	if j := strings.IndexAny(u[start:], "?#"); j >= 0 {
		end = start + j
	}
	if k := strings.LastIndex(u[start:end], "@"); k >= 0 {
		return u[:start] + u[start+k+1:]
	}
	return u
}

// Describe names the scope in messages that leave the server (a refusal
// reaches Argo CD's UI): `scope "registry.redhat.io" (trust.yaml line 4)`,
// with the policy file's base name only, never its path on the server.
func (s *Scope) Describe(policy string) string {
	if s == nil {
		if policy == "" {
			return "no trust policy"
		}
		return fmt.Sprintf("no scope of %s", filepath.Base(policy))
	}
	if policy == "" {
		return fmt.Sprintf("scope %q", s.Match)
	}
	return fmt.Sprintf("scope %q (%s line %d)", s.Match, filepath.Base(policy), s.Line)
}

// NormalizeRepo writes a repository as go-containerregistry names it
// (docker.io/x is index.docker.io/library/x), without tag or digest; a
// string it cannot parse is returned lower-cased as written.
func NormalizeRepo(repo string) string {
	if i := strings.Index(repo, "@"); i >= 0 {
		repo = repo[:i]
	}
	r, err := name.NewRepository(repo, name.WeakValidation)
	if err != nil {
		ref, rerr := name.ParseReference(repo, name.WeakValidation)
		if rerr != nil {
			return strings.ToLower(repo)
		}
		r = ref.Context()
	}
	// One registry spelled another way is parsed again under its
	// canonical host, so that docker.io's library/ is added as for the
	// usual spelling.
	if h := canonicalHost(r.RegistryStr()); h != r.RegistryStr() {
		if r2, err := name.NewRepository(h+"/"+r.RepositoryStr(), name.WeakValidation); err == nil {
			r = r2
		}
	}
	return canonicalHost(r.RegistryStr()) + "/" + r.RepositoryStr()
}

// canonicalHost writes a registry host as the one server it reaches: DNS
// names are case-insensitive and may end in a dot, and 443 is https's
// default port, so REGISTRY.REDHAT.IO., registry.redhat.io:443 and
// registry.redhat.io are one registry. Scopes and images are compared in
// this form: otherwise an Application could slip past an enforce scope by
// spelling the host another way. registry-1.docker.io is Docker Hub's API
// host, which go-containerregistry calls index.docker.io.
func canonicalHost(h string) string {
	h = strings.ToLower(h)
	host, port := h, ""
	if i := strings.LastIndex(h, ":"); i >= 0 && !strings.HasSuffix(h, "]") {
		host, port = h[:i], h[i+1:]
	}
	host = strings.TrimSuffix(host, ".")
	if port == "443" && httpsOnly(host) {
		port = ""
	}
	if host == "registry-1.docker.io" && port == "" {
		host = name.DefaultRegistry
	}
	if port != "" {
		host += ":" + port
	}
	if r, err := name.NewRegistry(host, name.WeakValidation); err == nil {
		return r.RegistryStr() // docker.io is index.docker.io
	}
	return host
}

// httpsOnly reports whether go-containerregistry talks https to host both
// with and without port 443 (it talks plain http to localhost:<port> and
// private addresses, where :443 and no port are two servers).
func httpsOnly(host string) bool {
	for _, h := range []string{host, host + ":443"} {
		r, err := name.NewRegistry(h, name.WeakValidation)
		if err != nil || r.Scheme() != "https" {
			return false
		}
	}
	return true
}

// NormalizePrefix normalizes a scope's match or signedAs (or a tenancy
// policy's image prefix): a registry alone, or a repository prefix, its host
// written as canonicalHost writes it; "*" as is.
func NormalizePrefix(s string) (string, error) {
	s = strings.TrimSuffix(s, "/")
	if s == "*" {
		return s, nil
	}
	if strings.ContainsAny(s, "@ \t") || s == "" {
		return "", fmt.Errorf("not a registry or repository prefix")
	}
	if !strings.Contains(s, "/") {
		if _, err := name.NewRegistry(s, name.WeakValidation); err != nil {
			return "", fmt.Errorf("not a registry name")
		}
		return canonicalHost(s), nil
	}
	host, path, _ := strings.Cut(s, "/")
	// An empty host would be go-containerregistry's default, Docker Hub:
	// "/myorg" is a typo, not index.docker.io/myorg.
	_, err := name.NewRegistry(host, name.WeakValidation)
	if err != nil || host == "" || !pathRE.MatchString(path) {
		return "", fmt.Errorf("not a repository prefix (lower-case registry/path, no tag)")
	}
	// docker.io/x stands for index.docker.io/library/x only as a whole
	// repository name; as a prefix, docker.io/library is written out.
	return canonicalHost(host) + "/" + path, nil
}

// pathRE is a repository path as the distribution spec allows it.
var pathRE = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$`)

// parseKey reads one PEM public key (RSA, ECDSA or Ed25519).
func parseKey(data []byte) (*Key, error) {
	block, rest := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("not a PEM public key (expected -----BEGIN PUBLIC KEY-----)")
	}
	if strings.TrimSpace(string(rest)) != "" {
		return nil, fmt.Errorf("more than one PEM block: give each key its own entry")
	}
	var pub crypto.PublicKey
	var err error
	switch block.Type {
	case "PUBLIC KEY":
		pub, err = x509.ParsePKIXPublicKey(block.Bytes)
	case "RSA PUBLIC KEY":
		pub, err = x509.ParsePKCS1PublicKey(block.Bytes)
	default:
		return nil, fmt.Errorf("PEM block %q is not a public key (expected PUBLIC KEY; never put a private key in the policy)", block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("PEM public key does not parse")
	}
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return nil, fmt.Errorf("RSA key of %d bits: at least 2048 are required", k.N.BitLen())
		}
	case *ecdsa.PublicKey, ed25519.PublicKey:
	default:
		return nil, fmt.Errorf("unsupported key type %T: use RSA, ECDSA or Ed25519", pub)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("PEM public key does not parse")
	}
	sum := sha256.Sum256(der)
	return &Key{Fingerprint: "sha256:" + hex.EncodeToString(sum[:]), Public: pub, DER: der}, nil
}

// computeHash digests what decides verdicts, in a fixed order.
func computeHash(dirs Mode, scopes []*Scope) string {
	type hk struct{ Name, DER string }
	type hid struct{ Issuer, Subject, Regexp string }
	type hs struct {
		Match, Mode, SignedAs string
		Keys                  []hk
		Rekor                 *hk
		Root                  string
		IDs                   []hid
		Lookaside             string
		GPG                   []hk
	}
	out := []hs{}
	for _, s := range scopes {
		h := hs{Match: s.Match, Mode: string(s.Mode), SignedAs: s.SignedAs}
		for _, k := range s.Keys {
			h.Keys = append(h.Keys, hk{k.Name, hex.EncodeToString(k.DER)})
		}
		if s.Rekor != nil {
			h.Rekor = &hk{s.Rekor.Name, hex.EncodeToString(s.Rekor.DER)}
		}
		if r := s.TrustedRootJSON; r != nil {
			sum := sha256.Sum256(r)
			h.Root = hex.EncodeToString(sum[:])
		}
		if s.GPG != nil {
			h.Lookaside = s.GPG.Lookaside
			for _, k := range s.GPG.Keys {
				h.GPG = append(h.GPG, hk{k.Name, hex.EncodeToString(k.Armored)})
			}
		}
		for _, id := range s.Identities {
			x := hid{Issuer: id.Issuer, Subject: id.Subject}
			if id.SubjectRegexp != nil {
				x.Regexp = id.SubjectRegexp.String()
			}
			h.IDs = append(h.IDs, x)
		}
		out = append(out, h)
	}
	slices.SortStableFunc(out, func(a, b hs) int { return strings.Compare(a.Match, b.Match) })
	raw, _ := json.Marshal(struct {
		Directories Mode
		Scopes      []hs
	}{dirs, out})
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:])
}
