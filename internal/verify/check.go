package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/olm-cmp/olm-cmp/internal/trust"
)

// check is one verification of one image.
type check struct {
	v      *Verifier
	ctx    context.Context
	scope  *trust.Scope
	repo   name.Repository
	digest string
	// want is the repository signatures must name.
	want string
	// found counts the signatures seen, whatever their fate.
	found int
}

func (c *check) options() []remote.Option {
	return append(append([]remote.Option{}, c.v.opts.Remote...), remote.WithContext(c.ctx))
}

// run tries the referrers (Sigstore bundles), then the .sig tag, and returns
// the first signer that verifies, or the most informative failure.
func (c *check) run() (signer, format string, worst *failure) {
	signer, f := c.bundles()
	if signer != "" {
		return signer, FormatBundle, nil
	}
	if f != nil {
		worst = better(worst, *f)
	}
	if c.ctx.Err() != nil {
		return "", "", worst
	}
	if len(c.scope.Keys) > 0 {
		signer, f = c.sigTag()
		if signer != "" {
			return signer, FormatTag, nil
		}
		if f != nil {
			worst = better(worst, *f)
		}
	}
	if c.scope.GPG != nil && c.ctx.Err() == nil {
		signer, f = c.lookaside()
		if signer != "" {
			return signer, FormatGPG, nil
		}
		if f != nil {
			worst = better(worst, *f)
		}
	}
	if worst == nil || worst.rank == rankNone {
		where := fmt.Sprintf("no Sigstore bundle referrer, no %s tag", sigTag(c.digest))
		if c.scope.GPG != nil {
			where += ", no GPG signature on the lookaside server"
		}
		return "", "", &failure{rank: rankNone,
			what: fmt.Sprintf("no signature found (%s)", where),
			fix:  c.signFix()}
	}
	return "", "", worst
}

// signFix says how to sign the image for the scope's kind of trust.
func (c *check) signFix() string {
	if len(c.scope.Keys) == 0 && c.scope.GPG != nil {
		return fmt.Sprintf("sign the image by digest with one of the scope's GPG keys (skopeo copy --sign-by <key id>) and store the signature on the lookaside server %s", trust.RedactURL(c.scope.GPG.Lookaside))
	}
	return fmt.Sprintf("sign the image by digest (cosign sign --key <key> %s@%s) and push the signature to the same repository", c.repo.Name(), c.digest)
}

func sigTag(digest string) string { return strings.Replace(digest, ":", "-", 1) + ".sig" }

// notFound reports a registry answer meaning "no such manifest".
func notFound(err error) bool {
	var te *transport.Error
	if errors.As(err, &te) {
		return te.StatusCode == http.StatusNotFound
	}
	return false
}

// manifest fetches a manifest by digest within MaxManifestBytes: the
// descriptor's size is checked before the body is read, and
// go-containerregistry checks the bytes against the digest.
func (c *check) manifest(d v1.Hash, size int64, what string) ([]byte, types.MediaType, *failure) {
	if size > c.v.lim.MaxManifestBytes {
		return nil, "", &failure{rank: rankMalformed,
			what: fmt.Sprintf("%s is %d bytes, more than the %d a signature manifest may have", what, size, c.v.lim.MaxManifestBytes),
			fix:  "remove the oversized signature manifest from the registry and sign again"}
	}
	desc, err := remote.Get(c.repo.Digest(d.String()), c.options()...)
	if err != nil {
		f := c.registryFailure("reading "+what, err)
		return nil, "", &f
	}
	if int64(len(desc.Manifest)) > c.v.lim.MaxManifestBytes {
		return nil, "", &failure{rank: rankMalformed,
			what: fmt.Sprintf("%s is %d bytes, more than the %d a signature manifest may have", what, len(desc.Manifest), c.v.lim.MaxManifestBytes),
			fix:  "remove the oversized signature manifest from the registry and sign again"}
	}
	return desc.Manifest, desc.MediaType, nil
}

// blob reads a signature blob, refusing it by its descriptor's size before
// any byte is read and by the bytes read, and checking its digest.
func (c *check) blob(d v1.Descriptor, what string) ([]byte, *failure) {
	max := c.v.lim.MaxBlobBytes
	if d.Size > max || d.Size < 0 {
		return nil, &failure{rank: rankMalformed,
			what: fmt.Sprintf("%s is %d bytes, more than the %d a signature may have", what, d.Size, max),
			fix:  "remove the oversized signature from the registry and sign again"}
	}
	l, err := remote.Layer(c.repo.Digest(d.Digest.String()), c.options()...)
	if err != nil {
		f := c.registryFailure("reading "+what, err)
		return nil, &f
	}
	rc, err := l.Compressed()
	if err != nil {
		f := c.registryFailure("reading "+what, err)
		return nil, &f
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, max+1))
	if err != nil {
		f := c.registryFailure("reading "+what, err)
		return nil, &f
	}
	if int64(len(data)) > max {
		return nil, &failure{rank: rankMalformed,
			what: fmt.Sprintf("%s is more than %d bytes", what, max),
			fix:  "remove the oversized signature from the registry and sign again"}
	}
	sum := sha256.Sum256(data)
	if d.Digest.Algorithm != "sha256" || hex.EncodeToString(sum[:]) != d.Digest.Hex || int64(len(data)) != d.Size {
		return nil, &failure{rank: rankMalformed,
			what: fmt.Sprintf("%s does not match its digest %s", what, d.Digest),
			fix:  "the registry served other bytes than the signature manifest names: check the registry or mirror"}
	}
	return data, nil
}

