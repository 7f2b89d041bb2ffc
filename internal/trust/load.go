package trust

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/safefile"
	"github.com/olm-cmp/olm-cmp/internal/yamlstrict"
)

// Bounds on what a policy may make olm-cmp read. A policy is the admin's,
// but it is still a file someone edits by hand: a wrong path must not make
// the sidecar read a disk image.
const (
	MaxPolicyBytes      = 1 << 20
	MaxKeyBytes         = 64 << 10
	MaxTrustedRootBytes = 4 << 20
	MaxScopes           = 512
	MaxKeysPerScope     = 64
	MaxIdentities       = 64
)

// Load reads the policy file at path. Key and trusted-root files it names
// are read relative to the policy file's directory.
func Load(path string) (*Policy, error) {
	data, err := readBounded(path, MaxPolicyBytes)
	if err != nil {
		return nil, fmt.Errorf("trust policy %s: %s", filepath.Base(path), err)
	}
	p, err := parse(data, path, filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	p.files = append([]string{path}, p.files...)
	return p, nil
}

// Parse reads a policy from data; name is the file it came from, for
// messages and to resolve relative key files.
func Parse(data []byte, name string) (*Policy, error) {
	return parse(data, name, filepath.Dir(name))
}

func readBounded(path string, max int64) ([]byte, error) {
	// Only a regular file (safefile.Read): opening a named pipe blocks
	// until something writes to it, and a device or directory is no key.
	data, err := safefile.Read(path, max, true)
	var notRegular *safefile.NotRegularError
	var tooLarge *safefile.TooLargeError
	var pathErr *fs.PathError
	switch {
	case err == nil:
		return data, nil
	case errors.As(err, &notRegular):
		return nil, fmt.Errorf("not a regular file")
	case errors.As(err, &tooLarge):
		return nil, fmt.Errorf("larger than %d bytes", max)
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("file does not exist")
	case errors.Is(err, fs.ErrPermission):
		return nil, fmt.Errorf("permission denied")
	case errors.As(err, &pathErr) && pathErr.Op == "read":
		return nil, fmt.Errorf("cannot read the file")
	}
	return nil, fmt.Errorf("cannot open the file")
}

// decoder walks the policy's YAML nodes against the format, collecting
// every problem with its line and field path.
type decoder struct {
	yamlstrict.Decoder
	name, dir string
	// files and parsedRoots hold each file the policy names, read (and
	// each trusted root, parsed) once however many entries name it: 512
	// scopes naming one 4 MiB trusted root, or one big file 32768 times,
	// took half a minute.
	files       map[string]fileRead
	parsedRoots map[string]rootParse
	keyFiles    map[string]keyParse
	gpgFiles    map[string]ringParse
}

type keyParse struct {
	k   *Key
	err error
}

type ringParse struct {
	el      openpgp.EntityList
	problem string
}

type rootParse struct {
	problem string
	err     error
}

type fileRead struct {
	data []byte
	err  error
}

// read is readBounded of a file the policy names, once per load.
func (d *decoder) read(file string, max int64) ([]byte, error) {
	path := d.resolve(file)
	key := fmt.Sprintf("%d\x00%s", max, path)
	if r, ok := d.files[key]; ok {
		return r.data, r.err
	}
	data, err := readBounded(path, max)
	if d.files == nil {
		d.files = map[string]fileRead{}
	}
	d.files[key] = fileRead{data, err}
	return data, err
}

func parse(data []byte, path, dir string) (*Policy, error) {
	// Messages name the file, never its path on the server: a policy that
	// stops loading fails renders, and the error reaches Argo CD's UI.
	name := filepath.Base(path)
	doc, err := yamlstrict.Document(data, "trust policy "+name, MaxPolicyBytes,
		fmt.Sprintf("write apiVersion: %s, kind: %s and scopes (docs/signatures.md)", APIVersion, Kind))
	if err != nil {
		return nil, err
	}
	d := &decoder{name: name, dir: dir}
	p := &Policy{Name: path}
	top := d.Fields(doc, "", "apiVersion", "kind", "directories", "scopes")
	if v, ok := d.Str(top["directories"], "directories"); ok {
		switch v {
		case "allow":
			p.DirectoryMode = Off
		case "warn":
			p.DirectoryMode = Warn
		case "refuse":
			p.DirectoryMode = Enforce
		default:
			d.Fail(top["directories"], "directories", "expected allow, warn or refuse, got %s", echo.Quote(v))
		}
	}
	if v, ok := d.Str(top["apiVersion"], "apiVersion"); !ok && top["apiVersion"] == nil {
		d.Fail(doc, "apiVersion", "is required: write apiVersion: %s", APIVersion)
	} else if ok && v != APIVersion {
		d.Fail(top["apiVersion"], "apiVersion", "%s is not known: write %s", echo.Quote(v), APIVersion)
	}
	if v, ok := d.Str(top["kind"], "kind"); !ok && top["kind"] == nil {
		d.Fail(doc, "kind", "is required: write kind: %s", Kind)
	} else if ok && v != Kind {
		d.Fail(top["kind"], "kind", "%s is not known: write %s", echo.Quote(v), Kind)
	}
	items := d.List(top["scopes"], "scopes")
	if len(items) > MaxScopes {
		d.Fail(top["scopes"], "scopes", "%d scopes, more than %d", len(items), MaxScopes)
		items = nil
	}
	p.Scopes = yamlstrict.Unique(&d.Decoder, items, "scopes", "match", "scope", d.scope,
		func(s *Scope) (string, int) { return s.Match, s.Line })
	if err := d.Err("trust policy " + name); err != nil {
		return nil, err
	}
	p.hash = computeHash(p.Directories(), p.Scopes)
	for key := range d.files {
		_, path, _ := strings.Cut(key, "\x00")
		if !slices.Contains(p.files, path) {
			p.files = append(p.files, path)
		}
	}
	slices.Sort(p.files)
	return p, nil
}

func (d *decoder) scope(n *yaml.Node, path string) *Scope {
	f := d.Fields(n, path, "match", "mode", "keys", "rekor", "keyless", "gpg", "signedAs")
	if n.Kind != yaml.MappingNode {
		return nil
	}
	before := len(d.Problems)
	s := &Scope{Line: n.Line}
	if m, ok := d.Str(f["match"], path+".match"); ok {
		norm, err := NormalizePrefix(m)
		if err != nil {
			d.Fail(f["match"], path+".match", "%s is %s: write a registry (registry.redhat.io), a repository prefix (quay.io/myorg) or \"*\"", echo.Quote(m), err)
		}
		s.Match = norm
	} else if f["match"] == nil {
		d.Fail(n, path+".match", "is required: the registry or repository prefix this scope covers, or \"*\"")
	}
	if m, ok := d.Str(f["mode"], path+".mode"); ok {
		switch Mode(m) {
		case Enforce, Warn, Off:
			s.Mode = Mode(m)
		default:
			d.Fail(f["mode"], path+".mode", "expected enforce, warn or off, got %s", echo.Quote(m))
		}
	} else if f["mode"] == nil {
		d.Fail(n, path+".mode", "is required: enforce, warn or off")
	}
	keys := d.List(f["keys"], path+".keys")
	if len(keys) > MaxKeysPerScope {
		d.Fail(f["keys"], path+".keys", "%d keys, more than %d", len(keys), MaxKeysPerScope)
		keys = nil
	}
	names := map[string]bool{}
	for i, kn := range keys {
		k := d.key(kn, fmt.Sprintf("%s.keys[%d]", path, i))
		if k == nil {
			continue
		}
		if names[k.Name] {
			d.Fail(kn, fmt.Sprintf("%s.keys[%d]", path, i), "key %s is listed twice", echo.Quote(k.Name))
			continue
		}
		names[k.Name] = true
		s.Keys = append(s.Keys, k)
	}
	if f["rekor"] != nil {
		s.Rekor = d.key(f["rekor"], path+".rekor")
	}
	if f["keyless"] != nil {
		d.keyless(f["keyless"], path+".keyless", s)
	}
	if f["gpg"] != nil {
		s.GPG = d.gpg(f["gpg"], path+".gpg")
	}
	if v, ok := d.Str(f["signedAs"], path+".signedAs"); ok {
		norm, err := NormalizePrefix(v)
		if err != nil || norm == "*" {
			d.Fail(f["signedAs"], path+".signedAs", "%s is not a registry or repository prefix: write the name the signatures carry (registry.redhat.io)", echo.Quote(v))
		}
		s.SignedAs = norm
		if s.Match == "*" {
			d.Fail(f["signedAs"], path+".signedAs", "a scope matching \"*\" cannot be remapped: give the mirror's registry or repository prefix as match")
		}
	}
	if s.Mode == Enforce && !s.HasTrust() && len(d.Problems) == before {
		d.Fail(n, path, "mode enforce without keys or keyless identities would refuse every image: add keys (or keyless), or use warn")
	}
	if s.Rekor != nil && len(s.Keys) == 0 && len(d.Problems) == before {
		d.Fail(f["rekor"], path+".rekor", "a Rekor key checks key-based signatures: add keys")
	}
	if len(d.Problems) > before {
		return nil
	}
	return s
}

// key reads {name, pem | file}.
func (d *decoder) key(n *yaml.Node, path string) *Key {
	f := d.Fields(n, path, "name", "pem", "file")
	if n.Kind != yaml.MappingNode {
		return nil
	}
	nm, _ := d.Str(f["name"], path+".name")
	pemText, hasPEM := d.Str(f["pem"], path+".pem")
	file, hasFile := d.Str(f["file"], path+".file")
	var data []byte
	at := n
	switch {
	case hasPEM && hasFile:
		d.Fail(n, path, "set pem or file, not both")
		return nil
	case hasPEM:
		data, at = []byte(pemText), f["pem"]
	case hasFile:
		if keyText(file) {
			d.Fail(f["file"], path+".file", "holds key text, not a path: put a public key's PEM text under pem (never a private key)")
			return nil
		}
		b, err := d.read(file, MaxKeyBytes)
		if err != nil {
			d.Fail(f["file"], path+".file", "%s: %s", echo.Quote(file), err)
			return nil
		}
		data, at = b, f["file"]
	default:
		if f["pem"] == nil && f["file"] == nil {
			d.Fail(n, path, "set pem (the key's PEM text) or file (a path to it)")
		}
		return nil
	}
	var k *Key
	var err error
	if hasFile {
		k, err = d.keyFile(file, data)
	} else {
		k, err = parseKey(data)
	}
	if err != nil {
		field := path + ".pem"
		if hasFile {
			field = path + ".file"
		}
		d.Fail(at, field, "%s", err)
		return nil
	}
	named := *k
	named.Name = nm
	if named.Name == "" {
		named.Name = k.Fingerprint
	}
	return &named
}

// keyFile parses a key file once per load, however many entries name it.
func (d *decoder) keyFile(file string, data []byte) (*Key, error) {
	path := d.resolve(file)
	if r, ok := d.keyFiles[path]; ok {
		return r.k, r.err
	}
	k, err := parseKey(data)
	if d.keyFiles == nil {
		d.keyFiles = map[string]keyParse{}
	}
	d.keyFiles[path] = keyParse{k, err}
	return k, err
}

// gpgRing checks and reads an armored OpenPGP key (once per load for a
// file); the problem is "" when it is a public key.
func (d *decoder) gpgRing(file string, data []byte) (openpgp.EntityList, string) {
	path := "\x00inline"
	if file != "" {
		path = d.resolve(file)
		if r, ok := d.gpgFiles[path]; ok {
			return r.el, r.problem
		}
	}
	el, problem := readRing(data)
	if file != "" {
		if d.gpgFiles == nil {
			d.gpgFiles = map[string]ringParse{}
		}
		d.gpgFiles[path] = ringParse{el, problem}
	}
	return el, problem
}

func readRing(data []byte) (openpgp.EntityList, string) {
	// The reader stops after the first armored block: a private key (or
	// another public key) pasted after it would be ignored in silence.
	if bytes.Contains(data, []byte("PRIVATE KEY BLOCK")) {
		return nil, "holds a private key: give the public key only"
	}
	if bytes.Count(data, []byte("-----BEGIN PGP")) > 1 {
		return nil, "holds more than one armored block: give each key its own entry"
	}
	el, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(data))
	if err != nil || len(el) == 0 {
		return nil, "not an ASCII-armored OpenPGP public key (-----BEGIN PGP PUBLIC KEY BLOCK-----)"
	}
	if slices.ContainsFunc(el, func(e *openpgp.Entity) bool { return e.PrivateKey != nil }) {
		return nil, "holds a private key: give the public key only"
	}
	return el, ""
}

