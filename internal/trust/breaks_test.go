package trust_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"

	"github.com/olm-cmp/olm-cmp/internal/trust"
)

const breaksHead = "apiVersion: olm-cmp.dev/v1alpha1\nkind: TrustPolicy\nscopes:\n"

// An Application must not slip past a scope by spelling the registry host
// another way that reaches the same server: upper case, a trailing dot
// (a fully qualified DNS name), or https's default port.
func TestLookupHostSpellings(t *testing.T) {
	p, err := trust.Parse([]byte(breaksHead+
		"- match: registry.redhat.io\n  mode: warn\n"+
		"- match: Quay.IO./Myorg\n  mode: warn\n"+
		"- match: localhost:5000\n  mode: warn\n"+
		"- match: docker.io/library\n  mode: warn\n"), "trust.yaml")
	if err == nil {
		t.Fatal("upper-case repository path accepted in a prefix")
	}
	p, err = trust.Parse([]byte(breaksHead+
		"- match: registry.redhat.io\n  mode: warn\n"+
		"- match: Quay.IO./myorg\n  mode: warn\n"+
		"- match: localhost:5000\n  mode: warn\n"+
		"- match: docker.io/library\n  mode: warn\n"), "trust.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for repo, want := range map[string]string{
		"registry.redhat.io/ubi9/ubi":            "registry.redhat.io",
		"REGISTRY.REDHAT.IO/ubi9/ubi":            "registry.redhat.io",
		"registry.redhat.io./ubi9/ubi":           "registry.redhat.io",
		"Registry.RedHat.io.:443/ubi9/ubi":       "registry.redhat.io",
		"registry.redhat.io:8443/ubi9/ubi":       "",
		"registry.redhat.io.evil.com/ubi9/ubi":   "",
		"quay.io/myorg/op":                       "quay.io/myorg",
		"QUAY.io:443/myorg/op@sha256:abc":        "quay.io/myorg",
		"quay.io/myorgx/op":                      "",
		"LOCALHOST:5000/x":                       "localhost:5000",
		"localhost:443/x":                        "",
		"busybox":                                "index.docker.io/library",
		"DOCKER.IO/busybox":                      "index.docker.io/library",
		"registry-1.docker.io/library/busybox":   "index.docker.io/library",
		"registry-1.docker.io:443/library/nginx": "index.docker.io/library",
	} {
		got := ""
		if s := p.Lookup(repo); s != nil {
			got = s.Match
		}
		if got != want {
			t.Errorf("Lookup(%q) = scope %q, want %q", repo, got, want)
		}
	}
}

// A signature naming the registry in another spelling names the same
// repository.
func TestNormalizeRepoSpellings(t *testing.T) {
	for _, r := range []string{"REGISTRY.REDHAT.IO/ubi9/ubi", "registry.redhat.io.:443/ubi9/ubi:9.4", "registry.redhat.io/ubi9/ubi@sha256:00"} {
		if got := trust.NormalizeRepo(r); got != "registry.redhat.io/ubi9/ubi" {
			t.Errorf("NormalizeRepo(%q) = %q", r, got)
		}
	}
}

// The policy's errors reach Argo CD when it stops loading: they name the
// file, never its path on the server.
func TestLoadErrorsNameNoServerPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "secret-mount")
	os.Mkdir(dir, 0o755)
	path := filepath.Join(dir, "trust.yaml")
	os.WriteFile(path, []byte(breaksHead+"- match: quay.io\n  mode: enforced\n"), 0o644)
	for _, load := range []func() error{
		func() error { _, err := trust.Load(path); return err },
		func() error { _, err := trust.Load(filepath.Join(dir, "missing.yaml")); return err },
	} {
		err := load()
		if err == nil || strings.Contains(err.Error(), dir) || !strings.HasPrefix(err.Error(), "trust policy ") {
			t.Errorf("got %v, want one line naming the file without %s", err, dir)
		}
	}
}

// Key text pasted where a path belongs (a private key, by mistake) is
// refused without repeating it.
func TestKeyTextInFileNotEchoed(t *testing.T) {
	secret := "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7secret"
	priv := "-----BEGIN PRIVATE KEY-----\\n" + secret + "\\n-----END PRIVATE KEY-----"
	for _, text := range []string{
		breaksHead + "- match: quay.io\n  mode: warn\n  keys:\n  - file: \"" + priv + "\"\n",
		breaksHead + "- match: quay.io\n  mode: warn\n  gpg:\n    lookaside: https://x/s\n    keys:\n    - file: \"" + priv + "\"\n",
		breaksHead + "- match: quay.io\n  mode: warn\n  keyless:\n    trustedRoot: \"" + priv + "\"\n    identities: [{issuer: https://i, subject: a@b}]\n",
	} {
		_, err := trust.Parse([]byte(text), "trust.yaml")
		if err == nil || strings.Contains(err.Error(), "MIIE") || strings.Contains(err.Error(), "PRIVATE") || !strings.Contains(err.Error(), "not a path") {
			t.Errorf("got %v, want a refusal that does not repeat the key", err)
		}
	}
}

