// Package verifytest signs images in an in-process registry the way cosign
// does, with keys the test generates, for tests of every package that
// verifies signatures (verify, render, the CLI, the plugin, httpapi):
//
//	host := verifytest.NewRegistry(t, true)   // with the OCI 1.1 referrers API
//	digest := verifytest.PushImage(t, host, "operators/widget", "v1")
//	key := verifytest.NewKey(t, verifytest.ECDSA)
//	verifytest.SignBundle(t, host, "operators/widget", digest, key)  // cosign v3
//	verifytest.SignTag(t, host, "operators/widget", digest, key)     // legacy .sig
//	policy := verifytest.Policy(t, verifytest.Scope(host, "enforce", key))
//
// The registry listens on 127.0.0.1 over plain HTTP (go-containerregistry
// talks HTTP to 127.0.0.1 without being told). Signing never touches the
// network beyond that registry. NewFaultyRegistry answers chosen requests
// itself (stalls, lies); Rekor stands in for a transparency log (legacy
// bundle annotations); GPGKey, Lookaside and GPGScope cover GPG simple
// signing.
package verifytest

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	jsoncanonicalizer "github.com/cyberphone/json-canonicalization/go/src/webpki.org/jsoncanonicalizer"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/olm-cmp/olm-cmp/internal/trust"
)

// Media types cosign writes.
const (
	BundleMediaType        = "application/vnd.dev.sigstore.bundle.v0.3+json"
	SimpleSigningMediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	PredicateSign          = "https://sigstore.dev/cosign/sign/v1"
)

// NewRegistry starts an in-process registry, with the OCI 1.1 referrers API
// or without it (then referrers live under the sha256-<hex> fallback tag).
// It stops when the test ends.
func NewRegistry(t testing.TB, referrers bool) string {
	return NewFaultyRegistry(t, referrers, nil)
}

// NewFaultyRegistry is NewRegistry with fault consulted first on every
// request: when it returns true it has answered the request itself (a
// stall, an endless body, a lie), else the registry answers.
func NewFaultyRegistry(t testing.TB, referrers bool, fault func(w http.ResponseWriter, r *http.Request) bool) string {
	t.Helper()
	reg := registry.New(registry.WithReferrersSupport(referrers), registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fault != nil && fault(w, r) {
			return
		}
		reg.ServeHTTP(w, r)
	}))
	// A stalled handler must not hold up Close: connections are cut.
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return strings.TrimPrefix(srv.URL, "http://")
}

// PushImage pushes a small random image as host/repo:tag and returns its
// manifest digest.
func PushImage(t testing.TB, host, repo, tag string) string {
	t.Helper()
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(host + "/" + repo + ":" + tag)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// Algorithm is a key type.
type Algorithm string

const (
	ECDSA   Algorithm = "ecdsa"
	RSA     Algorithm = "rsa"
	Ed25519 Algorithm = "ed25519"
)

// Key is a generated signing key.
type Key struct {
	priv crypto.Signer
	// PEM is the public key, as a policy holds it.
	PEM string
	// Name is the name Scope gives the key in a policy.
	Name string
}

var keyCount int

// NewKey generates a key of the given type (RSA keys are 2048 bits).
func NewKey(t testing.TB, alg Algorithm) *Key {
	t.Helper()
	var priv crypto.Signer
	var err error
	switch alg {
	case ECDSA:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case RSA:
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case Ed25519:
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	default:
		t.Fatalf("unknown key type %q", alg)
	}
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	keyCount++
	return &Key{
		priv: priv,
		PEM:  string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})),
		Name: fmt.Sprintf("%s-%d", alg, keyCount),
	}
}

