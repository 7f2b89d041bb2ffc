package render

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/requirements"
	"github.com/olm-cmp/olm-cmp/internal/verify"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

// sigEnv is an in-process registry holding the demo bundle twice, signed
// (demo/signed:v1, legacy .sig tag) and unsigned (demo/unsigned:v1), and the
// key that signed it.
type sigEnv struct {
	host                   string
	requests               *bundletest.Counter
	signed, unsigned       string // digests
	key                    *verifytest.Key
	loader                 *bundle.ImageLoader
	signedRef, unsignedRef string
}

func newSigEnv(t *testing.T) *sigEnv {
	t.Helper()
	host, requests := bundletest.NewRegistry(t)
	e := &sigEnv{host: host, requests: requests, key: verifytest.NewKey(t, verifytest.ECDSA)}
	e.signed = bundletest.PushDir(t, host, "demo/signed", "v1", filepath.Join(demoDir, "bundle"))
	// Another image: the same bundle with one more file.
	e.unsigned = bundletest.Push(t, host, "demo/unsigned", "v1", bundletest.Image(t,
		bundletest.Layer(t, append(bundletest.TreeEntries(t, filepath.Join(demoDir, "bundle"), ""), bundletest.File("metadata/extra.txt", "x"))...)))
	verifytest.SignTag(t, host, "demo/signed", e.signed, e.key)
	e.loader = &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}
	e.signedRef, e.unsignedRef = host+"/demo/signed:v1", host+"/demo/unsigned:v1"
	return e
}

// renderer verifies against one scope covering the registry in mode.
func (e *sigEnv) renderer(t *testing.T, mode string) *Renderer {
	p := verifytest.Policy(t, verifytest.Scope(e.host, mode, e.key))
	return &Renderer{Loader: e.loader, Verifier: verify.New(p, verify.Options{Remote: e.loader.Registry().RemoteOptions(context.Background())})}
}

func (e *sigEnv) request(t *testing.T, ref string) Request {
	req := demoRequest(t)
	req.Spec.Bundle = ref
	return req
}

// annotationsOf returns the olm-cmp.dev/signature value of every object.
func signatureAnnotations(t *testing.T, res *Result) map[string]int {
	t.Helper()
	got := map[string]int{}
	for _, n := range parse(t, res.YAML()) {
		v, ok := n.GetAnnotations()[AnnotationSignature]
		if !ok {
			v = "(none)"
		}
		got[v]++
	}
	return got
}

