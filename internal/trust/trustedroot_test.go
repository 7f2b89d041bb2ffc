package trust_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/trust"
)

// keylessPolicy writes a policy with one keyless scope naming root.json,
// holding rootJSON, and returns its path.
func keylessPolicy(t *testing.T, rootJSON []byte) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "root.json"), rootJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "trust.yaml")
	text := breaksHead + "- match: quay.io\n  mode: warn\n  keyless:\n    trustedRoot: root.json\n    identities: [{issuer: https://i, subject: a@b}]\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func goodRoot(t *testing.T) []byte {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, vs.FulcioCertificateAuthorities(), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A trusted root is parsed (by olm-cmp-check) when the policy loads: a good
// one is kept, byte for byte, for the bundle checks; a bad one refuses the
// policy with sigstore-go's reason, as when olm-cmp parsed it itself. The
// same file loaded again starts no second helper.
func TestTrustedRootCheckedAtLoad(t *testing.T) {
	good := goodRoot(t)
	path := keylessPolicy(t, good)
	before := checkproc.Spawns()
	p, err := trust.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	s := p.Lookup("quay.io/x")
	if !s.HasTrust() || !bytes.Equal(s.TrustedRootJSON, good) || s.TrustedRootFile != "root.json" {
		t.Fatalf("scope %+v", s)
	}
	if _, err := trust.Load(path); err != nil {
		t.Fatal(err)
	}
	if n := checkproc.Spawns() - before; n != 1 {
		t.Errorf("two loads of one trusted root ran the helper %d times, want 1", n)
	}

	for _, bad := range []string{`{}`, `not json`, `{"mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.9"}`, `[]`} {
		_, want := root.NewTrustedRootFromJSON([]byte(bad))
		if want == nil {
			t.Fatalf("%s: sigstore-go reads it", bad)
		}
		reason := strings.Join(strings.Fields(want.Error()), " ")
		if len(reason) > 200 {
			reason = reason[:200] + "…"
		}
		_, err := trust.Load(keylessPolicy(t, []byte(bad)))
		line := `trust policy trust.yaml: line 7: scopes[0].keyless.trustedRoot: "root.json" is not a Sigstore trusted root (` + reason + `)`
		if err == nil || err.Error() != line {
			t.Errorf("%s:\n got %v\nwant %s", bad, err, line)
		}
	}
}

// A trusted root olm-cmp-check did not parse (missing, crashed, out of
// time) refuses the policy, saying why: never an unchecked root taken as
// good.
func TestTrustedRootUncheckedRefused(t *testing.T) {
	good := goodRoot(t)
	hang := filepath.Join(t.TempDir(), "olm-cmp-check")
	if err := os.WriteFile(hang, []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	defer trust.SetRootCheckTimeout(300 * time.Millisecond)()
	const at = `trust policy trust.yaml: line 7: scopes[0].keyless.trustedRoot: "root.json" `
	for _, c := range []struct{ exe, want string }{
		{"", at + `was not checked: olm-cmp-check, which parses Sigstore trusted roots for olm-cmp, is neither beside olm-cmp nor on PATH: install olm-cmp-check beside olm-cmp (make build, or go install ./cmd/... from the repository)`},
		{"/bin/false", at + `was not checked: olm-cmp-check stopped before answering (exit status 1): install olm-cmp-check from the same build beside olm-cmp (make build installs both), then retry; if it already is, report this line`},
		{hang, at + `was not checked in time (olm-cmp-check's bound at a policy's load is 300ms): retry; if it recurs, check the load on olm-cmp's host`},
	} {
		// Bytes of their own, so no verdict of another test answers.
		data := append(bytes.Clone(good), strings.Repeat(" ", len(c.exe)+1)...)
		restore := checkproc.UseExecutable(c.exe)
		_, err := trust.Load(keylessPolicy(t, data))
		restore()
		if err == nil || err.Error() != c.want {
			t.Errorf("helper %q:\n got %v\nwant %s", c.exe, err, c.want)
		}
	}
}

// With a cache directory, a trusted root's verdict is kept on disk for the
// next process (of the same build), in the one form a kept verdict is read
// back in; any other file is not a verdict.
func TestTrustedRootVerdictKept(t *testing.T) {
	cache := t.TempDir()
	trust.KeepVerdicts(cache)
	defer trust.KeepVerdicts("")
	data := append(goodRoot(t), "\n\n\n"...)
	if _, err := trust.Load(keylessPolicy(t, data)); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(cache, "root-verdicts", "*", "*"))
	if len(files) != 1 {
		t.Fatalf("kept %v, want one verdict file", files)
	}
	if got, _ := os.ReadFile(files[0]); string(got) != `{"ok":true}` || !trust.StoredVerdict(got) {
		t.Errorf("kept %q", got)
	}
	for out, want := range map[string]bool{
		`{"ok":true}`: true, `{"problem":"unsupported TrustedRoot media type: "}`: true,
		`{}`: false, `null`: false, `{"OK":true}`: false, `{"ok":true,"problem":"x"}`: false,
		`{"ok":true} `: false, `{"ok":true,"x":1}`: false, `{"ok":false}`: false, `{"problem":""}`: false,
	} {
		if got := trust.StoredVerdict([]byte(out)); got != want {
			t.Errorf("StoredVerdict(%s) = %v, want %v", out, got, want)
		}
	}
}