// Sign signs data as cosign does with this key: ECDSA (ASN.1) and RSA
// (PKCS #1 v1.5) over its SHA-256, Ed25519 over the data itself.
func (k *Key) Sign(t testing.TB, data []byte) []byte {
	t.Helper()
	var sig []byte
	var err error
	if _, ok := k.priv.(ed25519.PrivateKey); ok {
		sig, err = k.priv.Sign(rand.Reader, data, crypto.Hash(0))
	} else {
		h := sha256.Sum256(data)
		sig, err = k.priv.Sign(rand.Reader, h[:], crypto.SHA256)
	}
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// Options change what a signature says, to make the wrong ones.
type Options struct {
	// Digest is the digest the signature names (default: the image's).
	Digest string
	// Ref is the repository the signature names (default: host/repo).
	Ref string
	// Payload replaces the signed payload's bytes (legacy format).
	Payload []byte
	// Rekor adds a transparency-log entry signed by this log (legacy).
	Rekor *Rekor
	// RekorMangle changes the entry's annotation text before it is pushed.
	RekorMangle func(string) string
	// Predicate is the in-toto predicate type (default: cosign's signing one).
	Predicate string
}

// Statement is the in-toto statement cosign v3 signs for an image: its
// subject is the digest, without a name as cosign writes it when ref is
// "", named ref otherwise.
func Statement(ref, digest, predicate string) []byte {
	if predicate == "" {
		predicate = PredicateSign
	}
	subject := map[string]any{"digest": map[string]string{"sha256": strings.TrimPrefix(digest, "sha256:")}}
	if ref != "" {
		subject["name"] = ref
	}
	st := map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []any{subject},
		"predicateType": predicate,
		"predicate":     map[string]any{},
	}
	b, _ := json.Marshal(st)
	return b
}

// BundleJSON returns a Sigstore bundle (v0.3, public key, DSSE over the
// statement, no transparency log) as cosign v3 writes with --key and
// --tlog-upload=false. It is built from the protobuf-specs types (not
// sigstore-go's sign package, which links the frozen golang.org/x/crypto/openpgp
// that govulncheck reports).
func BundleJSON(t testing.TB, k *Key, statement []byte) []byte {
	t.Helper()
	raw, err := protojson.Marshal(bundleProto(t, k, statement))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// KeylessBundleJSON is BundleJSON for a keyless signer, as cosign v3's
// `cosign sign` without --key writes it: the statement signed (DSSE) with
// the key of a Fulcio-issued leaf certificate, which the bundle carries
// instead of a key hint. It has no transparency-log entry and no signed
// timestamp: a trusted root that lists a Rekor log or a timestamp
// authority refuses it.
func KeylessBundleJSON(t testing.TB, cert *x509.Certificate, priv crypto.Signer, statement []byte) []byte {
	t.Helper()
	pb := dsseBundle(t, &Key{priv: priv}, statement, &protobundle.VerificationMaterial{
		Content: &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: cert.Raw}},
	})
	raw, err := protojson.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// bundleProto is BundleJSON's bundle, before it is written.
func bundleProto(t testing.TB, k *Key, statement []byte) *protobundle.Bundle {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(k.priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	hint := sha256.Sum256(der)
	return dsseBundle(t, k, statement, &protobundle.VerificationMaterial{
		Content: &protobundle.VerificationMaterial_PublicKey{PublicKey: &protocommon.PublicKeyIdentifier{
			Hint: base64.StdEncoding.EncodeToString(hint[:]),
		}},
	})
}

// dsseBundle is a bundle of the statement signed by k, with vm.
func dsseBundle(t testing.TB, k *Key, statement []byte, vm *protobundle.VerificationMaterial) *protobundle.Bundle {
	t.Helper()
	const payloadType = "application/vnd.in-toto+json"
	// DSSE signs the pre-authentication encoding, never the bare payload.
	pae := fmt.Sprintf("DSSEv1 %d %s %d %s", len(payloadType), payloadType, len(statement), statement)
	pb := &protobundle.Bundle{
		MediaType:            BundleMediaType,
		VerificationMaterial: vm,
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{
			Payload:     statement,
			PayloadType: payloadType,
			Signatures:  []*protodsse.Signature{{Sig: k.Sign(t, []byte(pae))}},
		}},
	}
	return pb
}

// SignBundle signs host/repo@digest in cosign v3's format: a Sigstore bundle
// pushed as an OCI 1.1 referrer of the image. It returns the referrer's
// digest.
func SignBundle(t testing.TB, host, repo, digest string, k *Key, o ...Options) string {
	t.Helper()
	var opt Options
	if len(o) > 0 {
		opt = o[0]
	}
	// cosign v3 names no repository in the statement: only a test that
	// wants one (Options.Ref) gets it.
	d := digest
	if opt.Digest != "" {
		d = opt.Digest
	}
	return PushReferrer(t, host, repo, digest, BundleMediaType, BundleJSON(t, k, Statement(opt.Ref, d, opt.Predicate)))
}

// PushReferrer pushes an OCI 1.1 artifact manifest (artifactType, empty
// config, one layer holding blob) whose subject is host/repo@digest, and
// returns its digest.
func PushReferrer(t testing.TB, host, repo, digest, artifactType string, blob []byte) string {
	t.Helper()
	return PushReferrerAnnotated(t, host, repo, digest, artifactType, blob,
		map[string]string{"dev.sigstore.bundle.content": "dsse-envelope", "dev.sigstore.bundle.predicateType": PredicateSign})
}

