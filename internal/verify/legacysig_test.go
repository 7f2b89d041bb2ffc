package verify

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"math/big"
	"testing"

	"github.com/sigstore/sigstore/pkg/signature"
)

// verifySignature accepts exactly what sigstore/sigstore's
// signature.LoadVerifier(pub, crypto.SHA256) accepts, which olm-cmp used
// before it stopped linking that package: every key type a policy takes,
// both ECDSA encodings, and none of the near misses.
func TestVerifySignatureAgreesWithSigstore(t *testing.T) {
	data := []byte(`{"critical":{"type":"cosign container image signature"}}`)
	digest := sha256.Sum256(data)
	ec256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ec384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	p1363 := func(k *ecdsa.PrivateKey) []byte {
		r, s, err := ecdsa.Sign(rand.Reader, k, digest[:])
		if err != nil {
			t.Fatal(err)
		}
		n := (k.Curve.Params().BitSize + 7) / 8
		out := make([]byte, 2*n)
		r.FillBytes(out[:n])
		s.FillBytes(out[n:])
		return out
	}
	asn := func(k *ecdsa.PrivateKey) []byte {
		sig, err := ecdsa.SignASN1(rand.Reader, k, digest[:])
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
	rsaSig, _ := rsa.SignPKCS1v15(rand.Reader, rk, crypto.SHA256, digest[:])
	pss, _ := rsa.SignPSS(rand.Reader, rk, crypto.SHA256, digest[:], nil)
	edSig := ed25519.Sign(ed, data)
	flip := func(b []byte) []byte { c := bytes.Clone(b); c[len(c)/2] ^= 1; return c }
	zeroSig := append(make([]byte, 32), big.NewInt(1).FillBytes(make([]byte, 32))...)
	cases := []struct {
		name string
		pub  crypto.PublicKey
		sig  []byte
		want bool
	}{
		{"ecdsa p256 asn1", &ec256.PublicKey, asn(ec256), true},
		{"ecdsa p256 p1363", &ec256.PublicKey, p1363(ec256), true},
		{"ecdsa p384 asn1", &ec384.PublicKey, asn(ec384), true},
		{"ecdsa p384 p1363", &ec384.PublicKey, p1363(ec384), true},
		{"ecdsa other key", &ec384.PublicKey, asn(ec256), false},
		{"ecdsa flipped", &ec256.PublicKey, flip(asn(ec256)), false},
		{"ecdsa p1363 flipped", &ec256.PublicKey, flip(p1363(ec256)), false},
		{"ecdsa odd length", &ec256.PublicKey, p1363(ec256)[1:], false},
		{"ecdsa r zero", &ec256.PublicKey, zeroSig, false},
		{"ecdsa empty", &ec256.PublicKey, nil, false},
		{"rsa pkcs1v15", &rk.PublicKey, rsaSig, true},
		{"rsa pss", &rk.PublicKey, pss, false},
		{"rsa flipped", &rk.PublicKey, flip(rsaSig), false},
		{"ed25519", ed.Public(), edSig, true},
		{"ed25519 flipped", ed.Public(), flip(edSig), false},
		{"ed25519 with rsa's signature", ed.Public(), rsaSig, false},
	}
	for _, c := range cases {
		ver, err := signature.LoadVerifier(c.pub, crypto.SHA256)
		if err != nil {
			t.Fatal(err)
		}
		sigstore := ver.VerifySignature(bytes.NewReader(c.sig), bytes.NewReader(data)) == nil
		if got := verifySignature(c.pub, c.sig, data); got != c.want || sigstore != c.want {
			t.Errorf("%s: verifySignature %v, sigstore %v, want %v", c.name, got, sigstore, c.want)
		}
	}
}

// BenchmarkVerifySignature: one legacy signature checked with the standard
// library (verifySignature) and with sigstore/sigstore's verifier, which
// olm-cmp no longer links, for an RSA key (Red Hat's) and ECDSA P-256
// (cosign's default).
func BenchmarkVerifySignature(b *testing.B) {
	data := []byte(`{"critical":{"identity":{"docker-reference":"quay.io/x"},"image":{"docker-manifest-digest":"sha256:00"},"type":"cosign container image signature"},"optional":null}`)
	digest := sha256.Sum256(data)
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	rsaSig, _ := rsa.SignPKCS1v15(rand.Reader, rk, crypto.SHA256, digest[:])
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecSig, _ := ecdsa.SignASN1(rand.Reader, ek, digest[:])
	for _, k := range []struct {
		name string
		pub  crypto.PublicKey
		sig  []byte
	}{{"rsa", &rk.PublicKey, rsaSig}, {"ecdsa", &ek.PublicKey, ecSig}} {
		b.Run(k.name+"/stdlib", func(b *testing.B) {
			for b.Loop() {
				if !verifySignature(k.pub, k.sig, data) {
					b.Fatal("does not verify")
				}
			}
		})
		b.Run(k.name+"/sigstore", func(b *testing.B) {
			for b.Loop() {
				ver, err := signature.LoadVerifier(k.pub, crypto.SHA256)
				if err != nil || ver.VerifySignature(bytes.NewReader(k.sig), bytes.NewReader(data)) != nil {
					b.Fatal("does not verify")
				}
			}
		})
	}
}