func TestSignatureEnforce(t *testing.T) {
	e := newSigEnv(t)
	r := e.renderer(t, "enforce")
	ctx := context.Background()

	res, err := r.Render(ctx, e.request(t, e.signedRef))
	if err != nil {
		t.Fatal(err)
	}
	want := "key " + e.key.Name
	if got := signatureAnnotations(t, res); len(got) != 1 || got[want] != len(res.Manifests) {
		t.Errorf("annotations %v, want every object %q", got, want)
	}
	if len(res.Signatures) != 1 || !res.Signatures[0].Verified() || res.Signatures[0].Digest != e.signed || res.Signatures[0].Role != RoleBundle {
		t.Errorf("Signatures = %+v", res.Signatures)
	}
	for _, f := range res.Requirements {
		if f.Category == requirements.Signature {
			t.Errorf("a verified image is reported: %+v", f)
		}
	}

	// Unsigned: refused before the bundle is pulled, in one line naming
	// the field, the image, the digest, the scope and the fix.
	e.requests.Reset()
	res, err = r.Render(ctx, e.request(t, e.unsignedRef))
	if err == nil || res != nil {
		t.Fatalf("unsigned image rendered under enforce: %v", err)
	}
	msg := err.Error()
	for _, w := range []string{`spec.bundle "` + e.unsignedRef + `"`, e.host + "/demo/unsigned@" + e.unsigned, "fix:"} {
		if !strings.Contains(msg, w) {
			t.Errorf("refusal lacks %q: %s", w, msg)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("refusal is not one line: %q", msg)
	}
	if n := e.requests.BlobGets(); n != 0 {
		t.Errorf("%d blobs fetched for a refused image", n)
	}
	t.Logf("refusal: %s", msg)

	// Asking again refuses again: nothing was cached as verified.
	if _, err := r.Render(ctx, e.request(t, e.unsignedRef)); err == nil {
		t.Error("second render of the unsigned image succeeded")
	}
}

func TestSignatureWarn(t *testing.T) {
	e := newSigEnv(t)
	r := e.renderer(t, "warn")
	ctx := context.Background()

	req := e.request(t, e.unsignedRef)
	res, err := r.Render(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := signatureAnnotations(t, res); got[verify.Unverified] != len(res.Manifests) {
		t.Errorf("annotations %v, want every object unverified", got)
	}
	var f *requirements.Finding
	for i := range res.Requirements {
		if res.Requirements[i].Category == requirements.Signature {
			f = &res.Requirements[i]
		}
	}
	if f == nil || f.Subject != e.host+"/demo/unsigned" || f.Severity != requirements.Warning || !strings.Contains(f.Message, "scope "+e.host) {
		t.Fatalf("signature finding = %+v", f)
	}
	t.Logf("warning: %s", f.Line())
	if !strings.Contains(f.Fix, "cosign sign") {
		t.Errorf("the fix does not say how to sign: %s", f.Fix)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "requirement signature:"+e.host+"/demo/unsigned") {
		t.Errorf("no warning for the unverified image: %q", res.Warnings)
	}

	// Accepted: still reported, no warning.
	req.Spec.Accept = []string{"signature:" + e.host + "/*"}
	if res, err = r.Render(ctx, req); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(res.Warnings, "\n"), "signature:") {
		t.Errorf("accepted finding still warns: %q", res.Warnings)
	}

	// The Application tightens the policy: refused.
	req = e.request(t, e.unsignedRef)
	req.Spec.RequireSignature = true
	if _, err := r.Render(ctx, req); err == nil || !strings.Contains(err.Error(), "signature check refused") {
		t.Errorf("requireSignature under warn: %v", err)
	}
	// ... and a signed image passes.
	req.Spec.Bundle = e.signedRef
	if _, err := r.Render(ctx, req); err != nil {
		t.Errorf("requireSignature, signed image: %v", err)
	}
}

func TestSignatureWithoutPolicy(t *testing.T) {
	e := newSigEnv(t)
	r := &Renderer{Loader: e.loader}
	res, err := r.Render(context.Background(), e.request(t, e.unsignedRef))
	if err != nil {
		t.Fatal(err)
	}
	if got := signatureAnnotations(t, res); got["(none)"] != len(res.Manifests) || res.Signatures != nil {
		t.Errorf("without a policy: annotations %v, signatures %+v", got, res.Signatures)
	}
	// Demanding verification without a policy is a refusal naming the flag.
	req := e.request(t, e.signedRef)
	req.Spec.RequireSignature = true
	if _, err := r.Render(context.Background(), req); err == nil || !strings.Contains(err.Error(), "--trust-policy") {
		t.Errorf("requireSignature without a policy: %v", err)
	}
}

func TestSignatureDirectory(t *testing.T) {
	e := newSigEnv(t)
	r := e.renderer(t, "enforce")
	req := demoRequest(t) // ./bundle
	res, err := r.Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := signatureAnnotations(t, res); got[verify.Unverified] != len(res.Manifests) {
		t.Errorf("directory bundle annotations %v", got)
	}
	found := false
	for _, f := range res.Requirements {
		found = found || f.Key() == "signature:"+req.Spec.Bundle
	}
	if !found {
		t.Errorf("no signature finding for the directory: %+v", res.Requirements)
	}
	req.Spec.RequireSignature = true
	_, err = r.Render(context.Background(), req)
	want := `spec.bundle: signature check refused the directory bundle "./bundle" under the Application's demand for verification: a directory is never signed: signatures cover images (Git commits have their own, which Argo CD verifies); fix: publish the bundle as an image and sign it, or stop requiring verification for this Application`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// TestSignatureCatalogImage: the catalog image is verified by its digest
// before it is pulled, and the chosen bundle after it.
func TestSignatureCatalogImage(t *testing.T) {
	ce := newCatalogEnv(t)
	key := verifytest.NewKey(t, verifytest.ECDSA)
	catDigest := bundletest.Push(t, ce.host, "demo/catalog", "latest", bundletest.CatalogImage(t, filepath.Join(ce.sourceDir, "catalog"), "/configs"))
	for _, v := range catalogVersions {
		verifytest.SignTag(t, ce.host, "demo/greeter-bundle", ce.digests[v], key)
	}
	policy := verifytest.Policy(t, verifytest.Scope(ce.host, "enforce", key))
	r := &Renderer{Loader: ce.loader, Verifier: verify.New(policy, verify.Options{Remote: ce.loader.Registry().RemoteOptions(context.Background())})}
	ref := ce.host + "/demo/catalog:latest"

	_, err := r.Render(context.Background(), ce.request(t, ref, "0.2.x", "stable"))
	if err == nil || !strings.Contains(err.Error(), `spec.catalog "`+ref+`"`) || !strings.Contains(err.Error(), catDigest) {
		t.Fatalf("unsigned catalog under enforce: %v", err)
	}

	verifytest.SignTag(t, ce.host, "demo/catalog", catDigest, key)
	res, err := r.Render(context.Background(), ce.request(t, ref, "0.2.x", "stable"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Signatures) != 2 || res.Signatures[0].Role != RoleCatalog || res.Signatures[0].Digest != catDigest ||
		res.Signatures[1].Role != RoleBundle || res.Signatures[1].Digest != ce.digests["0.2.0"] || !res.Signatures[1].Verified() {
		t.Errorf("Signatures = %+v", res.Signatures)
	}
}

// A signature check is a stage of its own: a request its deadline stops
// while the registry stalls on the signature names the check (image,
// digest, scope), not the resolution it is part of.
func TestSignatureCheckStage(t *testing.T) {
	e := newSigEnv(t)
	r := e.renderer(t, "warn")
	var stages []string
	ctx := WithStage(context.Background(), func(stage string) func() {
		stages = append(stages, stage)
		return func() { stages = append(stages, "ended") }
	})
	if _, err := r.Render(ctx, e.request(t, e.unsignedRef)); err != nil {
		t.Fatal(err)
	}
	want := "checking the signature of " + e.host + "/demo/unsigned@" + e.unsigned + ` under trust scope "` + e.host + `"`
	// The object checks (validate) are a stage too, after it.
	if len(stages) != 4 || !strings.HasPrefix(stages[0], want) || stages[1] != "ended" || stages[2] != checkingStage || stages[3] != "ended" {
		t.Errorf("stages %q, want %q… then its end, then the object checks", stages, want)
	}
	// Under a scope in mode off nothing is read: no signature stage.
	stages = nil
	if _, err := e.renderer(t, "off").Render(ctx, e.request(t, e.unsignedRef)); err != nil {
		t.Fatal(err)
	}
	if len(stages) != 2 || stages[0] != checkingStage {
		t.Errorf("stages %q under mode off", stages)
	}
}