// Attest pushes an attestation of host/repo@digest as cosign v3 does (cosign
// attest --key): a Sigstore bundle referrer whose statement, and the
// manifest's annotation, name predicate. It returns the referrer's digest.
func Attest(t testing.TB, host, repo, digest string, k *Key, predicate string) string {
	t.Helper()
	return PushReferrerAnnotated(t, host, repo, digest, BundleMediaType, BundleJSON(t, k, Statement("", digest, predicate)),
		map[string]string{"dev.sigstore.bundle.content": "dsse-envelope", "dev.sigstore.bundle.predicateType": predicate})
}

// PushReferrerAnnotated is PushReferrer with the manifest's annotations.
func PushReferrerAnnotated(t testing.TB, host, repo, digest, artifactType string, blob []byte, annotations map[string]string) string {
	t.Helper()
	r, err := name.NewRepository(host + "/" + repo)
	if err != nil {
		t.Fatal(err)
	}
	subject, err := remote.Get(r.Digest(digest))
	if err != nil {
		t.Fatal(err)
	}
	layer := static.NewLayer(blob, types.MediaType(artifactType))
	if err := remote.WriteLayer(r, layer); err != nil {
		t.Fatal(err)
	}
	cfg := static.NewLayer([]byte("{}"), "application/vnd.oci.empty.v1+json")
	if err := remote.WriteLayer(r, cfg); err != nil {
		t.Fatal(err)
	}
	ld, _ := layer.Digest()
	cd, _ := cfg.Digest()
	m := map[string]any{
		"schemaVersion": 2,
		"mediaType":     types.OCIManifestSchema1,
		"artifactType":  artifactType,
		"config":        map[string]any{"mediaType": "application/vnd.oci.empty.v1+json", "digest": cd.String(), "size": 2},
		"layers":        []any{map[string]any{"mediaType": artifactType, "digest": ld.String(), "size": len(blob)}},
		"subject":       map[string]any{"mediaType": subject.MediaType, "digest": digest, "size": subject.Size},
		"annotations":   annotations,
	}
	raw, _ := json.Marshal(m)
	sum := sha256.Sum256(raw)
	md := "sha256:" + hex.EncodeToString(sum[:])
	if err := remote.Put(r.Digest(md), RawManifest{Bytes: raw, Type: types.OCIManifestSchema1}); err != nil {
		t.Fatal(err)
	}
	return md
}

// RawManifest pushes exact manifest bytes with remote.Put.
type RawManifest struct {
	Bytes []byte
	Type  types.MediaType
}

func (m RawManifest) RawManifest() ([]byte, error)        { return m.Bytes, nil }
func (m RawManifest) MediaType() (types.MediaType, error) { return m.Type, nil }

// SimpleSigning is cosign's legacy payload for ref@digest.
func SimpleSigning(ref, digest string) []byte {
	p := map[string]any{"critical": map[string]any{
		"identity": map[string]string{"docker-reference": ref},
		"image":    map[string]string{"docker-manifest-digest": digest},
		"type":     "cosign container image signature",
	}, "optional": nil}
	b, _ := json.Marshal(p)
	return b
}

// SigTag returns the legacy signature tag of a digest.
func SigTag(digest string) string { return strings.Replace(digest, ":", "-", 1) + ".sig" }

// SignTag signs host/repo@digest in cosign's legacy format: a layer appended
// to the sha256-<hex>.sig manifest (created if missing), the payload as its
// blob and the signature as its annotation.
func SignTag(t testing.TB, host, repo, digest string, k *Key, o ...Options) {
	t.Helper()
	var opt Options
	if len(o) > 0 {
		opt = o[0]
	}
	ref := host + "/" + repo
	if opt.Ref != "" {
		ref = opt.Ref
	}
	d := digest
	if opt.Digest != "" {
		d = opt.Digest
	}
	payload := SimpleSigning(ref, d)
	if opt.Payload != nil {
		payload = opt.Payload
	}
	sig := k.Sign(t, payload)
	ann := map[string]string{"dev.cosignproject.cosign/signature": base64.StdEncoding.EncodeToString(sig)}
	if opt.Rekor != nil {
		b := opt.Rekor.Entry(t, payload, sig, k)
		if opt.RekorMangle != nil {
			b = opt.RekorMangle(b)
		}
		ann["dev.sigstore.cosign/bundle"] = b
	}
	AppendSigLayers(t, host, repo, digest, mutate.Addendum{
		Layer: static.NewLayer(payload, SimpleSigningMediaType), Annotations: ann,
		MediaType: SimpleSigningMediaType,
	})
}

