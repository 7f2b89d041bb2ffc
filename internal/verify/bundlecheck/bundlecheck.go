// Package bundlecheck verifies cosign v3 Sigstore bundles with sigstore-go,
// in olm-cmp-check: the operation bundlejob describes, which
// internal/verify sends for each Sigstore bundle referrer it reads.
//
// sigstore-go's bundle and verify packages bring rekor's models and
// go-openapi's formats, whose initialisation every process linking them
// pays (internal/checkproc): only cmd/olm-cmp-check (through
// internal/checks) and tests may import this package, never olm-cmp.
//
// Nothing here is cached: a keyless verdict depends on the time it is
// made (certificate validity), and internal/verify keeps its successes.
package bundlecheck

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
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

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/verify/bundlejob"
)

// Handlers is this package's operation, for internal/checks.
func Handlers() map[string]checkproc.Handler {
	return map[string]checkproc.Handler{bundlejob.Op: handle}
}

func handle(_ context.Context, raw json.RawMessage) (any, error) {
	var in bundlejob.Input
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("the Sigstore bundle check's input does not decode: is %s the same build as olm-cmp?", checkproc.Executable)
	}
	return Verify(in)
}

// Verify verifies one bundle against the scope's trust: its keys first
// when the bundle is signed with a key, its keyless root and identities
// when it carries a certificate. An error means the input itself is
// unusable (olm-cmp never sends such); a bundle that does not verify is
// an Output with a Failure.
func Verify(in bundlejob.Input) (bundlejob.Output, error) {
	t, err := parseTrust(in)
	if err != nil {
		return bundlejob.Output{}, err
	}
	var b bundle.Bundle
	if err := b.UnmarshalJSON(in.Bundle); err != nil {
		why := "not JSON in the Sigstore bundle format"
		if json.Valid(in.Bundle) {
			why = "a JSON document, but not a Sigstore bundle of a version olm-cmp reads (v0.1 to v0.3)"
		}
		return fail(bundlejob.Malformed, "a Sigstore bundle referrer is "+why,
			"remove the bogus referrer and sign again with cosign v3"), nil
	}
	digest, _ := hex.DecodeString(strings.TrimPrefix(in.Digest, "sha256:"))
	artifact := sgverify.WithArtifactDigest("sha256", digest)
	vc, err := b.VerificationContent()
	if err != nil {
		return fail(bundlejob.Malformed, "a Sigstore bundle has no verification material", "sign again with cosign v3"), nil
	}
	if vc.PublicKey() != nil {
		return t.withKeys(&b, artifact), nil
	}
	if t.root == nil || len(in.Identities) == 0 {
		return fail(bundlejob.UnknownSigner, "signed keyless (Sigstore bundle with a certificate), but the scope has no keyless trusted root and identities",
			"add keyless.trustedRoot and keyless.identities to the scope if you trust the signer"), nil
	}
	res, err := t.keyless(&b, artifact, in.Identities)
	if err != nil {
		f := failureOf(err, "identity")
		// Name the identity that signed, rather than sigstore-go's account
		// of the last identity it compared with.
		if f.Kind == bundlejob.UnknownSigner && strings.HasPrefix(f.What, "signed keyless by an identity") {
			if cert := vc.Certificate(); cert != nil {
				if sum, err := certificate.SummarizeCertificate(cert); err == nil {
					f.What = fmt.Sprintf("signed keyless by %s (issuer %s), an identity the scope does not accept",
						untrusted(sum.SubjectAlternativeName), untrusted(sum.Issuer))
				}
			}
		}
		return bundlejob.Output{Failure: &f}, nil
	}
	return verified("identity "+identityOf(res), res), nil
}

// scopeTrust is an Input's trust, parsed.
type scopeTrust struct {
	keys  []key
	rekor *key
	root  root.TrustedMaterial
}

type key struct {
	name   string
	der    []byte
	public crypto.PublicKey
}