func (d *decoder) keyless(n *yaml.Node, path string, s *Scope) {
	f := d.Fields(n, path, "trustedRoot", "identities")
	if n.Kind != yaml.MappingNode {
		return
	}
	file, ok := d.Str(f["trustedRoot"], path+".trustedRoot")
	if !ok && f["trustedRoot"] == nil {
		d.Fail(n, path+".trustedRoot", "is required: the path to a Sigstore trusted_root.json (cosign trusted-root create, or the public-good instance's from its TUF repository)")
	}
	if ok && keyText(file) {
		d.Fail(f["trustedRoot"], path+".trustedRoot", "holds text, not a path: give the path to a Sigstore trusted_root.json")
		ok = false
	}
	if ok {
		data, err := d.read(file, MaxTrustedRootBytes)
		if err != nil {
			d.Fail(f["trustedRoot"], path+".trustedRoot", "%s: %s", echo.Quote(file), err)
		} else if problem, err := d.trustedRoot(file, data); err != nil {
			d.Fail(f["trustedRoot"], path+".trustedRoot", "%s %s", echo.Quote(file), rootCheckFailure(err))
		} else if problem != "" {
			d.Fail(f["trustedRoot"], path+".trustedRoot", "%s is not a Sigstore trusted root (%s)", echo.Quote(file), oneLine(problem))
		} else {
			s.TrustedRootFile, s.TrustedRootJSON = file, data
		}
	}
	ids := d.List(f["identities"], path+".identities")
	if len(ids) == 0 && f["identities"] == nil {
		d.Fail(n, path+".identities", "is required: at least one {issuer, subject or subjectRegexp}")
	}
	if len(ids) > MaxIdentities {
		d.Fail(f["identities"], path+".identities", "%d identities, more than %d", len(ids), MaxIdentities)
		return
	}
	for i, in := range ids {
		p := fmt.Sprintf("%s.identities[%d]", path, i)
		g := d.Fields(in, p, "issuer", "subject", "subjectRegexp")
		if in.Kind != yaml.MappingNode {
			continue
		}
		var id Identity
		var okI, okS, okR bool
		id.Issuer, okI = d.Str(g["issuer"], p+".issuer")
		id.Subject, okS = d.Str(g["subject"], p+".subject")
		re, okR := d.Str(g["subjectRegexp"], p+".subjectRegexp")
		if !okI || id.Issuer == "" {
			if g["issuer"] == nil {
				d.Fail(in, p+".issuer", "is required: the OIDC issuer URL (https://token.actions.githubusercontent.com)")
			}
			continue
		}
		switch {
		case okS && okR:
			d.Fail(in, p, "set subject or subjectRegexp, not both")
			continue
		case okR:
			// Anchored: an unanchored expression would accept any subject
			// that contains it.
			r, err := regexp.Compile("^(?:" + re + ")$")
			if err != nil || len(re) > 1024 {
				d.Fail(g["subjectRegexp"], p+".subjectRegexp", "%s is not a regular expression (Go syntax)", echo.Quote(re))
				continue
			}
			if acceptsAnyone(r) {
				d.Fail(g["subjectRegexp"], p+".subjectRegexp", "%s accepts any subject (anyone the issuer vouches for): name the signer, e.g. https://github\\.com/myorg/.+@refs/tags/.+", echo.Quote(re))
				continue
			}
			id.SubjectRegexp = r
		case okS && id.Subject != "":
		default:
			d.Fail(in, p+".subject", "is required: the certificate's subject (an e-mail or a workflow URI), or subjectRegexp")
			continue
		}
		s.Identities = append(s.Identities, id)
	}
}

