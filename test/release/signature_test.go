package release

import (
	"context"
	"crypto"
	"crypto/x509"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	sgroot "github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/olm-cmp/olm-cmp/hack/ociimage"
	"github.com/olm-cmp/olm-cmp/internal/trust"
	"github.com/olm-cmp/olm-cmp/internal/verify"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

const (
	githubIssuer = "https://token.actions.githubusercontent.com"
	// cosignSBOMPredicate is the predicate type `cosign attest --type cyclonedx` writes.
	cosignSBOMPredicate = "https://cyclonedx.org/bom"
)

// TestReleaseSignatureVerifies: the signature the release workflow makes is one olm-cmp's own
// verifier (internal/verify, the policy of internal/trust) accepts under the scope
// docs/signatures.md ("olm-cmp's own image") tells users to write, and the identities around it
// are refused in one line naming the signer.
//
// The workflow's signing is read from release.yaml: the image job signs "$IMAGE@$DIGEST" with
// `cosign sign --yes` and no key (keyless: Fulcio issues a certificate to the run's OIDC
// identity, GitHub Actions' issuer, id-token: write), IMAGE is ghcr.io/<the repository>, and it
// runs on v* tags; so the certificate's subject is
// https://github.com/<repository>/.github/workflows/release.yaml@refs/tags/<tag>, the repository
// being the one deploy/image.yaml names. A virtual Sigstore (sigstore-go's testing/ca) stands in
// for Fulcio; the signature is written as cosign v3 (cosign-installer v4) writes it, a Sigstore
// bundle referrer of the image, with the SBOM attestation `cosign attest` adds beside it.
func TestReleaseSignatureVerifies(t *testing.T) {
	wf, _ := readWorkflow(t)
	job, ok := wf.Jobs["image"]
	if !ok {
		t.Fatal("release.yaml: no image job")
	}
	var sign string
	for _, s := range job.Steps {
		if strings.Contains(s.Run, "cosign sign ") {
			sign = s.Run
		}
	}
	if !strings.Contains(sign, `cosign sign --yes "$IMAGE@$DIGEST"`) || strings.Contains(sign, "--key") {
		t.Fatalf("release.yaml: the image job's signing step is not keyless `cosign sign --yes \"$IMAGE@$DIGEST\"`:\n%s", sign)
	}
	if !strings.Contains(sign, `cosign attest --yes --type cyclonedx`) {
		t.Errorf("release.yaml: no `cosign attest --type cyclonedx` of the SBOM beside the signature:\n%s", sign)
	}
	if job.Permissions["id-token"] != "write" {
		t.Fatal("release.yaml: the image job cannot sign keyless without id-token: write")
	}
	if wf.Env["IMAGE"] != "ghcr.io/${{ github.repository }}" {
		t.Fatalf("release.yaml: IMAGE is %q, this test derives the repository from ghcr.io/${{ github.repository }}", wf.Env["IMAGE"])
	}
	push, _ := wf.On["push"].(map[string]any)
	if tags, _ := push["tags"].([]any); len(tags) != 1 || tags[0] != "v*" {
		t.Fatalf("release.yaml: runs on tags %v, this test signs as a v* tag", push["tags"])
	}
	pin, err := ociimage.ReadPin(filepath.Join(root, "deploy"))
	if err != nil {
		t.Fatal(err)
	}
	repository, ok := strings.CutPrefix(pin.Image, "ghcr.io/")
	if !ok {
		t.Fatalf("deploy/image.yaml names %s, not a ghcr.io image the workflow pushes", pin.Image)
	}
	identity := func(repo, workflow, ref string) string {
		return "https://github.com/" + repo + "/" + workflow + "@" + ref
	}
	release := identity(repository, ".github/workflows/release.yaml", "refs/tags/v0.2.0")

	scope, cmdRegexp := docScope(t)
	// The cosign command and the scope accept the same subjects.
	if got := strings.TrimSuffix(strings.TrimPrefix(cmdRegexp, "^"), "$"); got != scope.regexp {
		t.Errorf("docs/signatures.md: cosign verify's --certificate-identity-regexp %q and the scope's subjectRegexp %q differ", cmdRegexp, scope.regexp)
	}

	// A virtual Fulcio, alone in the trusted root (sigstore-go's testing/ca stays in test
	// files: it links the frozen golang.org/x/crypto/openpgp govulncheck reports).
	dir := t.TempDir()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := sgroot.NewTrustedRoot(sgroot.TrustedRootMediaType01, vs.FulcioCertificateAuthorities(), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	trJSON, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "trusted_root.json"), trJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	host := verifytest.NewRegistry(t, true)
	// The documented scope, for the test registry's copy of the image.
	text := verifytest.PolicyText(strings.Replace(scope.text, "match: "+pin.Image, "match: "+host+"/"+repository, 1))
	policy, err := trust.Parse([]byte(text), filepath.Join(dir, "trust.yaml"))
	if err != nil {
		t.Fatalf("the scope docs/signatures.md shows does not load: %v\n%s", err, text)
	}

	// signAsWorkflow signs a new image of the repository as the workflow run with subject
	// (issuer) would, and returns its digest.
	n := 0
	signAsWorkflow := func(subject, issuer string) string {
		t.Helper()
		n++
		digest := verifytest.PushImage(t, host, repository, "v0.2."+string(rune('0'+n)))
		cert, priv, err := vs.GenerateLeafCert(subject, issuer)
		if err != nil {
			t.Fatal(err)
		}
		signer := priv.(crypto.Signer)
		for _, predicate := range []string{verifytest.PredicateSign, cosignSBOMPredicate} {
			verifytest.PushReferrerAnnotated(t, host, repository, digest, verifytest.BundleMediaType,
				verifytest.KeylessBundleJSON(t, (*x509.Certificate)(cert), signer, verifytest.Statement("", digest, predicate)),
				map[string]string{"dev.sigstore.bundle.content": "dsse-envelope", "dev.sigstore.bundle.predicateType": predicate})
		}
		return digest
	}
	v := verify.New(policy, verify.Options{})
	image := host + "/" + repository

	digest := signAsWorkflow(release, githubIssuer)
	res, err := v.Verify(context.Background(), image, digest, false)
	if err != nil {
		t.Fatalf("the release signature is refused: %v", err)
	}
	if want := "identity " + release + " (" + githubIssuer + ")"; res.Signer != want || res.Format != verify.FormatBundle || res.Mode != trust.Enforce {
		t.Fatalf("release signature: %+v, want signer %q in a Sigstore bundle, enforced", res, want)
	}
	t.Logf("release v0.2.0: verified, signer %s", res.Signer)
	for _, tag := range []string{"v1.10.3", "v0.3.0-rc.1"} {
		if !scope.re.MatchString(identity(repository, ".github/workflows/release.yaml", "refs/tags/"+tag)) {
			t.Errorf("the documented scope does not accept the release tag %s", tag)
		}
	}

	for _, c := range []struct{ what, subject, issuer string }{
		{"another repository (a fork)", identity("someone/olm-cmp", ".github/workflows/release.yaml", "refs/tags/v0.2.0"), githubIssuer},
		{"another workflow", identity(repository, ".github/workflows/ci.yaml", "refs/tags/v0.2.0"), githubIssuer},
		{"a branch", identity(repository, ".github/workflows/release.yaml", "refs/heads/main"), githubIssuer},
		{"a tag that is not a version", identity(repository, ".github/workflows/release.yaml", "refs/tags/latest"), githubIssuer},
		{"another issuer", release, "https://accounts.google.com"},
	} {
		t.Run(c.what, func(t *testing.T) {
			digest := signAsWorkflow(c.subject, c.issuer)
			_, err := v.Verify(context.Background(), image, digest, false)
			want := `signed keyless by "` + c.subject + `" (issuer "` + c.issuer + `"), an identity the scope does not accept`
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "signature check refused "+image+"@"+digest) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v\nwant one line with %q", err, want)
			}
			t.Logf("%s: %v", c.what, err)
		})
	}
}

