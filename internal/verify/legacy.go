package verify

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"

	jsoncanonicalizer "github.com/cyberphone/json-canonicalization/go/src/webpki.org/jsoncanonicalizer"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/olm-cmp/olm-cmp/internal/trust"
)

// Annotations of cosign's legacy signature layers.
const (
	annSignature = "dev.cosignproject.cosign/signature"
	annBundle    = "dev.sigstore.cosign/bundle"
	// MediaTypeSimpleSigning is a legacy signature layer's media type.
	MediaTypeSimpleSigning = "application/vnd.dev.cosign.simplesigning.v1+json"
)

// legacy verifies one layer of a .sig manifest: the payload blob, signed by
// the annotation's signature with one of the scope's keys.
func (c *check) legacy(l v1.Descriptor, what string) (string, *failure) {
	sig, err := base64.StdEncoding.DecodeString(l.Annotations[annSignature])
	if err != nil || len(sig) == 0 || len(sig) > 4096 {
		return "", &failure{rank: rankMalformed, what: what + " has a signature annotation that is not a base64 signature",
			fix: "remove the tag and sign again"}
	}
	data, f := c.blob(l, "the signature payload "+l.Digest.String())
	if f != nil {
		return "", f
	}
	var key *trust.Key
	for _, k := range c.scope.Keys {
		if verifySignature(k.Public, sig, data) {
			key = k
			break
		}
	}
	if key == nil {
		return "", &failure{rank: rankUnknownKey,
			what: fmt.Sprintf("signed (%s) by a key the scope does not trust", what),
			fix:  fmt.Sprintf("add the signer's public key to the scope if you trust it (keys: %s), or sign with one of those keys", keyNames(c.scope))}
	}
	signer := "key " + key.Name
	var p simpleSigning
	if err := json.Unmarshal(data, &p); err != nil {
		return "", &failure{rank: rankPayload,
			what: fmt.Sprintf("signed by %s, but the payload is not a simple-signing JSON document", signer),
			fix:  "sign with cosign sign, which writes the payload itself"}
	}
	if p.Critical.Type != cosignSignature && p.Critical.Type != atomicSignature {
		return "", &failure{rank: rankPayload,
			what: fmt.Sprintf("signed by %s, but the payload's critical.type is %s, not a container image signature", signer, untrusted(p.Critical.Type)),
			fix:  "sign with cosign sign, which writes the payload itself"}
	}
	if f := c.checkNames(signer, p.Critical.Image.DockerManifestDigest, p.Critical.Identity.DockerReference, true); f != nil {
		return "", f
	}
	if c.scope.Rekor != nil {
		if f := c.checkRekor(l, data, sig, key, signer); f != nil {
			return "", f
		}
	}
	return signer, nil
}

// cosignSignature is cosign's simple-signing type.
const cosignSignature = "cosign container image signature"

// simpleSigning is the simple-signing payload cosign and containers/image
// sign (sigstore/sigstore's payload.SimpleContainerImage, whose package
// olm-cmp does not link: it brings sigstore's protobuf descriptors, built
// in every process's initialisation).
type simpleSigning struct {
	Critical struct {
		Identity struct {
			DockerReference string `json:"docker-reference"`
		} `json:"identity"`
		Image struct {
			DockerManifestDigest string `json:"docker-manifest-digest"`
		} `json:"image"`
		Type string `json:"type"`
	} `json:"critical"`
	Optional map[string]any `json:"optional"`
}

// verifySignature reports whether sig is pub's signature of data, as
// cosign signs a legacy payload and sigstore/sigstore's
// signature.LoadVerifier(pub, crypto.SHA256) verifies it: RSA PKCS#1 v1.5
// and ECDSA over the payload's SHA-256 (an ECDSA signature ASN.1 or IEEE
// P1363 encoded), Ed25519 over the payload itself. Policy keys come from
// x509's parsers, which refuse points off their curve. The standard library
// does it here: that package's initialisation (sigstore's protobuf
// descriptors) would cost every olm-cmp process, and a process of
// olm-cmp-check per signature costs more than the check.
func verifySignature(pub crypto.PublicKey, sig, data []byte) bool {
	digest := sha256.Sum256(data)
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return rsa.VerifyPKCS1v15(k, crypto.SHA256, digest[:], sig) == nil
	case *ecdsa.PublicKey:
		var asn struct{ R, S *big.Int }
		if _, err := asn1.Unmarshal(sig, &asn); err == nil {
			return ecdsa.VerifyASN1(k, digest[:], sig)
		}
		if len(sig) == 0 || len(sig) > 132 || len(sig)%2 != 0 {
			return false
		}
		r := new(big.Int).SetBytes(sig[:len(sig)/2])
		s := new(big.Int).SetBytes(sig[len(sig)/2:])
		return ecdsa.Verify(k, digest[:], r, s)
	case ed25519.PublicKey:
		return ed25519.Verify(k, data, sig)
	}
	return false
}

