package verify_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/olm-cmp/olm-cmp/internal/trust"
	"github.com/olm-cmp/olm-cmp/internal/verify"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

// hostile is one case of issue 21's item 6: what the registry holds, and a
// word the one-line refusal must say.
type hostile struct {
	name string
	// fault, when set, answers requests before the registry does.
	fault func(w http.ResponseWriter, r *http.Request) bool
	// setup signs or plants the hostile content.
	setup   func(t *testing.T, host, repo, digest string, k *verifytest.Key, rk *verifytest.Rekor)
	rekor   bool
	want    string
	timeout time.Duration
}

func putRaw(t *testing.T, ref string, raw []byte, mt types.MediaType) {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Put(r, verifytest.RawManifest{Bytes: raw, Type: mt}); err != nil {
		t.Fatal(err)
	}
}

func pushBlob(t *testing.T, host, repo string, blob []byte, mt types.MediaType) (string, int) {
	t.Helper()
	r, _ := name.NewRepository(host + "/" + repo)
	l := static.NewLayer(blob, mt)
	if err := remote.WriteLayer(r, l); err != nil {
		t.Fatal(err)
	}
	d, _ := l.Digest()
	return d.String(), len(blob)
}

// sigManifest writes a .sig manifest of n layers, all the same signed
// payload, with declared size (0: the real one).
func sigManifest(t *testing.T, host, repo, digest string, k *verifytest.Key, n int, declared int64) {
	t.Helper()
	payload := verifytest.SimpleSigning(host+"/"+repo, digest)
	pd, size := pushBlob(t, host, repo, payload, verifytest.SimpleSigningMediaType)
	if declared > 0 {
		size = int(declared)
	}
	cd, _ := pushBlob(t, host, repo, []byte("{}"), "application/vnd.oci.image.config.v1+json")
	sig := base64.StdEncoding.EncodeToString(k.Sign(t, payload))
	layers := make([]any, n)
	for i := range layers {
		layers[i] = map[string]any{"mediaType": verifytest.SimpleSigningMediaType, "digest": pd, "size": size,
			"annotations": map[string]string{"dev.cosignproject.cosign/signature": sig}}
	}
	raw, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": types.OCIManifestSchema1,
		"config": map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cd, "size": 2},
		"layers": layers})
	putRaw(t, host+"/"+repo+":"+verifytest.SigTag(digest), raw, types.OCIManifestSchema1)
}

