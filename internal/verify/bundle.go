package verify

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
	"github.com/sigstore/sigstore-go/pkg/root"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/trust"
)

// PredicateSign is the in-toto predicate type of cosign v3's image
// signatures.
const PredicateSign = "https://sigstore.dev/cosign/sign/v1"

// verifyBundle verifies one Sigstore bundle against the scope: its keys
// first, then its keyless identities.
func (c *check) verifyBundle(data []byte) (string, *failure) {
	var b bundle.Bundle
	if err := b.UnmarshalJSON(data); err != nil {
		why := "not JSON in the Sigstore bundle format"
		if json.Valid(data) {
			why = "a JSON document, but not a Sigstore bundle of a version olm-cmp reads (v0.1 to v0.3)"
		}
		return "", &failure{rank: rankMalformed,
			what: "a Sigstore bundle referrer is " + why,
			fix:  "remove the bogus referrer and sign again with cosign v3"}
	}
	digest, _ := hex.DecodeString(strings.TrimPrefix(c.digest, "sha256:"))
	artifact := sgverify.WithArtifactDigest("sha256", digest)
	vc, err := b.VerificationContent()
	if err != nil {
		return "", &failure{rank: rankMalformed, what: "a Sigstore bundle has no verification material", fix: "sign again with cosign v3"}
	}
	var worst *failure
	if vc.PublicKey() != nil {
		if len(c.scope.Keys) == 0 {
			return "", &failure{rank: rankUnknownKey, what: "signed (Sigstore bundle) with a key, but the scope trusts only keyless identities",
				fix: "add the signer's public key to the scope's keys if you trust it"}
		}
		if entries, err := b.TlogEntries(); c.scope.Rekor != nil && (err != nil || len(entries) == 0) {
			return "", &failure{rank: rankTlog,
				what: "a Sigstore bundle has no transparency-log entry, which the scope's Rekor key requires",
				fix:  "sign again with the transparency log on (cosign sign --tlog-upload=true against the Rekor instance whose key the scope names), or remove the scope's rekor"}
		}
		for _, k := range c.scope.Keys {
			res, err := c.bundleWithKey(&b, k, artifact)
			if err == nil {
				signer := "key " + k.Name
				if f := c.checkStatement(res, signer); f != nil {
					return "", f
				}
				return signer, nil
			}
			worst = better(worst, c.bundleFailure(err, "key"))
		}
		if worst != nil && worst.rank <= rankUnknownKey {
			worst = &failure{rank: rankUnknownKey,
				what: "signed (Sigstore bundle) by a key the scope does not trust",
				fix:  fmt.Sprintf("add the signer's public key to the scope if you trust it (keys: %s), or sign with one of those keys", keyNames(c.scope))}
		}
		return "", worst
	}
	if c.scope.TrustedRoot == nil || len(c.scope.Identities) == 0 {
		return "", &failure{rank: rankUnknownKey, what: "signed keyless (Sigstore bundle with a certificate), but the scope has no keyless trusted root and identities",
			fix: "add keyless.trustedRoot and keyless.identities to the scope if you trust the signer"}
	}
	res, err := c.bundleKeyless(&b, artifact)
	if err != nil {
		f := c.bundleFailure(err, "identity")
		// Name the identity that signed, rather than sigstore-go's account
		// of the last identity it compared with.
		if f.rank == rankUnknownKey && strings.HasPrefix(f.what, "signed keyless by an identity") {
			if cert := vc.Certificate(); cert != nil {
				if sum, err := certificate.SummarizeCertificate(cert); err == nil {
					f.what = fmt.Sprintf("signed keyless by %s (issuer %s), an identity the scope does not accept",
						untrusted(sum.SubjectAlternativeName), untrusted(sum.Issuer))
				}
			}
		}
		return "", &f
	}
	signer := "identity " + identityOf(res)
	if f := c.checkStatement(res, signer); f != nil {
		return "", f
	}
	return signer, nil
}

func identityOf(res *sgverify.VerificationResult) string {
	if res.Signature != nil && res.Signature.Certificate != nil {
		s := res.Signature.Certificate
		return s.SubjectAlternativeName + " (" + s.Issuer + ")"
	}
	return "unknown"
}

// bundleFailure words a sigstore-go verification error.
func (c *check) bundleFailure(err error, kind string) failure {
	msg := echo.Short(oneLine(err.Error()))
	switch {
	case strings.Contains(msg, "artifact digest") || strings.Contains(msg, "provided artifact digests do not match"):
		return failure{rank: rankPayload, what: "a Sigstore bundle signed by a trusted signer is for another digest",
			fix: "the signature was copied from another image: sign this digest"}
	case strings.Contains(msg, "transparency log") || strings.Contains(msg, "tlog") || strings.Contains(msg, "inclusion"):
		return failure{rank: rankTlog, what: fmt.Sprintf("a Sigstore bundle's transparency-log entry does not verify (%s)", msg),
			fix: "sign again with the transparency log on, against the Rekor instance the scope trusts"}
	case kind == "identity" && (strings.Contains(msg, "certificate identity") || strings.Contains(msg, "SAN") || strings.Contains(msg, "issuer")):
		return failure{rank: rankUnknownKey, what: fmt.Sprintf("signed keyless by an identity the scope does not accept (%s)", msg),
			fix: "add the signer's issuer and subject to keyless.identities if you trust it"}
	case kind == "identity":
		return failure{rank: rankUnknownKey, what: fmt.Sprintf("a keyless Sigstore bundle does not verify against the scope's trusted root (%s)", msg),
			fix: "check keyless.trustedRoot names the Sigstore instance the image was signed with"}
	}
	return failure{rank: rankUnknownKey, what: fmt.Sprintf("a Sigstore bundle does not verify (%s)", msg), fix: "sign again with one of the scope's keys"}
}