// bundles verifies the Sigstore bundles referring to the image.
func (c *check) bundles() (string, *failure) {
	subject := c.repo.Digest(c.digest)
	idx, err := remote.Referrers(subject, c.options()...)
	if err != nil {
		if notFound(err) {
			return "", nil
		}
		f := c.registryFailure("listing the image's referrers", err)
		return "", &f
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return "", &failure{rank: rankMalformed, what: "the referrers list is not an OCI index",
			fix: "the registry's referrers answer is broken: check the registry"}
	}
	var worst *failure
	tried, looked := 0, 0
	bound := ""
	for _, d := range im.Manifests {
		// Registries that predate OCI 1.1's final text (go-containerregistry's
		// own among them) report the config's media type, the empty one
		// cosign writes, instead of the manifest's artifactType: such a
		// referrer is opened to see what it holds.
		at := string(d.ArtifactType)
		if !isBundleType(at) && at != "" && at != emptyConfigType || attestation(d.Annotations) {
			continue
		}
		// A referrer naming the image itself (or a referrers index listing
		// itself) is not a signature: never followed.
		if d.Digest.String() == c.digest {
			worst = better(worst, failure{rank: rankMalformed, what: "the referrers list names the image itself as its signature",
				fix: "remove the bogus referrer from the registry"})
			continue
		}
		// Two bounds: the candidates tried (referrers that can be a
		// signature), and the referrers opened at all, so that
		// attestations cannot crowd a signature out of the first, nor
		// cost unbounded reads.
		if tried >= c.v.lim.MaxCandidates {
			bound = fmt.Sprintf("more than %d referrers may be signatures: the first %d did not verify and the rest were not read (the bound on signatures tried)", c.v.lim.MaxCandidates, c.v.lim.MaxCandidates)
			break
		}
		if looked >= c.v.lim.MaxReferrers {
			bound = fmt.Sprintf("more than %d referrers: the first %d held no signature that verified and the rest were not read (the bound on referrers read)", c.v.lim.MaxReferrers, c.v.lim.MaxReferrers)
			break
		}
		looked++
		signer, f, candidate := c.bundle(d)
		if candidate {
			tried++
		}
		if signer != "" {
			return signer, nil
		}
		if f != nil {
			c.found++
			worst = better(worst, *f)
		}
		if c.ctx.Err() != nil {
			break
		}
	}
	if bound != "" {
		// The signature may be among the referrers not read: say so, after
		// the most telling failure of those read.
		if worst == nil || worst.rank == rankNone {
			return "", &failure{rank: rankMalformed, what: bound,
				fix: "remove stale signatures and attestations from the registry (or sign again and delete the old referrers), then retry"}
		}
		f := *worst
		f.what += " (and " + bound + ")"
		return "", &f
	}
	return "", worst
}

// attestation reports whether a referrer's annotations (as cosign v3
// writes them on the manifest, and registries copy into the referrers
// list) say it is a Sigstore bundle of another predicate than an image
// signature: an attestation, never a signature, so never a candidate.
func attestation(ann map[string]string) bool {
	pt, ok := ann["dev.sigstore.bundle.predicateType"]
	return ok && pt != PredicateSign
}

const emptyConfigType = "application/vnd.oci.empty.v1+json"

func isBundleType(t string) bool {
	return strings.HasPrefix(t, "application/vnd.dev.sigstore.bundle")
}

// bundle verifies one referrer: an OCI manifest whose subject is the image
// and whose one layer is the bundle. A referrer that is not a Sigstore
// bundle (another artifact with an empty config) or is an attestation
// returns no failure and candidate false: it could not have been a
// signature. One that cannot be read is a candidate (it might have been).
func (c *check) bundle(d v1.Descriptor) (signer string, f *failure, candidate bool) {
	signer, f = c.bundleOf(d)
	return signer, f, signer != "" || f != nil
}

