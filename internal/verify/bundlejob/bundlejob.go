// Package bundlejob is the check of one cosign v3 Sigstore bundle as
// olm-cmp-check runs it: its operation name, what internal/verify sends
// (the bundle's bytes, the image's digest and what the scope trusts) and
// what comes back (the signer and the statement it signed, or why it does
// not verify). internal/verify/bundlecheck answers it.
//
// This package must stay light, imported by internal/verify in every
// olm-cmp process: the standard library only. sigstore-go's bundle
// verification lives in bundlecheck, linked into olm-cmp-check alone
// (internal/checkproc says why).
package bundlejob

// Op is the operation's name in olm-cmp-check.
const Op = "sigstore-bundle"

// Input is one bundle to verify and the trust of the scope covering its
// image, in forms that cross a process boundary: keys as DER, the trusted
// root as the JSON the policy names.
type Input struct {
	// Bundle is the Sigstore bundle's JSON, as read from the registry.
	Bundle []byte `json:"bundle"`
	// Digest is the image's manifest digest, "sha256:<hex>": what the
	// bundle must sign.
	Digest string `json:"digest"`
	// Keys are the scope's public keys, in the policy's order.
	Keys []Key `json:"keys,omitempty"`
	// Rekor is the scope's Rekor public key (PKIX DER), when it names one:
	// a key-signed bundle must then carry a log entry signed by it.
	Rekor []byte `json:"rekor,omitempty"`
	// TrustedRoot is the scope's keyless trusted root (trusted_root.json),
	// Identities the keyless signers it accepts.
	TrustedRoot []byte     `json:"trustedRoot,omitempty"`
	Identities  []Identity `json:"identities,omitempty"`
}

// Key is one trusted public key: its name in the policy (what the signer
// is called) and its PKIX DER form.
type Key struct {
	Name string `json:"name"`
	DER  []byte `json:"der"`
}

// Identity is one keyless signer accepted: the OIDC issuer and the
// certificate's subject, exactly or by an anchored regular expression.
type Identity struct {
	Issuer        string `json:"issuer"`
	Subject       string `json:"subject,omitempty"`
	SubjectRegexp string `json:"subjectRegexp,omitempty"`
}

// Output is the verdict on one bundle: a Signer when its signature
// verified (with the Statement it signs, which internal/verify checks
// against the image it expects), or a Failure.
type Output struct {
	// Signer is "key <name>" or "identity <subject> (<issuer>)".
	Signer string `json:"signer,omitempty"`
	// Statement is the in-toto statement the verified bundle signs; nil
	// when it signs a blob.
	Statement *Statement `json:"statement,omitempty"`
	Failure   *Failure   `json:"failure,omitempty"`
}

// Statement is what internal/verify reads of a signed in-toto statement.
type Statement struct {
	PredicateType string    `json:"predicateType"`
	Subjects      []Subject `json:"subjects,omitempty"`
}

// Subject is one subject of a statement: its name (cosign v3 writes none)
// and its sha256 digest in hex.
type Subject struct {
	Name   string `json:"name,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

// Failure is why a bundle does not verify, worded for the user (What and
// Fix), and its Kind, which internal/verify ranks among the failures of
// the other signatures it tried.
type Failure struct {
	Kind Kind   `json:"kind"`
	What string `json:"what,omitempty"`
	Fix  string `json:"fix,omitempty"`
}

// Kind is the sort of a Failure.
type Kind string

const (
	// Malformed: not a Sigstore bundle olm-cmp reads.
	Malformed Kind = "malformed"
	// UnknownSigner: signed by someone the scope does not trust.
	UnknownSigner Kind = "unknown-signer"
	// UntrustedKey: signed with a key, and none of the scope's keys
	// verifies it. It carries no words: internal/verify says it as it says
	// it for the other formats, naming the scope's keys.
	UntrustedKey Kind = "untrusted-key"
	// Tlog: the transparency-log entry the scope requires is missing or
	// does not verify.
	Tlog Kind = "tlog"
	// Payload: signed by a trusted signer, but for something else.
	Payload Kind = "payload"
)