func keyNames(s *trust.Scope) string {
	out := ""
	for i, k := range s.Keys {
		if i > 0 {
			out += ", "
		}
		if i == 4 {
			return out + fmt.Sprintf("and %d more", len(s.Keys)-4)
		}
		out += k.Name
	}
	return out
}

// rekorBundle is cosign's dev.sigstore.cosign/bundle annotation: the
// transparency log's signed entry timestamp over the entry.
type rekorBundle struct {
	SignedEntryTimestamp []byte
	Payload              rekorPayload
}

type rekorPayload struct {
	Body           string `json:"body"`
	IntegratedTime int64  `json:"integratedTime"`
	LogIndex       int64  `json:"logIndex"`
	LogID          string `json:"logID"`
}

// hashedRekord is the entry body cosign's signatures are logged as.
type hashedRekord struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Spec       struct {
		Data struct {
			Hash struct {
				Algorithm string `json:"algorithm"`
				Value     string `json:"value"`
			} `json:"hash"`
		} `json:"data"`
		Signature struct {
			Content   string `json:"content"`
			PublicKey struct {
				Content string `json:"content"`
			} `json:"publicKey"`
		} `json:"signature"`
	} `json:"spec"`
}

// checkRekor verifies, offline, that the layer's transparency-log entry is
// signed by the scope's Rekor key and records this very signature, payload
// and key.
func (c *check) checkRekor(l v1.Descriptor, data, sig []byte, key *trust.Key, signer string) *failure {
	fix := "sign again with the transparency log on (cosign sign --tlog-upload=true against the Rekor instance whose key the scope names)"
	raw, ok := l.Annotations[annBundle]
	if !ok {
		return &failure{rank: rankTlog, what: fmt.Sprintf("signed by %s, but without the transparency-log entry the scope's Rekor key requires", signer), fix: fix}
	}
	bad := func(why string) *failure {
		return &failure{rank: rankTlog, what: fmt.Sprintf("signed by %s, but its transparency-log entry %s", signer, why), fix: fix}
	}
	var b rekorBundle
	if err := json.Unmarshal([]byte(raw), &b); err != nil || len(b.SignedEntryTimestamp) == 0 || b.Payload.Body == "" {
		return bad("is truncated or not JSON")
	}
	rk := c.scope.Rekor
	sum := sha256.Sum256(rk.DER)
	if b.Payload.LogID != hex.EncodeToString(sum[:]) {
		return bad(fmt.Sprintf("is from another log (%s), not the one whose key the scope names", untrusted(b.Payload.LogID)))
	}
	pub, ok := rk.Public.(*ecdsa.PublicKey)
	if !ok {
		return bad("cannot be checked: the scope's Rekor key is not an ECDSA key")
	}
	contents, err := json.Marshal(b.Payload)
	if err != nil {
		return bad("is not JSON")
	}
	canon, err := jsoncanonicalizer.Transform(contents)
	if err != nil {
		return bad("is not JSON")
	}
	h := sha256.Sum256(canon)
	if !ecdsa.VerifyASN1(pub, h[:], b.SignedEntryTimestamp) {
		return bad("is not signed by the scope's Rekor key")
	}
	body, err := base64.StdEncoding.DecodeString(b.Payload.Body)
	if err != nil {
		return bad("has a body that is not base64")
	}
	var e hashedRekord
	if err := json.Unmarshal(body, &e); err != nil || e.Kind != "hashedrekord" {
		return bad("is not a hashedrekord entry")
	}
	ps := sha256.Sum256(data)
	if e.Spec.Data.Hash.Algorithm != "sha256" || e.Spec.Data.Hash.Value != hex.EncodeToString(ps[:]) {
		return bad("records another payload")
	}
	if e.Spec.Signature.Content != base64.StdEncoding.EncodeToString(sig) {
		return bad("records another signature")
	}
	pemBytes, err := base64.StdEncoding.DecodeString(e.Spec.Signature.PublicKey.Content)
	if err != nil {
		return bad("records a public key that is not base64")
	}
	blk, _ := pem.Decode(pemBytes)
	if blk == nil {
		return bad("records a public key that is not PEM")
	}
	der := blk.Bytes
	if _, err := x509.ParsePKIXPublicKey(der); err != nil || !bytes.Equal(der, key.DER) {
		return bad("records another public key")
	}
	return nil
}