func (c *check) bundleOf(d v1.Descriptor) (string, *failure) {
	raw, mt, f := c.manifest(d.Digest, d.Size, "the Sigstore bundle referrer "+d.Digest.String())
	if f != nil {
		return "", f
	}
	if mt.IsIndex() {
		return "", &failure{rank: rankMalformed, what: fmt.Sprintf("the Sigstore bundle referrer %s is an index, not an image manifest", d.Digest),
			fix: "remove the bogus referrer from the registry"}
	}
	var m v1.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", &failure{rank: rankMalformed, what: fmt.Sprintf("the Sigstore bundle referrer %s is not an image manifest", d.Digest),
			fix: "remove the bogus referrer from the registry"}
	}
	if m.Subject == nil || m.Subject.Digest.String() != c.digest {
		return "", &failure{rank: rankMalformed, what: fmt.Sprintf("the Sigstore bundle referrer %s refers to another image", d.Digest),
			fix: "remove the bogus referrer from the registry"}
	}
	if !isBundleType(string(m.ArtifactType)) && !isBundleType(string(d.ArtifactType)) || attestation(m.Annotations) {
		return "", nil
	}
	var layer *v1.Descriptor
	for i := range m.Layers {
		if isBundleType(string(m.Layers[i].MediaType)) {
			layer = &m.Layers[i]
			break
		}
	}
	if layer == nil || len(m.Layers) > c.v.lim.MaxLayers {
		return "", &failure{rank: rankMalformed, what: fmt.Sprintf("the Sigstore bundle referrer %s holds no bundle layer", d.Digest),
			fix: "sign again with cosign v3 (cosign sign --new-bundle-format)"}
	}
	what := "the Sigstore bundle " + layer.Digest.String()
	data, f := c.blob(*layer, what)
	if f != nil {
		return "", f
	}
	return c.verifyBundle(data, what)
}

// sigTag verifies cosign's sha256-<hex>.sig tag.
func (c *check) sigTag() (string, *failure) {
	tag := c.repo.Tag(sigTag(c.digest))
	head, err := remote.Head(tag, c.options()...)
	if err != nil {
		if notFound(err) {
			return "", nil
		}
		f := c.registryFailure("reading the "+tag.TagStr()+" tag", err)
		return "", &f
	}
	what := "the signature manifest " + tag.TagStr()
	raw, _, f := c.manifest(head.Digest, head.Size, what)
	if f != nil {
		return "", f
	}
	var m v1.Manifest
	if err := json.Unmarshal(raw, &m); err != nil || m.SchemaVersion != 2 {
		return "", &failure{rank: rankMalformed, what: what + " is not an image manifest",
			fix: "remove the tag and sign again"}
	}
	if len(m.Layers) > c.v.lim.MaxLayers {
		return "", &failure{rank: rankMalformed,
			what: fmt.Sprintf("%s has %d layers, more than the %d signatures olm-cmp reads", what, len(m.Layers), c.v.lim.MaxLayers),
			fix:  "remove the tag and sign again (cosign sign appends a layer per signature: prune old ones)"}
	}
	var worst *failure
	tried := 0
	for _, l := range m.Layers {
		if _, ok := l.Annotations[annSignature]; !ok {
			continue
		}
		if tried++; tried > c.v.lim.MaxCandidates {
			break
		}
		c.found++
		signer, f := c.legacy(l, what)
		if signer != "" {
			return signer, nil
		}
		worst = better(worst, *f)
		if c.ctx.Err() != nil {
			break
		}
	}
	if tried == 0 {
		return "", &failure{rank: rankMalformed, what: what + " holds no cosign signature layer",
			fix: "remove the tag and sign again"}
	}
	return "", worst
}

// trimRef drops a tag or digest from a reference.
func trimRef(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

// checkNames checks what a verified signature names: the digest, and the
// repository the scope expects.
func (c *check) checkNames(signer, digest, ref string, refRequired bool) *failure {
	if digest != c.digest {
		return &failure{rank: rankPayload,
			what: fmt.Sprintf("signed by %s, but for another digest %s", signer, untrusted(digest)),
			fix:  "the signature was copied from another image: sign this digest"}
	}
	if ref == "" && !refRequired {
		return nil
	}
	got := trust.NormalizeRepo(trimRef(ref))
	if got != c.want {
		fix := "this signature is for another image: sign the image under the name it is pulled from"
		if c.want != trust.NormalizeRepo(c.repo.Name()) {
			fix = fmt.Sprintf("the scope expects signatures naming %s (signedAs): correct signedAs, or sign under that name", c.want)
		} else if c.scope.Match != "*" {
			fix += "; if this is a mirror whose signatures name the original registry, set signedAs on the scope to that registry"
		}
		return &failure{rank: rankPayload,
			what: fmt.Sprintf("signed by %s, but for another repository (%s, expected %s)", signer, untrusted(ref), c.want),
			fix:  fix}
	}
	return nil
}