// gpg reads {lookaside, keys: [{name, armored | file}]}.
func (d *decoder) gpg(n *yaml.Node, path string) *GPG {
	f := d.Fields(n, path, "lookaside", "keys")
	if n.Kind != yaml.MappingNode {
		return nil
	}
	g := &GPG{}
	if u, ok := d.Str(f["lookaside"], path+".lookaside"); ok {
		pu, err := url.Parse(u)
		if err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" || pu.RawQuery != "" || pu.Fragment != "" {
			d.Fail(f["lookaside"], path+".lookaside", "%s is not an http(s) URL: write the lookaside server's base, e.g. https://registry.redhat.io/containers/sigstore", echo.Quote(RedactURL(u)))
		}
		g.Lookaside = strings.TrimSuffix(u, "/")
	} else if f["lookaside"] == nil {
		d.Fail(n, path+".lookaside", "is required: the base URL of the server keeping the signatures (registries.d's lookaside)")
	}
	keys := d.List(f["keys"], path+".keys")
	if len(keys) == 0 && f["keys"] == nil {
		d.Fail(n, path+".keys", "is required: at least one {name, armored or file} OpenPGP public key")
	}
	if len(keys) > MaxKeysPerScope {
		d.Fail(f["keys"], path+".keys", "%d keys, more than %d", len(keys), MaxKeysPerScope)
		return nil
	}
	for i, kn := range keys {
		p := fmt.Sprintf("%s.keys[%d]", path, i)
		g2 := d.Fields(kn, p, "name", "armored", "file")
		if kn.Kind != yaml.MappingNode {
			continue
		}
		nm, _ := d.Str(g2["name"], p+".name")
		text, hasText := d.Str(g2["armored"], p+".armored")
		file, hasFile := d.Str(g2["file"], p+".file")
		var data []byte
		field, at := p+".armored", g2["armored"]
		switch {
		case hasText && hasFile:
			d.Fail(kn, p, "set armored or file, not both")
			continue
		case hasText:
			data = []byte(text)
		case hasFile:
			field, at = p+".file", g2["file"]
			if keyText(file) {
				d.Fail(at, field, "holds key text, not a path: put the ASCII-armored public key under armored (never a private key)")
				continue
			}
			b, err := d.read(file, MaxKeyBytes)
			if err != nil {
				d.Fail(at, field, "%s: %s", echo.Quote(file), err)
				continue
			}
			data = b
		default:
			if g2["armored"] == nil && g2["file"] == nil {
				d.Fail(kn, p, "set armored (the key's ASCII-armored text) or file (a path to it)")
			}
			continue
		}
		src := ""
		if hasFile {
			src = file
		}
		el, problem := d.gpgRing(src, data)
		if problem != "" {
			d.Fail(at, field, "%s", problem)
			continue
		}
		if nm == "" {
			nm = fmt.Sprintf("%016X", el[0].PrimaryKey.KeyId)
		}
		g.Keys = append(g.Keys, &GPGKey{Name: nm, Entities: el, Armored: data})
	}
	return g
}