type documentedScope struct {
	text   string // the YAML of the scope, as docs/signatures.md shows it
	regexp string // its subjectRegexp
	re     *regexp.Regexp
}

// docScope is the scope and the cosign command's identity regexp of docs/signatures.md's
// section "olm-cmp's own image".
func docScope(t *testing.T) (documentedScope, string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "signatures.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## olm-cmp's own image\n")
	if !ok {
		t.Fatal(`docs/signatures.md: no section "## olm-cmp's own image"`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var s documentedScope
	if _, y, ok := strings.Cut(sec, "```yaml\n"); ok {
		s.text, _, _ = strings.Cut(y, "```")
	}
	m := regexp.MustCompile(`(?m)^\s+subjectRegexp: (\S+)$`).FindStringSubmatch(s.text)
	if m == nil {
		t.Fatalf("docs/signatures.md, olm-cmp's own image: no yaml block with a subjectRegexp:\n%s", sec)
	}
	s.regexp = m[1]
	s.re = regexp.MustCompile("^(?:" + s.regexp + ")$")
	c := regexp.MustCompile(`--certificate-identity-regexp '([^']+)'`).FindStringSubmatch(sec)
	if c == nil {
		t.Fatal("docs/signatures.md, olm-cmp's own image: no cosign verify --certificate-identity-regexp '…'")
	}
	if !strings.Contains(sec, "--certificate-oidc-issuer "+githubIssuer) || !strings.Contains(s.text, "issuer: "+githubIssuer) {
		t.Errorf("docs/signatures.md, olm-cmp's own image: the issuer is not %s in both the command and the scope", githubIssuer)
	}
	return s, c[1]
}