// AppendSigLayers appends layers to the .sig manifest of digest.
func AppendSigLayers(t testing.TB, host, repo, digest string, adds ...mutate.Addendum) {
	t.Helper()
	tag, err := name.NewTag(host + "/" + repo + ":" + SigTag(digest))
	if err != nil {
		t.Fatal(err)
	}
	var base v1.Image = mutate.MediaType(mutate.ConfigMediaType(empty.Image, types.OCIConfigJSON), types.OCIManifestSchema1)
	if img, err := remote.Image(tag); err == nil {
		base = img
	}
	img, err := mutate.Append(base, adds...)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img); err != nil {
		t.Fatal(err)
	}
}

// Rekor is a stand-in transparency log: its key signs entries' timestamps
// (cosign's dev.sigstore.cosign/bundle annotation) as Rekor's does.
type Rekor struct {
	priv *ecdsa.PrivateKey
	// PEM is the log's public key, as a policy's rekor entry holds it.
	PEM   string
	logID string
}

// NewRekor generates a log key.
func NewRekor(t testing.TB) *Rekor {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	sum := sha256.Sum256(der)
	return &Rekor{priv: priv, PEM: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})),
		logID: hex.EncodeToString(sum[:])}
}

// Entry returns the dev.sigstore.cosign/bundle annotation for a signature:
// a hashedrekord entry of payload, sig and k's public key, with the log's
// signed entry timestamp.
func (r *Rekor) Entry(t testing.TB, payload, sig []byte, k *Key) string {
	t.Helper()
	ps := sha256.Sum256(payload)
	body := map[string]any{"apiVersion": "0.0.1", "kind": "hashedrekord", "spec": map[string]any{
		"data": map[string]any{"hash": map[string]string{"algorithm": "sha256", "value": hex.EncodeToString(ps[:])}},
		"signature": map[string]any{"content": base64.StdEncoding.EncodeToString(sig),
			"publicKey": map[string]string{"content": base64.StdEncoding.EncodeToString([]byte(k.PEM))}},
	}}
	bb, _ := json.Marshal(body)
	p := map[string]any{"body": base64.StdEncoding.EncodeToString(bb), "integratedTime": 1700000000, "logIndex": 42, "logID": r.logID}
	out, _ := json.Marshal(map[string]any{"SignedEntryTimestamp": r.set(t, bb, 1700000000, 42), "Payload": p})
	return string(out)
}

// set is the log's signed entry timestamp of an entry: its signature over
// the canonical JSON of the body, integrated time, index and log ID.
func (r *Rekor) set(t testing.TB, body []byte, integrated, index int64) []byte {
	t.Helper()
	p := map[string]any{"body": base64.StdEncoding.EncodeToString(body), "integratedTime": integrated, "logIndex": index, "logID": r.logID}
	pj, _ := json.Marshal(p)
	canon, err := jsoncanonicalizer.Transform(pj)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(canon)
	set, err := ecdsa.SignASN1(rand.Reader, r.priv, h[:])
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// Scope writes one policy scope (YAML) trusting keys inline.
func Scope(match, mode string, keys ...*Key) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "- match: %q\n  mode: %s\n", match, mode)
	if len(keys) > 0 {
		b.WriteString("  keys:\n")
	}
	for _, k := range keys {
		fmt.Fprintf(&b, "  - name: %s\n    pem: |\n%s", k.Name, indent(k.PEM, "      "))
	}
	return b.String()
}

// WithRekor adds a rekor key to a scope written by Scope.
func WithRekor(scope string, r *Rekor) string {
	return scope + "  rekor:\n    name: test-rekor\n    pem: |\n" + indent(r.PEM, "      ")
}

func indent(s, pre string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString(pre + l + "\n")
	}
	return b.String()
}

// PolicyText is a whole policy file holding the scopes.
func PolicyText(scopes ...string) string {
	return "apiVersion: " + trust.APIVersion + "\nkind: " + trust.Kind + "\nscopes:\n" + strings.Join(scopes, "")
}

// Policy writes the scopes as a policy file in a temporary directory and
// loads it.
func Policy(t testing.TB, scopes ...string) *trust.Policy {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trust.yaml")
	if err := os.WriteFile(path, []byte(PolicyText(scopes...)), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := trust.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