func TestHostile(t *testing.T) {
	var blobReads atomic.Int64
	hugeDigest := ""
	cases := []hostile{
		{name: "signature manifest with 5000 layers", setup: func(t *testing.T, host, repo, digest string, k *verifytest.Key, _ *verifytest.Rekor) {
			sigManifest(t, host, repo, digest, k, 5000, 0)
		}, want: "more than the 262144 a signature manifest may have"},
		{name: "signature manifest with 200 layers", setup: func(t *testing.T, host, repo, digest string, k *verifytest.Key, _ *verifytest.Rekor) {
			sigManifest(t, host, repo, digest, k, 200, 0)
		}, want: "has 200 layers, more than the 64 signatures olm-cmp reads"},
		{name: "100 MB signature blob (declared)", setup: func(t *testing.T, host, repo, digest string, k *verifytest.Key, _ *verifytest.Rekor) {
			sigManifest(t, host, repo, digest, k, 1, 100<<20)
		}, want: "is 104857600 bytes, more than the 1048576 a signature may have"},
		{name: "100 MB signature blob (served, descriptor lies)",
			fault: func(w http.ResponseWriter, r *http.Request) bool {
				if hugeDigest == "" || !strings.HasSuffix(r.URL.Path, "/blobs/"+hugeDigest) {
					return false
				}
				w.Header().Set("Content-Length", fmt.Sprint(100<<20))
				buf := make([]byte, 64<<10)
				for sent := 0; sent < 100<<20; sent += len(buf) {
					n, err := w.Write(buf)
					blobReads.Add(int64(n))
					if err != nil {
						return true
					}
				}
				return true
			},
			setup: func(t *testing.T, host, repo, digest string, k *verifytest.Key, _ *verifytest.Rekor) {
				sigManifest(t, host, repo, digest, k, 1, 0)
				payload := verifytest.SimpleSigning(host+"/"+repo, digest)
				sum := sha256.Sum256(payload)
				hugeDigest = "sha256:" + hex.EncodeToString(sum[:])
			}, want: "is more than 1048576 bytes"},
		{name: "referrers index pointing at itself", setup: func(t *testing.T, host, repo, digest string, k *verifytest.Key, _ *verifytest.Rekor) {
			// The fallback tag's index lists the image itself and an index
			// that lists the fallback index back: nothing is followed twice.
			loop, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": types.OCIImageIndex,
				"manifests": []any{map[string]any{"mediaType": types.OCIImageIndex, "digest": digest, "size": 1,
					"artifactType": verifytest.BundleMediaType}}})
			sum := sha256.Sum256(loop)
			loopDigest := "sha256:" + hex.EncodeToString(sum[:])
			putRaw(t, host+"/"+repo+"@"+loopDigest, loop, types.OCIImageIndex)
			idx, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": types.OCIImageIndex,
				"manifests": []any{
					map[string]any{"mediaType": types.OCIImageIndex, "digest": loopDigest, "size": len(loop), "artifactType": verifytest.BundleMediaType},
					map[string]any{"mediaType": types.OCIManifestSchema1, "digest": digest, "size": 1, "artifactType": verifytest.BundleMediaType},
				}})
			putRaw(t, host+"/"+repo+":"+strings.Replace(digest, ":", "-", 1), idx, types.OCIImageIndex)
		}, want: "is an index, not an image manifest"},
		{name: "payload that is not JSON", setup: func(t *testing.T, host, repo, digest string, k *verifytest.Key, _ *verifytest.Rekor) {
			verifytest.SignTag(t, host, repo, digest, k, verifytest.Options{Payload: []byte("{not json")})
		}, want: "the payload is not a simple-signing JSON document"},
		{name: "signature for another digest", setup: func(t *testing.T, host, repo, digest string, k *verifytest.Key, _ *verifytest.Rekor) {
			verifytest.SignTag(t, host, repo, digest, k, verifytest.Options{Digest: "sha256:" + strings.Repeat("0", 64)})
		}, want: "but for another digest"},
		{name: "signature for another repository", setup: func(t *testing.T, host, repo, digest string, k *verifytest.Key, _ *verifytest.Rekor) {
			verifytest.SignBundle(t, host, repo, digest, k, verifytest.Options{Ref: "quay.io/attacker/tool"})
		}, want: "but for another repository"},
		{name: "bundle that is not JSON", setup: func(t *testing.T, host, repo, digest string, _ *verifytest.Key, _ *verifytest.Rekor) {
			verifytest.PushReferrer(t, host, repo, digest, verifytest.BundleMediaType, []byte("\x00\x01 not a bundle"))
		}, want: "a Sigstore bundle referrer is not JSON in the Sigstore bundle format"},
		{name: "truncated Rekor entry", rekor: true, setup: func(t *testing.T, host, repo, digest string, k *verifytest.Key, rk *verifytest.Rekor) {
			verifytest.SignTag(t, host, repo, digest, k, verifytest.Options{Rekor: rk, RekorMangle: func(s string) string { return s[:len(s)/2] }})
		}, want: "its transparency-log entry is truncated or not JSON"},
		{name: "Rekor entry for another signature", rekor: true, setup: func(t *testing.T, host, repo, digest string, k *verifytest.Key, rk *verifytest.Rekor) {
			other := verifytest.SimpleSigning(host+"/"+repo, "sha256:"+strings.Repeat("1", 64))
			entry := rk.Entry(t, other, k.Sign(t, other), k)
			verifytest.SignTag(t, host, repo, digest, k, verifytest.Options{Rekor: rk, RekorMangle: func(string) string { return entry }})
		}, want: "its transparency-log entry records another payload"},
		{name: "Rekor entry signed by another log", rekor: true, setup: func(t *testing.T, host, repo, digest string, k *verifytest.Key, _ *verifytest.Rekor) {
			verifytest.SignTag(t, host, repo, digest, k, verifytest.Options{Rekor: verifytest.NewRekor(t)})
		}, want: "is from another log"},
		{name: "registry stalls on the .sig tag", timeout: time.Second,
			fault: func(w http.ResponseWriter, r *http.Request) bool {
				if !strings.HasSuffix(r.URL.Path, ".sig") {
					return false
				}
				<-r.Context().Done()
				return true
			},
			setup: func(*testing.T, string, string, string, *verifytest.Key, *verifytest.Rekor) {},
			want:  "the registry did not answer in time while reading the sha256-"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			host := verifytest.NewFaultyRegistry(t, false, c.fault)
			repo := "ops/hostile"
			digest := verifytest.PushImage(t, host, repo, "v1")
			k := verifytest.NewKey(t, verifytest.ECDSA)
			rk := verifytest.NewRekor(t)
			c.setup(t, host, repo, digest, k, rk)
			scope := verifytest.Scope(host, "enforce", k)
			if c.rekor {
				scope = verifytest.WithRekor(scope, rk)
			}
			p := verifytest.Policy(t, scope)
			v := verify.New(p, verify.Options{Limits: verify.Limits{Timeout: c.timeout}})
			start := time.Now()
			res, err := v.Verify(context.Background(), host+"/"+repo, digest, false)
			took := time.Since(start)
			if err == nil || res.Verified() {
				t.Fatalf("verified: %+v", res)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || !strings.Contains(msg, digest) || !strings.Contains(msg, "fix: ") {
				t.Fatalf("got %q, want one line with %q", msg, c.want)
			}
			// Nothing was cached as verified: a second call checks again
			// and refuses again.
			if res2, err2 := v.Verify(context.Background(), host+"/"+repo, digest, false); err2 == nil || res2.Cached {
				t.Fatalf("second call: %+v, %v", res2, err2)
			}
			// Warn mode turns the same refusal into an unverified result.
			w := verify.New(verifytest.Policy(t, strings.Replace(scope, "mode: enforce", "mode: warn", 1)), verify.Options{Limits: verify.Limits{Timeout: c.timeout}})
			if wr, werr := w.Verify(context.Background(), host+"/"+repo, digest, false); werr != nil || wr.Verified() || wr.Mode != trust.Warn || !strings.Contains(wr.Problem, c.want) {
				t.Fatalf("warn: %+v, %v", wr, werr)
			}
			t.Logf("HOSTILE | %s | %s | %s", c.name, took.Round(time.Millisecond), msg)
		})
	}
	// Three checks (enforce, again, warn) each read at most the limit; what
	// the server counts also holds what the loopback socket buffered.
	if n := blobReads.Load(); n > 48<<20 {
		t.Errorf("the endless blob was sent for %d bytes", n)
	}
}
