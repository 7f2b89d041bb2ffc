package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/olm-cmp/olm-cmp/internal/trust"
)

// FormatGPG is the format of GPG simple signatures from a lookaside server.
const FormatGPG = "gpg-lookaside"

// atomicSignature is containers/image's simple-signing type.
const atomicSignature = "atomic container signature"

// lookaside verifies the GPG simple signatures a lookaside server keeps for
// the image: signature-1, signature-2, … until one is missing, at most
// MaxCandidates, each at most MaxBlobBytes.
func (c *check) lookaside() (string, *failure) {
	g := c.scope.GPG
	// The signatures are kept under the name they sign (for a mirror, the
	// original's), without its registry.
	signed, err := name.NewRepository(c.want, name.WeakValidation)
	if err != nil {
		return "", &failure{rank: rankConfig, what: "the repository the signatures must name does not parse", fix: "correct the scope's signedAs"}
	}
	base := fmt.Sprintf("%s/%s@%s=%s", g.Lookaside, signed.RepositoryStr(), "sha256", strings.TrimPrefix(c.digest, "sha256:"))
	rt := c.v.opts.Lookaside
	if rt == nil {
		rt = http.DefaultTransport
	}
	client := &http.Client{Transport: rt}
	var worst *failure
	for n := 1; n <= c.v.lim.MaxCandidates; n++ {
		u := fmt.Sprintf("%s/signature-%d", base, n)
		what := fmt.Sprintf("the GPG signature %d on the lookaside server", n)
		req, err := http.NewRequestWithContext(c.ctx, http.MethodGet, u, nil)
		if err != nil {
			return "", &failure{rank: rankConfig, what: "the lookaside URL does not parse", fix: "correct the scope's gpg.lookaside"}
		}
		resp, err := client.Do(req)
		if err != nil {
			// The client's error repeats the URL, and with it the
			// user name a private lookaside's URL may carry.
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			f := c.registryFailure("reading "+what, err)
			return "", better(worst, f)
		}
		data, rerr := io.ReadAll(io.LimitReader(resp.Body, c.v.lim.MaxBlobBytes+1))
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			break
		}
		if resp.StatusCode != http.StatusOK || rerr != nil {
			f := failure{rank: rankRegistry,
				what: fmt.Sprintf("the lookaside server answered %d while reading %s", resp.StatusCode, what),
				fix:  "check the scope's gpg.lookaside URL and that the server is up"}
			if rerr != nil {
				f = c.registryFailure("reading "+what, rerr)
			}
			return "", better(worst, f)
		}
		if int64(len(data)) > c.v.lim.MaxBlobBytes {
			return "", better(worst, failure{rank: rankMalformed,
				what: fmt.Sprintf("%s is more than %d bytes", what, c.v.lim.MaxBlobBytes),
				fix:  "the lookaside server is serving something else than signatures: check gpg.lookaside"})
		}
		c.found++
		signer, f := c.gpgSignature(g, data, what)
		if signer != "" {
			return signer, nil
		}
		worst = better(worst, *f)
	}
	return "", worst
}

// gpgSignature verifies one OpenPGP signed message against the scope's keys
// and checks the simple-signing document it holds.
func (c *check) gpgSignature(g *trust.GPG, data []byte, what string) (string, *failure) {
	var ring openpgp.EntityList
	for _, k := range g.Keys {
		ring = append(ring, k.Entities...)
	}
	malformed := &failure{rank: rankMalformed, what: what + " is not an OpenPGP signed message",
		fix: "the lookaside server is serving something else than signatures: check gpg.lookaside"}
	md, err := openpgp.ReadMessage(bytes.NewReader(data), ring, nil, &packet.Config{})
	if err != nil || md.IsEncrypted || !md.IsSigned {
		return "", malformed
	}
	// Decompression could turn a small message into a large body: bounded.
	body, err := io.ReadAll(io.LimitReader(md.UnverifiedBody, c.v.lim.MaxBlobBytes+1))
	if err != nil && md.SignedBy != nil {
		return "", &failure{rank: rankUnknownKey, what: fmt.Sprintf("%s does not verify with key %016X", what, md.SignedByKeyId),
			fix: "the signature is damaged or forged: sign again"}
	}
	if err != nil {
		return "", malformed
	}
	if int64(len(body)) > c.v.lim.MaxBlobBytes {
		return "", &failure{rank: rankMalformed, what: fmt.Sprintf("%s holds more than %d bytes", what, c.v.lim.MaxBlobBytes),
			fix: "the lookaside server is serving something else than signatures: check gpg.lookaside"}
	}
	if md.SignedBy == nil {
		return "", &failure{rank: rankUnknownKey,
			what: fmt.Sprintf("%s is signed by GPG key %016X, which the scope does not trust", what, md.SignedByKeyId),
			fix:  "add that key to the scope's gpg.keys if you trust it"}
	}
	if md.SignatureError != nil || md.Signature == nil {
		f := &failure{rank: rankUnknownKey, what: fmt.Sprintf("%s does not verify with key %016X", what, md.SignedByKeyId),
			fix: "the signature is damaged or forged: sign again"}
		// A key past its expiry or revoked is the usual reason, and
		// "sign again" with it would not help.
		switch e := md.SignatureError; {
		case errors.Is(e, pgperrors.ErrKeyExpired):
			f.what = fmt.Sprintf("%s is signed by GPG key %016X, which has expired", what, md.SignedByKeyId)
			f.fix = "sign with a current key and add it to the scope's gpg.keys (or, if the key's owner extended it, put its refreshed public key in the policy)"
		case errors.Is(e, pgperrors.ErrKeyRevoked):
			f.what = fmt.Sprintf("%s is signed by GPG key %016X, which is revoked", what, md.SignedByKeyId)
			f.fix = "the key must not be trusted any longer: sign with a current key, and remove the revoked one from the scope's gpg.keys"
		case errors.Is(e, pgperrors.ErrSignatureExpired):
			f.what = fmt.Sprintf("%s has expired", what)
			f.fix = "sign the image again"
		}
		return "", f
	}
	signer := "gpg key " + gpgKeyName(g, md.SignedBy.Entity)
	var p simpleSigning
	if err := json.Unmarshal(body, &p); err != nil {
		return "", &failure{rank: rankPayload,
			what: fmt.Sprintf("signed by %s, but the payload is not a simple-signing JSON document", signer),
			fix:  "sign with skopeo or podman (--sign-by), which write the payload themselves"}
	}
	if p.Critical.Type != atomicSignature {
		return "", &failure{rank: rankPayload,
			what: fmt.Sprintf("signed by %s, but the payload's critical.type is %s, not a container image signature", signer, untrusted(p.Critical.Type)),
			fix:  "sign with skopeo or podman (--sign-by), which write the payload themselves"}
	}
	if f := c.checkNames(signer, p.Critical.Image.DockerManifestDigest, p.Critical.Identity.DockerReference, true); f != nil {
		return "", f
	}
	return signer, nil
}

func gpgKeyName(g *trust.GPG, e *openpgp.Entity) string {
	for _, k := range g.Keys {
		for _, x := range k.Entities {
			if x == e {
				return k.Name
			}
		}
	}
	return fmt.Sprintf("%016X", e.PrimaryKey.KeyId)
}
