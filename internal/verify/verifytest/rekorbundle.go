package verifytest

import (
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"testing"

	jsoncanonicalizer "github.com/cyberphone/json-canonicalization/go/src/webpki.org/jsoncanonicalizer"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/rekor/pkg/util"
	"github.com/sigstore/sigstore/pkg/signature"
	"google.golang.org/protobuf/encoding/protojson"
)

// BundleJSON returns a Sigstore bundle (v0.3) as cosign v3 writes with
// --key and the transparency log on, against this log: BundleJSON's DSSE
// envelope, and a Rekor v1 dsse 0.0.1 entry of it with the log's signed
// entry timestamp and an inclusion proof (a tree of this one entry) whose
// checkpoint the log signed.
func (r *Rekor) BundleJSON(t testing.TB, k *Key, statement []byte) []byte {
	t.Helper()
	pb := bundleProto(t, k, statement)
	env := pb.GetDsseEnvelope()
	envJSON, err := json.Marshal(map[string]any{"payload": base64.StdEncoding.EncodeToString(env.Payload),
		"payloadType": env.PayloadType,
		"signatures":  []any{map[string]string{"sig": base64.StdEncoding.EncodeToString(env.Signatures[0].Sig)}}})
	if err != nil {
		t.Fatal(err)
	}
	eh, ph := sha256.Sum256(envJSON), sha256.Sum256(env.Payload)
	bodyJSON, _ := json.Marshal(map[string]any{"apiVersion": "0.0.1", "kind": "dsse", "spec": map[string]any{
		"envelopeHash": map[string]string{"algorithm": "sha256", "value": hex.EncodeToString(eh[:])},
		"payloadHash":  map[string]string{"algorithm": "sha256", "value": hex.EncodeToString(ph[:])},
		"signatures": []any{map[string]string{
			"signature": base64.StdEncoding.EncodeToString(env.Signatures[0].Sig),
			"verifier":  base64.StdEncoding.EncodeToString([]byte(k.PEM))}},
	}})
	body, err := jsoncanonicalizer.Transform(bodyJSON)
	if err != nil {
		t.Fatal(err)
	}
	const integrated, index = 1700000000, 0
	set := r.set(t, body, integrated, index)
	// A tree of one leaf: its root is the leaf's hash (RFC 6962).
	leaf := sha256.Sum256(append([]byte{0}, body...))
	signer, err := signature.LoadSignerVerifier(r.priv, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	checkpoint, err := util.CreateAndSignCheckpoint(context.Background(), "rekor.test", 1193050959916656506, 1, leaf[:], signer)
	if err != nil {
		t.Fatal(err)
	}
	logID, _ := hex.DecodeString(r.logID)
	pb.VerificationMaterial.TlogEntries = []*protorekor.TransparencyLogEntry{{
		LogIndex:          index,
		LogId:             &protocommon.LogId{KeyId: logID},
		KindVersion:       &protorekor.KindVersion{Kind: "dsse", Version: "0.0.1"},
		IntegratedTime:    integrated,
		InclusionPromise:  &protorekor.InclusionPromise{SignedEntryTimestamp: set},
		InclusionProof:    &protorekor.InclusionProof{LogIndex: index, RootHash: leaf[:], TreeSize: 1, Checkpoint: &protorekor.Checkpoint{Envelope: string(checkpoint)}},
		CanonicalizedBody: body,
	}}
	raw, err := protojson.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// SignBundleRekor is SignBundle with r's transparency-log entry.
func SignBundleRekor(t testing.TB, host, repo, digest string, k *Key, r *Rekor) string {
	t.Helper()
	return PushReferrer(t, host, repo, digest, BundleMediaType, r.BundleJSON(t, k, Statement("", digest, "")))
}