func parseTrust(in bundlejob.Input) (*scopeTrust, error) {
	var t scopeTrust
	for _, k := range in.Keys {
		pub, err := x509.ParsePKIXPublicKey(k.DER)
		if err != nil {
			return nil, fmt.Errorf("the scope's key %s does not parse in %s: is it the same build as olm-cmp?", echo.Quote(k.Name), checkproc.Executable)
		}
		t.keys = append(t.keys, key{k.Name, k.DER, pub})
	}
	if in.Rekor != nil {
		pub, err := x509.ParsePKIXPublicKey(in.Rekor)
		if err != nil {
			return nil, fmt.Errorf("the scope's Rekor key does not parse in %s: is it the same build as olm-cmp?", checkproc.Executable)
		}
		t.rekor = &key{der: in.Rekor, public: pub}
	}
	if in.TrustedRoot != nil {
		// The policy's loader parsed these very bytes already: an error
		// here is a mismatch of builds, not a bad file.
		tr, err := root.NewTrustedRootFromJSON(in.TrustedRoot)
		if err != nil {
			return nil, fmt.Errorf("the scope's trusted root does not parse in %s (%s): is it the same build as olm-cmp?", checkproc.Executable, oneLine(err.Error()))
		}
		t.root = tr
	}
	return &t, nil
}

// withKeys verifies a key-signed bundle with each of the scope's keys.
func (t *scopeTrust) withKeys(b *bundle.Bundle, artifact sgverify.ArtifactPolicyOption) bundlejob.Output {
	if len(t.keys) == 0 {
		return fail(bundlejob.UnknownSigner, "signed (Sigstore bundle) with a key, but the scope trusts only keyless identities",
			"add the signer's public key to the scope's keys if you trust it")
	}
	if entries, err := b.TlogEntries(); t.rekor != nil && (err != nil || len(entries) == 0) {
		return fail(bundlejob.Tlog, "a Sigstore bundle has no transparency-log entry, which the scope's Rekor key requires",
			"sign again with the transparency log on (cosign sign --tlog-upload=true against the Rekor instance whose key the scope names), or remove the scope's rekor")
	}
	var worst *bundlejob.Failure
	for _, k := range t.keys {
		res, err := t.withKey(b, k, artifact)
		if err == nil {
			return verified("key "+k.name, res)
		}
		if f := failureOf(err, "key"); worst == nil || rank[f.Kind] > rank[worst.Kind] {
			worst = &f
		}
	}
	if rank[worst.Kind] <= rank[bundlejob.UnknownSigner] {
		return bundlejob.Output{Failure: &bundlejob.Failure{Kind: bundlejob.UntrustedKey}}
	}
	return bundlejob.Output{Failure: worst}
}

// rank orders the failures of one bundle tried with several keys: the
// most telling is reported.
var rank = map[bundlejob.Kind]int{bundlejob.UnknownSigner: 1, bundlejob.Tlog: 2, bundlejob.Payload: 3}

// withKey verifies b with one public key, and the transparency log when
// the scope names a Rekor key.
func (t *scopeTrust) withKey(b *bundle.Bundle, k key, artifact sgverify.ArtifactPolicyOption) (*sgverify.VerificationResult, error) {
	ver, err := signature.LoadVerifier(k.public, crypto.SHA256)
	if err != nil {
		return nil, err
	}
	keyMaterial := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
		return root.NewExpiringKey(ver, time.Time{}, time.Time{}), nil
	})
	var tm root.TrustedMaterial = keyMaterial
	opts := []sgverify.VerifierOption{sgverify.WithNoObserverTimestamps()}
	if t.rekor != nil {
		tm = root.TrustedMaterialCollection{keyMaterial, rekorMaterial(t.rekor)}
		opts = []sgverify.VerifierOption{sgverify.WithTransparencyLog(1), sgverify.WithIntegratedTimestamps(1)}
	}
	v, err := sgverify.NewVerifier(tm, opts...)
	if err != nil {
		return nil, err
	}
	return v.Verify(b, sgverify.NewPolicy(artifact, sgverify.WithKey()))
}

// keyless verifies b against the scope's trusted root and identities.
func (t *scopeTrust) keyless(b *bundle.Bundle, artifact sgverify.ArtifactPolicyOption, ids []bundlejob.Identity) (*sgverify.VerificationResult, error) {
	tr := t.root
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
	for _, id := range ids {
		ci, err := sgverify.NewShortCertificateIdentity(id.Issuer, "", id.Subject, id.SubjectRegexp)
		if err != nil {
			return nil, err
		}
		popts = append(popts, sgverify.WithCertificateIdentity(ci))
	}
	return v.Verify(b, sgverify.NewPolicy(artifact, popts...))
}