// checkStatement checks the in-toto statement a verified bundle signs: the
// cosign signing predicate, and a subject naming the repository.
func (c *check) checkStatement(res *sgverify.VerificationResult, signer string) *failure {
	st := res.Statement
	if st == nil {
		return &failure{rank: rankPayload, what: fmt.Sprintf("signed by %s, but the bundle signs a blob, not an image statement", signer),
			fix: "sign the image with cosign sign (not sign-blob)"}
	}
	if st.PredicateType != PredicateSign {
		return &failure{rank: rankPayload, what: fmt.Sprintf("signed by %s, but the bundle is an attestation (%s), not an image signature", signer, untrusted(st.PredicateType)),
			fix: "sign the image with cosign sign"}
	}
	// sigstore-go checked that a subject carries the digest; the subject
	// with that digest must name this repository when it names one. cosign
	// v3 writes subjects without a name (the digest alone is signed), so
	// an unnamed subject is accepted.
	hexd := strings.TrimPrefix(c.digest, "sha256:")
	for _, s := range st.Subject {
		if s.Digest["sha256"] != hexd {
			continue
		}
		if f := c.checkNames(signer, c.digest, s.Name, false); f != nil {
			return f
		}
		return nil
	}
	return &failure{rank: rankPayload, what: fmt.Sprintf("signed by %s, but for another digest", signer),
		fix: "the signature was copied from another image: sign this digest"}
}

// bundleWithKey verifies b with one public key, and the transparency log
// when the scope names a Rekor key.
func (c *check) bundleWithKey(b *bundle.Bundle, k *trust.Key, artifact sgverify.ArtifactPolicyOption) (*sgverify.VerificationResult, error) {
	ver, err := signature.LoadVerifier(k.Public, crypto.SHA256)
	if err != nil {
		return nil, err
	}
	keyMaterial := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
		return root.NewExpiringKey(ver, time.Time{}, time.Time{}), nil
	})
	var tm root.TrustedMaterial = keyMaterial
	opts := []sgverify.VerifierOption{sgverify.WithNoObserverTimestamps()}
	if c.scope.Rekor != nil {
		tm = root.TrustedMaterialCollection{keyMaterial, rekorMaterial(c.scope.Rekor)}
		opts = []sgverify.VerifierOption{sgverify.WithTransparencyLog(1), sgverify.WithIntegratedTimestamps(1)}
	}
	v, err := sgverify.NewVerifier(tm, opts...)
	if err != nil {
		return nil, err
	}
	return v.Verify(b, sgverify.NewPolicy(artifact, sgverify.WithKey()))
}

// bundleKeyless verifies b against the scope's trusted root and identities.
func (c *check) bundleKeyless(b *bundle.Bundle, artifact sgverify.ArtifactPolicyOption) (*sgverify.VerificationResult, error) {
	tr := c.scope.TrustedRoot
	var opts []sgverify.VerifierOption
	if len(tr.RekorLogs()) > 0 {
		opts = append(opts, sgverify.WithTransparencyLog(1), sgverify.WithObserverTimestamps(1))
	} else if len(tr.TimestampingAuthorities()) > 0 {
		opts = append(opts, sgverify.WithSignedTimestamps(1))
	} else {
		opts = append(opts, sgverify.WithCurrentTime())
	}
	if len(tr.CTLogs()) > 0 {
		opts = append(opts, sgverify.WithSignedCertificateTimestamps(1))
	}
	v, err := sgverify.NewVerifier(tr, opts...)
	if err != nil {
		return nil, err
	}
	var popts []sgverify.PolicyOption
	for _, id := range c.scope.Identities {
		re := ""
		if id.SubjectRegexp != nil {
			re = id.SubjectRegexp.String()
		}
		ci, err := sgverify.NewShortCertificateIdentity(id.Issuer, "", id.Subject, re)
		if err != nil {
			return nil, err
		}
		popts = append(popts, sgverify.WithCertificateIdentity(ci))
	}
	return v.Verify(b, sgverify.NewPolicy(artifact, popts...))
}

// rekorMaterial is a trusted material holding only the scope's Rekor log.
type rekorLog struct {
	root.BaseTrustedMaterial
	logs map[string]*root.TransparencyLog
}

func (r *rekorLog) RekorLogs() map[string]*root.TransparencyLog { return r.logs }

func rekorMaterial(k *trust.Key) root.TrustedMaterial {
	sum := sha256.Sum256(k.DER)
	id := hex.EncodeToString(sum[:])
	hf := crypto.SHA256
	if ec, ok := k.Public.(*ecdsa.PublicKey); ok && ec.Curve.Params().BitSize == 384 {
		hf = crypto.SHA384
	}
	// sigstore-go refuses a signed entry timestamp from a log whose
	// validity period has no start ("rekor validity period start time not
	// set"): a policy's rekor key has no period, so it is valid from the
	// epoch on, as a trusted root without an end date.
	return &rekorLog{logs: map[string]*root.TransparencyLog{id: {
		ID: sum[:], HashFunc: crypto.SHA256, PublicKey: k.Public, SignatureHashFunc: hf,
		ValidityPeriodStart: time.Unix(0, 0),
	}}}
}
