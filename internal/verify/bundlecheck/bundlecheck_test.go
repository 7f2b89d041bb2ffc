package bundlecheck_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"reflect"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/verify/bundlecheck"
	"github.com/olm-cmp/olm-cmp/internal/verify/bundlejob"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

const digest = "sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"

func keyOf(t *testing.T, k *verifytest.Key) bundlejob.Key {
	t.Helper()
	b, _ := pem.Decode([]byte(k.PEM))
	if _, err := x509.ParsePKIXPublicKey(b.Bytes); err != nil {
		t.Fatal(err)
	}
	return bundlejob.Key{Name: k.Name, DER: b.Bytes}
}

// TestOperation: the operation as olm-cmp-check serves it, JSON in and
// out: a key-signed bundle gives its signer and the statement it signs,
// for internal/verify to check; one signed by another key gives
// UntrustedKey, which verify words with the scope's keys.
func TestOperation(t *testing.T) {
	signer, other := verifytest.NewKey(t, verifytest.ECDSA), verifytest.NewKey(t, verifytest.ECDSA)
	blob := verifytest.BundleJSON(t, signer, verifytest.Statement("quay.io/x/y", digest, ""))
	op := bundlecheck.Handlers()[bundlejob.Op]
	for _, c := range []struct {
		name string
		keys []bundlejob.Key
		want bundlejob.Output
	}{
		{"trusted", []bundlejob.Key{keyOf(t, other), keyOf(t, signer)}, bundlejob.Output{Signer: "key " + signer.Name,
			Statement: &bundlejob.Statement{PredicateType: verifytest.PredicateSign,
				Subjects: []bundlejob.Subject{{Name: "quay.io/x/y", SHA256: strings.TrimPrefix(digest, "sha256:")}}}}},
		{"untrusted", []bundlejob.Key{keyOf(t, other)}, bundlejob.Output{Failure: &bundlejob.Failure{Kind: bundlejob.UntrustedKey}}},
		{"keyless only", nil, bundlejob.Output{Failure: &bundlejob.Failure{Kind: bundlejob.UnknownSigner,
			What: "signed (Sigstore bundle) with a key, but the scope trusts only keyless identities",
			Fix:  "add the signer's public key to the scope's keys if you trust it"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, _ := json.Marshal(bundlejob.Input{Bundle: blob, Digest: digest, Keys: c.keys})
			v, err := op(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			// Through JSON, as olm-cmp reads it.
			raw, _ := json.Marshal(v)
			var got bundlejob.Output
			if err := json.Unmarshal(raw, &got); err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %s (%v), want %+v", raw, err, c.want)
			}
		})
	}
}

// TestMalformed: bytes that are not a bundle are a Malformed failure in
// the words olm-cmp has always used; an input olm-cmp never sends (another
// build's) is an error saying so.
func TestMalformed(t *testing.T) {
	k := verifytest.NewKey(t, verifytest.ECDSA)
	for _, c := range []struct{ bundle, what string }{
		{"not json", "a Sigstore bundle referrer is not JSON in the Sigstore bundle format"},
		{`{"mediaType": "application/vnd.dev.sigstore.bundle.v9+json"}`, "a Sigstore bundle referrer is a JSON document, but not a Sigstore bundle of a version olm-cmp reads (v0.1 to v0.3)"},
	} {
		out, err := bundlecheck.Verify(bundlejob.Input{Bundle: []byte(c.bundle), Digest: digest, Keys: []bundlejob.Key{keyOf(t, k)}})
		if err != nil || out.Failure == nil || out.Failure.Kind != bundlejob.Malformed || out.Failure.What != c.what || out.Signer != "" {
			t.Errorf("%q: got %+v, %v", c.bundle, out, err)
		}
	}
	op := bundlecheck.Handlers()[bundlejob.Op]
	for in, want := range map[string]string{
		`[1]`: "the Sigstore bundle check's input does not decode",
		`{"keys": [{"name": "k", "der": "AAAA"}]}`: `the scope's key "k" does not parse in olm-cmp-check: is it the same build as olm-cmp?`,
		`{"trustedRoot": "e30="}`:                  "the scope's trusted root does not parse in olm-cmp-check",
	} {
		if _, err := op(context.Background(), json.RawMessage(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", in, err, want)
		}
	}
}