// A key file that is a named pipe is refused at once, not waited on.
func TestKeyFileFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "k.pub"), 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := trust.Parse([]byte(breaksHead+"- match: quay.io\n  mode: warn\n  keys:\n  - file: k.pub\n"), filepath.Join(dir, "trust.yaml"))
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), `"k.pub": not a regular file`) {
			t.Fatalf("got %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Parse blocked opening a named pipe")
	}
}

// A subjectRegexp that matches any subject trusts anyone the issuer (for
// the public instance: anyone with a GitHub account) vouches for.
func TestSubjectRegexpAcceptingAnyone(t *testing.T) {
	scope := func(re string) string {
		return breaksHead + "- match: quay.io\n  mode: warn\n  keyless:\n    trustedRoot: root.json\n    identities:\n    - issuer: https://token.actions.githubusercontent.com\n      subjectRegexp: '" + re + "'\n"
	}
	for _, re := range []string{".*", ".+", ".*@.*", "https://.*", "(?s).*|x", "[^@]+@.+"} {
		_, err := trust.Parse([]byte(scope(re)), "trust.yaml")
		if err == nil || !strings.Contains(err.Error(), "scopes[0].keyless.identities[0].subjectRegexp: ") || !strings.Contains(err.Error(), "accepts any subject") {
			t.Errorf("%s: got %v", re, err)
		}
	}
	// A real signer's expression is judged on its merits (here: the root
	// file is missing, nothing else).
	_, err := trust.Parse([]byte(scope(`https://github\.com/myorg/.+@refs/tags/v.+`)), "trust.yaml")
	if err == nil || strings.Contains(err.Error(), "accepts any subject") {
		t.Errorf("a narrow expression: %v", err)
	}
}

// Careless prefixes and remaps say so instead of silently meaning
// something else.
func TestCarelessScopes(t *testing.T) {
	for text, want := range map[string]string{
		// "/myorg" would have been Docker Hub's index.docker.io/myorg.
		breaksHead + "- match: /myorg\n  mode: warn\n": `line 4: scopes[0].match: "/myorg" is not a repository prefix`,
		// signedAs on "*" was ignored.
		breaksHead + "- match: \"*\"\n  mode: warn\n  signedAs: registry.redhat.io\n": `line 6: scopes[0].signedAs: a scope matching "*" cannot be remapped`,
		// An aliased scope is read as the scope it names (here: a
		// duplicate), not "expected a map, got something else".
		breaksHead + "- &s {match: quay.io, mode: warn}\n- *s\n": `"quay.io" is also the match of the scope at line 4: merge them`,
	} {
		_, err := trust.Parse([]byte(text), "trust.yaml")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
	if _, err := trust.Parse([]byte(breaksHead+"- &s {match: quay.io, mode: warn}\nx: *s\n"), "trust.yaml"); err == nil {
		t.Error("unknown field accepted")
	}
}

// A private OpenPGP key pasted after a public one is refused, without
// repeating either.
func TestGPGPrivateKeyAfterPublic(t *testing.T) {
	pub, priv := gpgKeyPair(t)
	ring := pub + "\n" + priv
	text := breaksHead + "- match: quay.io\n  mode: warn\n  gpg:\n    lookaside: https://x/s\n    keys:\n    - armored: |\n" + indentBy(ring, "        ")
	_, err := trust.Parse([]byte(text), "trust.yaml")
	if err == nil || !strings.Contains(err.Error(), "scopes[0].gpg.keys[0].armored: holds a private key: give the public key only") || strings.Contains(err.Error(), "BEGIN") {
		t.Fatalf("got %v", err)
	}
}

func indentBy(s, pre string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString(pre + l + "\n")
	}
	return b.String()
}

