package cmpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/engine"
	"github.com/olm-cmp/olm-cmp/internal/spec"
	"github.com/olm-cmp/olm-cmp/internal/verify"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

// TestSignaturesThroughPlugin: under an enforce policy, the plugin renders
// a signed bundle with its signer on every object, and answers an unsigned
// one with the policy's one-line refusal (what Argo CD shows as the
// Application's ComparisonError), PermissionDenied, no manifests. Signing
// the image afterwards makes the next request succeed: the refusal was not
// cached.
func TestSignaturesThroughPlugin(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	tiny := filepath.Join(repoDir, "bundles/tiny")
	signed := bundletest.PushDir(t, host, "operators/signed", "v1", tiny)
	unsigned := bundletest.PushDir(t, host, "operators/unsigned", "v1", tiny)
	key := verifytest.NewKey(t, verifytest.ECDSA)
	verifytest.SignTag(t, host, "operators/signed", signed, key)

	loader := &bundle.ImageLoader{CacheDir: t.TempDir(), Insecure: []string{host}}
	v := verify.New(verifytest.Policy(t, verifytest.Scope(host, "enforce", key)), verify.Options{Remote: loader.Registry().RemoteOptions(context.Background())})
	ts := startServer(t, engine.NewEngine(engine.EngineOptions{Loader: loader, Verifier: func() (*verify.Verifier, error) { return v, nil }}))

	dir := t.TempDir()
	for _, app := range []string{"signed", "unsigned"} {
		os.MkdirAll(filepath.Join(dir, app), 0o755)
		os.WriteFile(filepath.Join(dir, app, spec.FileName), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: "+host+"/operators/"+app+":v1\n  namespace: tiny-system\n"), 0o644)
	}
	tgz := tgzOf(t, dir)

	resp, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "signed"})
	if err != nil {
		t.Fatal(err)
	}
	want := `"olm-cmp.dev/signature":"key ` + key.Name + `"`
	for _, m := range resp.Manifests {
		if !strings.Contains(m, want) {
			t.Fatalf("object without %s: %s", want, m)
		}
	}

	for range 2 {
		resp, err = ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "unsigned"})
		st, _ := status.FromError(err)
		if err == nil || resp != nil || st.Code() != codes.PermissionDenied {
			t.Fatalf("unsigned bundle: %v (%d manifests)", err, len(resp.GetManifests()))
		}
		msg := st.Message()
		for _, w := range []string{"signature check refused " + host + "/operators/unsigned@" + unsigned, "no signature found", "fix: sign the image by digest"} {
			if !strings.Contains(msg, w) {
				t.Errorf("refusal lacks %q: %s", w, msg)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("refusal is not one line: %q", msg)
		}
	}

	verifytest.SignTag(t, host, "operators/unsigned", unsigned, key)
	if _, err := ts.generate(ctxT(t), t, call{tgz: tgz, appRelPath: "unsigned"}); err != nil {
		t.Errorf("signed since: %v", err)
	}
}