// rekorLog is a trusted material holding only the scope's Rekor log.
type rekorLog struct {
	root.BaseTrustedMaterial
	logs map[string]*root.TransparencyLog
}

func (r *rekorLog) RekorLogs() map[string]*root.TransparencyLog { return r.logs }

func rekorMaterial(k *key) root.TrustedMaterial {
	sum := sha256.Sum256(k.der)
	id := hex.EncodeToString(sum[:])
	hf := crypto.SHA256
	if ec, ok := k.public.(*ecdsa.PublicKey); ok && ec.Curve.Params().BitSize == 384 {
		hf = crypto.SHA384
	}
	// sigstore-go refuses a signed entry timestamp from a log whose
	// validity period has no start ("rekor validity period start time not
	// set"): a policy's rekor key has no period, so it is valid from the
	// epoch on, as a trusted root without an end date.
	return &rekorLog{logs: map[string]*root.TransparencyLog{id: {
		ID: sum[:], HashFunc: crypto.SHA256, PublicKey: k.public, SignatureHashFunc: hf,
		ValidityPeriodStart: time.Unix(0, 0),
	}}}
}

// verified is the Output of a bundle whose signature verified: the signer
// and what the bundle signs.
func verified(signer string, res *sgverify.VerificationResult) bundlejob.Output {
	out := bundlejob.Output{Signer: signer}
	if st := res.Statement; st != nil {
		s := &bundlejob.Statement{PredicateType: st.PredicateType}
		for _, sub := range st.Subject {
			s.Subjects = append(s.Subjects, bundlejob.Subject{Name: sub.Name, SHA256: sub.Digest["sha256"]})
		}
		out.Statement = s
	}
	return out
}

func identityOf(res *sgverify.VerificationResult) string {
	if res.Signature != nil && res.Signature.Certificate != nil {
		s := res.Signature.Certificate
		return s.SubjectAlternativeName + " (" + s.Issuer + ")"
	}
	return "unknown"
}

// failureOf words a sigstore-go verification error.
func failureOf(err error, kind string) bundlejob.Failure {
	msg := echo.Short(oneLine(err.Error()))
	switch {
	case strings.Contains(msg, "artifact digest") || strings.Contains(msg, "provided artifact digests do not match"):
		return bundlejob.Failure{Kind: bundlejob.Payload, What: "a Sigstore bundle signed by a trusted signer is for another digest",
			Fix: "the signature was copied from another image: sign this digest"}
	case strings.Contains(msg, "transparency log") || strings.Contains(msg, "tlog") || strings.Contains(msg, "inclusion"):
		return bundlejob.Failure{Kind: bundlejob.Tlog, What: fmt.Sprintf("a Sigstore bundle's transparency-log entry does not verify (%s)", msg),
			Fix: "sign again with the transparency log on, against the Rekor instance the scope trusts"}
	case kind == "identity" && (strings.Contains(msg, "certificate identity") || strings.Contains(msg, "SAN") || strings.Contains(msg, "issuer")):
		return bundlejob.Failure{Kind: bundlejob.UnknownSigner, What: fmt.Sprintf("signed keyless by an identity the scope does not accept (%s)", msg),
			Fix: "add the signer's issuer and subject to keyless.identities if you trust it"}
	case kind == "identity":
		return bundlejob.Failure{Kind: bundlejob.UnknownSigner, What: fmt.Sprintf("a keyless Sigstore bundle does not verify against the scope's trusted root (%s)", msg),
			Fix: "check keyless.trustedRoot names the Sigstore instance the image was signed with"}
	}
	return bundlejob.Failure{Kind: bundlejob.UnknownSigner, What: fmt.Sprintf("a Sigstore bundle does not verify (%s)", msg), Fix: "sign again with one of the scope's keys"}
}

func fail(kind bundlejob.Kind, what, fix string) bundlejob.Output {
	return bundlejob.Output{Failure: &bundlejob.Failure{Kind: kind, What: what, Fix: fix}}
}

// oneLine collapses whitespace, so a message stays on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// untrusted quotes a value read from a signature, cut short.
func untrusted(s string) string { return echo.Quote(oneLine(s)) }
