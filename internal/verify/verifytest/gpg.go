package verifytest

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// GPGKey is a generated OpenPGP key, for GPG simple signing.
type GPGKey struct {
	entity *openpgp.Entity
	// Armored is the public key, as a policy's gpg.keys entry holds it.
	Armored string
	// ID is the key ID in hex, as messages print it.
	ID string
}

// NewGPGKey generates an OpenPGP key (RSA, go-crypto's default).
func NewGPGKey(t testing.TB) *GPGKey {
	t.Helper()
	e, err := openpgp.NewEntity("olm-cmp test", "", "test@example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w, err := armor.Encode(&b, openpgp.PublicKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Serialize(w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return &GPGKey{entity: e, Armored: b.String() + "\n", ID: fmt.Sprintf("%016X", e.PrimaryKey.KeyId)}
}

// Sign returns an OpenPGP signed message holding payload, as `skopeo copy
// --sign-by` stores it on a lookaside server.
func (k *GPGKey) Sign(t testing.TB, payload []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := openpgp.Sign(&b, k.entity, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(payload); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// AtomicSignature is containers/image's simple-signing payload for
// ref@digest.
func AtomicSignature(ref, digest string) []byte {
	return []byte(fmt.Sprintf(`{"critical":{"identity":{"docker-reference":%q},"image":{"docker-manifest-digest":%q},"type":"atomic container signature"},"optional":{"creator":"olm-cmp test"}}`, ref, digest))
}

// Lookaside is an in-process lookaside server (containers/image's layout:
// <base>/<repository path>@sha256=<hex>/signature-<n>).
type Lookaside struct {
	// URL is the base URL a policy's gpg.lookaside names.
	URL  string
	mu   sync.Mutex
	sigs map[string][]byte
}

// NewLookaside starts a lookaside server; it stops when the test ends.
func NewLookaside(t testing.TB) *Lookaside {
	t.Helper()
	l := &Lookaside{sigs: map[string][]byte{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		b, ok := l.sigs[strings.TrimPrefix(r.URL.Path, "/sigstore/")]
		l.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	l.URL = srv.URL + "/sigstore"
	return l
}

// Add stores data as the next signature of path@digest (path is the
// repository without its registry).
func (l *Lookaside) Add(path, digest string, data []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	base := path + "@" + strings.Replace(digest, ":", "=", 1) + "/signature-"
	n := 1
	for ; ; n++ {
		if _, ok := l.sigs[fmt.Sprint(base, n)]; !ok {
			break
		}
	}
	l.sigs[fmt.Sprint(base, n)] = data
}

// GPGScope writes a policy scope (YAML) trusting GPG keys on a lookaside
// server.
func GPGScope(match, mode, lookaside string, keys ...*GPGKey) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- match: %q\n  mode: %s\n  gpg:\n    lookaside: %s\n    keys:\n", match, mode, lookaside)
	for i, k := range keys {
		fmt.Fprintf(&b, "    - name: gpg-%d\n      armored: |\n%s", i+1, indent(k.Armored, "        "))
	}
	return b.String()
}

// SignCompressed is Sign with the message compressed (as gpg writes it by
// default), the payload written n times: a small message whose body is
// large.
func (k *GPGKey) SignCompressed(t testing.TB, payload []byte, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	cw, err := packet.SerializeCompressed(nopCloser{&b}, packet.CompressionZLIB, &packet.CompressionConfig{Level: 9})
	if err != nil {
		t.Fatal(err)
	}
	w, err := openpgp.Sign(cw, k.entity, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		if _, err := w.Write(payload); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type nopCloser struct{ *bytes.Buffer }

func (nopCloser) Close() error { return nil }

// Put stores data as signature n of path@digest, replacing what was there.
func (l *Lookaside) Put(path, digest string, n int, data []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sigs[fmt.Sprintf("%s@%s/signature-%d", path, strings.Replace(digest, ":", "=", 1), n)] = data
}
