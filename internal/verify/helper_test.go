package verify_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/verify"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

// envHelperCase names the case TestBundleHelperChild runs.
const envHelperCase = "OLM_CMP_VERIFY_TEST_HELPER_CASE"

// TestBundleHelper: a Sigstore bundle is verified by olm-cmp-check, the
// real executable, found on PATH; when it is missing, crashes or hangs,
// the image is not verified and the line says why and the fix, under
// enforce (a refusal) as under warn (the Problem). Each case runs this test
// binary again (TestBundleHelperChild), answering out of process: where
// olm-cmp-check is found is decided once per process.
func TestBundleHelper(t *testing.T) {
	cases := map[string]string{
		"missing": "",
		"crashed": "#!/bin/sh\necho 'fatal error: runtime: out of memory' >&2\nexit 2\n",
	}
	if sleep, err := exec.LookPath("sleep"); err == nil {
		cases["hung"] = "#!/bin/sh\nexec " + sleep + " 60\n"
	}
	if testing.Short() {
		t.Log("-short: olm-cmp-check itself is not built")
	} else if _, err := exec.LookPath("go"); err != nil {
		t.Log("no go command to build olm-cmp-check with: the real helper is not run")
	} else {
		cases["real"] = ""
	}
	for name, script := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			exe := filepath.Join(dir, checkproc.Executable)
			switch {
			case name == "real":
				build := exec.Command("go", "build", "-o", exe, "github.com/olm-cmp/olm-cmp/cmd/olm-cmp-check")
				if out, err := build.CombinedOutput(); err != nil {
					t.Fatalf("go build ./cmd/olm-cmp-check: %v\n%s", err, out)
				}
			case script != "":
				if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			child := exec.Command(os.Args[0], "-test.run=^TestBundleHelperChild$", "-test.v", "-test.count=1")
			child.Env = append(os.Environ(), envRealHelper+"=1", envHelperCase+"="+name, "PATH="+dir)
			out, err := child.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestBundleHelperChild") {
				t.Fatalf("%v\n%s", err, out)
			}
			t.Logf("%s", out)
		})
	}
}

// TestBundleHelperChild is TestBundleHelper's case in a process of its own.
func TestBundleHelperChild(t *testing.T) {
	name := os.Getenv(envHelperCase)
	if name == "" || os.Getenv(envRealHelper) == "" {
		t.Skip("run by TestBundleHelper")
	}
	host := verifytest.NewRegistry(t, true)
	repo := "helper/" + name
	digest := verifytest.PushImage(t, host, repo, "v1")
	k := verifytest.NewKey(t, verifytest.ECDSA)
	blob := verifytest.BundleJSON(t, k, verifytest.Statement("", digest, ""))
	verifytest.PushReferrer(t, host, repo, digest, verifytest.BundleMediaType, blob)
	layer := fmt.Sprintf("sha256:%x", sha256.Sum256(blob))
	want := map[string]struct{ what, fix string }{
		"missing": {"the Sigstore bundle " + layer + " was not checked: olm-cmp-check, which verifies Sigstore bundles for olm-cmp, is neither beside olm-cmp nor on PATH",
			"install olm-cmp-check beside olm-cmp (make build, or go install ./cmd/... from the repository)"},
		"crashed": {"the Sigstore bundle " + layer + " was not checked: olm-cmp-check stopped before answering (exit status 2): fatal error: runtime: out of memory",
			"install olm-cmp-check from the same build beside olm-cmp (make build installs both), then retry; if it already is, report this line"},
		"hung": {"the Sigstore bundle " + layer + " was not checked in time (the signature check's bound is 2s)",
			"retry; if it recurs, check the load on olm-cmp's host and the registry's health"},
	}[name]
	for _, mode := range []string{"enforce", "warn"} {
		v := verify.New(verifytest.Policy(t, verifytest.Scope(host, mode, k)), verify.Options{Limits: verify.Limits{Timeout: 2 * time.Second}})
		start := time.Now()
		res, err := v.Verify(context.Background(), host+"/"+repo, digest, false)
		t.Logf("%s (%s): %+v, %v", mode, time.Since(start).Round(time.Millisecond), res, err)
		if name == "real" {
			if err != nil || res.Signer != "key "+k.Name || res.Format != verify.FormatBundle {
				t.Fatalf("%s: got %+v, %v", mode, res, err)
			}
			continue
		}
		if res.Verified() {
			t.Fatalf("%s: verified without olm-cmp-check: %+v", mode, res)
		}
		if mode == "warn" {
			if err != nil || res.Problem != want.what || res.Fix != want.fix {
				t.Fatalf("warn: got %+v, %v; want Problem %q, Fix %q", res, err, want.what, want.fix)
			}
			continue
		}
		var re *verify.RefusalError
		if !errors.As(err, &re) || re.What != want.what || re.Fix != want.fix {
			t.Fatalf("enforce: got %v; want %q; fix: %q", err, want.what, want.fix)
		}
	}
}

// TestOlmCmpLinksNoBundleVerification: sigstore-go's bundle verification
// and what it brings (rekor's models, go-openapi's formats and runtime,
// govalidator) stay out of the olm-cmp executable, whose every process
// would run their initialisation (internal/checkproc): only olm-cmp-check
// links internal/verify/bundlecheck. No sigstore package at all is linked:
// sigstore/sigstore's signature package and sigstore-go's root bring
// sigstore's protobuf descriptors (protobuf-specs, genproto's annotations)
// and the timestamp authority's verification; the legacy format is
// verified with the standard library, trusted roots parsed by
// olm-cmp-check (internal/trust/rootcheck).
func TestOlmCmpLinksNoBundleVerification(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list olm-cmp's packages with")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/olm-cmp/olm-cmp/cmd/olm-cmp").Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/olm-cmp: %v", err)
	}
	heavy := []string{
		"github.com/olm-cmp/olm-cmp/internal/verify/bundlecheck",
		"github.com/olm-cmp/olm-cmp/internal/trust/rootcheck",
		"github.com/sigstore/",
		"google.golang.org/genproto/googleapis/api",
		"github.com/digitorus/",
		"github.com/go-openapi/strfmt",
		"github.com/go-openapi/runtime",
		"github.com/go-openapi/validate",
		"github.com/asaskevich/govalidator",
	}
	for _, p := range strings.Fields(string(out)) {
		for _, h := range heavy {
			if p == h || strings.HasSuffix(h, "/") && strings.HasPrefix(p, h) || strings.HasPrefix(p, h+"/") {
				t.Errorf("olm-cmp links %s: import it only from olm-cmp-check's operations (internal/checks)", p)
			}
		}
	}
}