func gpgKeyPair(t *testing.T) (pub, priv string) {
	t.Helper()
	e, err := openpgp.NewEntity("first", "", "a@example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	other, err := openpgp.NewEntity("second", "", "b@example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	var pb, sb bytes.Buffer
	w, _ := armor.Encode(&pb, openpgp.PublicKeyType, nil)
	e.Serialize(w)
	w.Close()
	w, _ = armor.Encode(&sb, openpgp.PrivateKeyType, nil)
	other.SerializePrivate(w, nil)
	w.Close()
	return pb.String(), sb.String()
}

// A second public key in one entry was ignored in silence.
func TestGPGTwoBlocks(t *testing.T) {
	pub, _ := gpgKeyPair(t)
	text := breaksHead + "- match: quay.io\n  mode: warn\n  gpg:\n    lookaside: https://x/s\n    keys:\n    - armored: |\n" + indentBy(pub+"\n"+pub, "        ")
	_, err := trust.Parse([]byte(text), "trust.yaml")
	if err == nil || !strings.Contains(err.Error(), "holds more than one armored block: give each key its own entry") {
		t.Fatalf("got %v", err)
	}
}

// A policy naming one large bad key file in every entry of 512 scopes (and
// one large trusted root in each) is read once per file and refused with
// one bounded line (it took half a minute and made a 2 MB message).
func TestManyEntriesOneBigFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "k.pub"), []byte("-----BEGIN PUBLIC KEY-----\n"+strings.Repeat("A", trust.MaxKeyBytes-60)+"\n-----END PUBLIC KEY-----\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "root.json"), []byte(strings.Repeat(" ", trust.MaxTrustedRootBytes)), 0o644)
	var b strings.Builder
	b.WriteString(breaksHead)
	for i := range trust.MaxScopes {
		fmt.Fprintf(&b, "- match: q%d.io\n  mode: warn\n  keyless: {trustedRoot: root.json, identities: [{issuer: https://i, subject: s}]}\n  keys:\n", i)
		for range trust.MaxKeysPerScope {
			b.WriteString("  - file: k.pub\n")
		}
	}
	path := filepath.Join(dir, "trust.yaml")
	os.WriteFile(path, []byte(b.String()), 0o644)
	done := make(chan error, 1)
	go func() { _, err := trust.Load(path); done <- err }()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Load read the same files again and again")
	}
	msg := fmt.Sprint(err)
	if err == nil || len(msg) > 2000 || !strings.Contains(msg, "line 8: scopes[0].keys[0].file: PEM public key does not parse; line 9: scopes[0].keys[1].file: PEM public key does not parse") ||
		!strings.HasSuffix(msg, fmt.Sprintf("; and %d more problems", trust.MaxScopes*(trust.MaxKeysPerScope+1)-10)) {
		t.Fatalf("got %d bytes: %.400s", len(msg), msg)
	}
}

// A lookaside URL's user name and password never reach a message: a policy
// error reaches Argo CD's UI. The URLs that do not parse (a password with a
// "/", no scheme) lose them too.
func TestLookasideCredentialsNotEchoed(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"ftp://user:hunter2@host.example/s", `"ftp://host.example/s" is not an http(s) URL`},
		{"https://user:hun/ter2@host.example/s", `"https://host.example/s" is not an http(s) URL`},
		{"user:hunter2@host.example/s", `"host.example/s" is not an http(s) URL`},
		{"https://user:hunter2@host.example/s?x=1", `"https://host.example/s?x=1" is not an http(s) URL`},
	} {
		text := breaksHead + "- match: quay.io\n  mode: warn\n  gpg:\n    lookaside: \"" + c.url + "\"\n    keys:\n    - armored: x\n"
		_, err := trust.Parse([]byte(text), "trust.yaml")
		if err == nil {
			t.Fatalf("%s: accepted", c.url)
		}
		if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "hun/") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %q, want %q and no credentials", c.url, err, c.want)
		}
	}
	if got := trust.RedactURL("https://u:p@sig.example/base"); got != "https://sig.example/base" {
		t.Errorf("RedactURL: got %q", got)
	}
}

// `match: docker.io/busybox` covers the official image busybox
// (index.docker.io/library/busybox), as docker reads the name, and the
// namespace docker.io/busybox/…, as a prefix reads it; a longer scope for
// the official image wins.
func TestDockerHubOneSegmentMatch(t *testing.T) {
	p, err := trust.Parse([]byte(breaksHead+
		"- match: docker.io/busybox\n  mode: enforce\n  keys:\n  - pem: |\n"+indentBy(ecKey(t), "      ")+
		"- match: docker.io/library\n  mode: warn\n"+
		"- match: mirror.example.com/busybox\n  mode: warn\n  signedAs: docker.io/busybox\n"), "trust.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for repo, want := range map[string]string{
		"busybox":                          "index.docker.io/busybox",
		"docker.io/busybox":                "index.docker.io/busybox",
		"docker.io/library/busybox":        "index.docker.io/busybox",
		"index.docker.io/busybox/tool":     "index.docker.io/busybox",
		"docker.io/busyboxes":              "index.docker.io/library",
		"docker.io/library/alpine":         "index.docker.io/library",
		"mirror.example.com/busybox":       "mirror.example.com/busybox",
		"mirror.example.com/busybox/other": "mirror.example.com/busybox",
	} {
		s := p.Lookup(repo)
		if s == nil || s.Match != want {
			t.Errorf("Lookup(%q) = %+v, want scope %q", repo, s, want)
		}
	}
	m := p.Lookup("mirror.example.com/busybox")
	if got := m.SignedName("mirror.example.com/busybox"); got != "index.docker.io/library/busybox" {
		t.Errorf("SignedName = %q, want the official image", got)
	}
	if got := m.SignedName("mirror.example.com/busybox/other"); got != "index.docker.io/busybox/other" {
		t.Errorf("SignedName = %q", got)
	}
}
