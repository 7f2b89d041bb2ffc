package verify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/olm-cmp/olm-cmp/internal/verify"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

// orderedReferrers is a registry that lists an image's referrers in the
// order the test gives, with the empty config type as their artifactType
// and without annotations, as registries predating OCI 1.1's final text
// do: olm-cmp must open each to learn what it is.
type orderedReferrers struct {
	mu    sync.Mutex
	host  string
	list  []map[string]any
	order []string
}

func newOrderedReferrers(t *testing.T) *orderedReferrers {
	o := &orderedReferrers{}
	o.host = verifytest.NewFaultyRegistry(t, true, func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.Contains(r.URL.Path, "/referrers/") {
			return false
		}
		o.mu.Lock()
		b, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": o.list})
		o.mu.Unlock()
		w.Header().Set("Content-Type", "application/vnd.oci.image.index.v1+json")
		w.Write(b)
		return true
	})
	return o
}

// add lists the referrer repo@d next.
func (o *orderedReferrers) add(t *testing.T, repo, d string) {
	t.Helper()
	ref, err := name.NewDigest(o.host + "/" + repo + "@" + d)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(ref)
	if err != nil {
		t.Fatal(err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.list = append(o.list, map[string]any{"mediaType": string(desc.MediaType), "digest": d, "size": desc.Size,
		"artifactType": "application/vnd.oci.empty.v1+json"})
}

// More attestations than MaxCandidates, listed before the signature, do not
// hide it: they are not signatures, so they are not candidates.
func TestAttestationsDoNotHideTheSignature(t *testing.T) {
	o := newOrderedReferrers(t)
	k := verifytest.NewKey(t, verifytest.ECDSA)
	d := verifytest.PushImage(t, o.host, "ops/a", "v1")
	for range verify.DefaultLimits.MaxCandidates + 4 {
		o.add(t, "ops/a", verifytest.Attest(t, o.host, "ops/a", d, k, "https://slsa.dev/provenance/v1"))
	}
	o.add(t, "ops/a", verifytest.SignBundle(t, o.host, "ops/a", d, k))
	v := verify.New(verifytest.Policy(t, verifytest.Scope(o.host, "enforce", k)), verify.Options{})
	res, err := v.Verify(context.Background(), o.host+"/ops/a", d, false)
	if err != nil || res.Signer != "key "+k.Name || res.Format != verify.FormatBundle {
		t.Fatalf("got %+v, %v; want the bundle signature after %d attestations", res, err, verify.DefaultLimits.MaxCandidates+4)
	}
}

// The refusal says which bound stopped the search: the candidates tried
// (referrers that may be signatures), or the referrers read at all.
func TestCandidateBoundsNamed(t *testing.T) {
	k := verifytest.NewKey(t, verifytest.ECDSA)
	lim := verify.Limits{MaxCandidates: 2, MaxReferrers: 4}

	// Three unreadable signature candidates (the registry lists referrers
	// it no longer holds): the third is not read.
	o := newOrderedReferrers(t)
	d := verifytest.PushImage(t, o.host, "ops/a", "v1")
	o.mu.Lock()
	for i := range 3 {
		o.list = append(o.list, map[string]any{"mediaType": "application/vnd.oci.image.manifest.v1+json",
			"digest": fmt.Sprintf("sha256:%064x", i+1), "size": 500, "artifactType": verifytest.BundleMediaType})
	}
	o.mu.Unlock()
	v := verify.New(verifytest.Policy(t, verifytest.Scope(o.host, "enforce", k)), verify.Options{Limits: lim})
	_, err := v.Verify(context.Background(), o.host+"/ops/a", d, false)
	want := "HTTP 404 MANIFEST_UNKNOWN: Unknown manifest (and more than 2 referrers may be signatures: the first 2 did not verify and the rest were not read (the bound on signatures tried)); fix: "
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("candidates: got %v, want %q", err, want)
	}

	// Five referrers that are not signatures (SBOMs): the fifth is not read.
	o = newOrderedReferrers(t)
	d = verifytest.PushImage(t, o.host, "ops/b", "v1")
	for i := range 5 {
		o.add(t, "ops/b", verifytest.PushReferrerAnnotated(t, o.host, "ops/b", d, "application/spdx+json", []byte(fmt.Sprintf(`{"n":%d}`, i)), nil))
	}
	v = verify.New(verifytest.Policy(t, verifytest.Scope(o.host, "enforce", k)), verify.Options{Limits: lim})
	_, err = v.Verify(context.Background(), o.host+"/ops/b", d, false)
	want = "more than 4 referrers: the first 4 held no signature that verified and the rest were not read (the bound on referrers read); fix: "
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("referrers: got %v, want %q", err, want)
	}
}