// acceptsAnyone reports whether an anchored subject expression matches
// subjects no admin meant to trust: an e-mail and a workflow URI of a
// stranger (".*", ".+", ".*@.*", "https://.*" all do).
func acceptsAnyone(r *regexp.Regexp) bool {
	for _, s := range []string{"stranger@evil.invalid", "https://evil.invalid/stranger/x/.github/workflows/x.yaml@refs/heads/main"} {
		if r.MatchString(s) {
			return true
		}
	}
	return false
}

// trustedRoot has a trusted root file parsed once per load
// (checkTrustedRoot).
func (d *decoder) trustedRoot(file string, data []byte) (problem string, err error) {
	path := d.resolve(file)
	if r, ok := d.parsedRoots[path]; ok {
		return r.problem, r.err
	}
	var r rootParse
	r.problem, r.err = checkTrustedRoot(data)
	if d.parsedRoots == nil {
		d.parsedRoots = map[string]rootParse{}
	}
	d.parsedRoots[path] = r
	return r.problem, r.err
}

// keyText reports whether a file field holds key text pasted in place of a
// path: such a value is never repeated in a message (it may be a private
// key).
func keyText(file string) bool {
	return strings.Contains(file, "-----BEGIN") || strings.ContainsAny(file, "\n\r")
}

// resolve names a key or root file: absolute, or relative to the policy's
// directory.
func (d *decoder) resolve(file string) string {
	if filepath.IsAbs(file) {
		return file
	}
	return filepath.Join(d.dir, file)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
