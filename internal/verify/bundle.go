package verify

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/verify/bundlejob"
)

// PredicateSign is the in-toto predicate type of cosign v3's image
// signatures.
const PredicateSign = "https://sigstore.dev/cosign/sign/v1"

// verifyBundle verifies one Sigstore bundle against the scope: its keys
// first, then its keyless identities. sigstore-go does the verification in
// olm-cmp-check (internal/verify/bundlecheck), whose initialisation is too
// heavy for every olm-cmp process; what the bundle signs is checked here.
// A bundle olm-cmp-check could not check is not verified.
func (c *check) verifyBundle(data []byte, what string) (string, *failure) {
	in, err := json.Marshal(c.bundleInput(data))
	if err != nil {
		return "", c.helperFailure(what, err)
	}
	res, err := checkproc.Run(c.ctx, []checkproc.Job{{Op: bundlejob.Op, Input: in}})
	if err != nil {
		return "", c.helperFailure(what, err)
	}
	if res[0].Error != "" {
		return "", c.helperFailure(what, errors.New(res[0].Error))
	}
	var out bundlejob.Output
	if err := json.Unmarshal(res[0].Output, &out); err != nil || out.Signer == "" && out.Failure == nil {
		return "", c.helperFailure(what, fmt.Errorf("%s answered something that is not a verdict on a Sigstore bundle", checkproc.Executable))
	}
	if f := out.Failure; f != nil {
		if f.Kind == bundlejob.UntrustedKey {
			return "", &failure{rank: rankUnknownKey,
				what: "signed (Sigstore bundle) by a key the scope does not trust",
				fix:  fmt.Sprintf("add the signer's public key to the scope if you trust it (keys: %s), or sign with one of those keys", keyNames(c.scope))}
		}
		return "", &failure{rank: bundleRanks[f.Kind], what: f.What, fix: f.Fix}
	}
	if !c.scopeNames(out.Signer) {
		return "", &failure{rank: rankHelper, what: fmt.Sprintf("%s was not verified: %s answered the signer %s, which the scope names neither as a key nor as an identity", what, checkproc.Executable, untrusted(out.Signer)), fix: fmt.Sprintf("install %s from the same build beside olm-cmp (make build installs both); a program of another build or origin answered", checkproc.Executable)}
	}
	if f := c.checkStatement(out.Statement, out.Signer); f != nil {
		return "", f
	}
	return out.Signer, nil
}

// scopeNames reports whether signer, as olm-cmp-check words a verified
// bundle's, is one the scope trusts: "key <name>" of one of its keys, or
// "identity <subject> (<issuer>)" accepted by one of its identities. olm-cmp-check
// answers only for signers it verified against these, so a mismatch means
// another program answered (a stale or foreign olm-cmp-check): never
// verified on its word.
func (c *check) scopeNames(signer string) bool {
	if name, ok := strings.CutPrefix(signer, "key "); ok {
		for _, k := range c.scope.Keys {
			if k.Name == name {
				return true
			}
		}
		return false
	}
	id, ok := strings.CutPrefix(signer, "identity ")
	i := strings.LastIndex(id, " (")
	issuer, closed := strings.CutSuffix(id[max(i, 0):], ")")
	if !ok || i < 0 || !closed || c.scope.TrustedRootJSON == nil {
		return false
	}
	subject, issuer := id[:i], strings.TrimPrefix(issuer, " (")
	if subject == "" {
		return false
	}
	for _, id := range c.scope.Identities {
		if id.Issuer != issuer {
			continue
		}
		if id.SubjectRegexp != nil && id.SubjectRegexp.MatchString(subject) || id.SubjectRegexp == nil && id.Subject == subject {
			return true
		}
	}
	return false
}

// bundleRanks ranks olm-cmp-check's failures among the other signatures'.
var bundleRanks = map[bundlejob.Kind]int{
	bundlejob.Malformed:     rankMalformed,
	bundlejob.UnknownSigner: rankUnknownKey,
	bundlejob.Tlog:          rankTlog,
	bundlejob.Payload:       rankPayload,
}

// bundleInput is what olm-cmp-check needs of the scope to verify data.
func (c *check) bundleInput(data []byte) bundlejob.Input {
	s := c.scope
	in := bundlejob.Input{Bundle: data, Digest: c.digest, TrustedRoot: s.TrustedRootJSON}
	for _, k := range s.Keys {
		in.Keys = append(in.Keys, bundlejob.Key{Name: k.Name, DER: k.DER})
	}
	if s.Rekor != nil {
		in.Rekor = s.Rekor.DER
	}
	for _, id := range s.Identities {
		x := bundlejob.Identity{Issuer: id.Issuer, Subject: id.Subject}
		if id.SubjectRegexp != nil {
			x.SubjectRegexp = id.SubjectRegexp.String()
		}
		in.Identities = append(in.Identities, x)
	}
	return in
}

// helperFailure is a bundle olm-cmp-check did not check: missing, stopped,
// out of time, or of another build. The image is not verified by it, and
// the line says why: never silently passed over.
func (c *check) helperFailure(what string, err error) *failure {
	if c.ctx.Err() != nil {
		return &failure{rank: rankRegistry,
			what: fmt.Sprintf("%s was not checked in time (the signature check's bound is %s)", what, c.v.lim.Timeout),
			fix:  "retry; if it recurs, check the load on olm-cmp's host and the registry's health"}
	}
	if errors.Is(err, checkproc.ErrMissing) {
		return &failure{rank: rankHelper,
			what: fmt.Sprintf("%s was not checked: %s, which verifies Sigstore bundles for olm-cmp, is neither beside olm-cmp nor on PATH", what, checkproc.Executable),
			fix:  fmt.Sprintf("install %s beside olm-cmp (make build, or go install ./cmd/... from the repository)", checkproc.Executable)}
	}
	return &failure{rank: rankHelper,
		what: fmt.Sprintf("%s was not checked: %s", what, oneLine(err.Error())),
		fix:  helperFix(err)}
}

// helperFix is checkproc's fix for err; for the failures whose line
// already says it (not executable, another build), reinstalling both.
func helperFix(err error) string {
	if fix := checkproc.Fix(err); fix != "" {
		return fix
	}
	return "install " + checkproc.Executable + " and olm-cmp from the same build (make build installs both)"
}

// checkStatement checks the in-toto statement a verified bundle signs: the
// cosign signing predicate, and a subject naming the repository.
func (c *check) checkStatement(st *bundlejob.Statement, signer string) *failure {
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
	for _, s := range st.Subjects {
		if s.SHA256 != hexd {
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
