package registry

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/docker/cli/cli/config"
	"github.com/docker/cli/cli/config/types"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/olm-cmp/olm-cmp/internal/safefile"
)

// authFromConfig looks target up in a docker config file the way
// authn.DefaultKeychain does, including credential helpers the file names.
// Errors name the file but never echo its content.
func authFromConfig(r io.Reader, path string, target authn.Resource) (authn.Authenticator, error) {
	cf, err := config.LoadFromReader(r)
	if err != nil {
		return nil, fmt.Errorf("registry config %s: not a docker config.json: %w", path, err)
	}
	var empty types.AuthConfig
	for _, key := range []string{target.String(), target.RegistryStr()} {
		if key == name.DefaultRegistry {
			key = authn.DefaultAuthKey
		}
		cfg, err := cf.GetAuthConfig(key)
		if err != nil {
			return nil, fmt.Errorf("registry config %s: credentials for %s: %w", path, key, err)
		}
		cfg.ServerAddress = "" // set by GetAuthConfig; not a credential
		if cfg == empty {
			continue
		}
		return authn.FromConfig(authn.AuthConfig{
			Username:      cfg.Username,
			Password:      cfg.Password,
			Auth:          cfg.Auth,
			IdentityToken: cfg.IdentityToken,
			RegistryToken: cfg.RegistryToken,
		}), nil
	}
	return authn.Anonymous, nil
}

// ErrNotOneObject is ConfigHelpers' refusal of data that is not exactly
// one JSON object.
var ErrNotOneObject = errors.New("not exactly one JSON object")

// ConfigHelpers reads data as authFromConfig's loader (docker/cli's) reads
// a docker config.json and reports whether it names a credential helper
// (credsStore, credHelpers: a program the keychain would run). That loader
// decodes the first JSON value and ignores what follows it, so data must be
// exactly one JSON object with nothing after it (ErrNotOneObject
// otherwise), and the helpers are read from what the loader itself read,
// never from a decoding of our own that could disagree with it.
func ConfigHelpers(data []byte) (bool, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return false, ErrNotOneObject
	}
	if _, err := dec.Token(); err != io.EOF {
		return false, ErrNotOneObject
	}
	cf, err := config.LoadFromReader(bytes.NewReader(data))
	if err != nil {
		return false, fmt.Errorf("not a docker config.json: %w", echoless(err))
	}
	return cf.CredentialsStore != "" || len(cf.CredentialHelpers) > 0, nil
}

// echoless is err without the text of the file it may quote.
func echoless(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("invalid JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		return fmt.Errorf("field %s has the wrong type", typ.Field)
	}
	return errors.New("unreadable")
}

// fileKeychain reads credentials from one docker config file, chosen with
// --registry-config, with the same lookup as authn.DefaultKeychain (exact
// repository, then registry; docker.io under its legacy key). The file is
// read on every lookup: a Secret the kubelet mounts after the sidecar
// started, or rotates, is used from the next pull on.
type fileKeychain struct{ path string }

// MaxRegistryConfigBytes bounds a registry config file: docker configs are a
// few kilobytes; a bigger file is not one.
const MaxRegistryConfigBytes = 4 << 20

// CheckRegistryConfig says whether path, a --registry-config file, holds
// credentials to read: false without error when nothing is there (the
// deployments mount it from an optional Secret, which the kubelet mounts
// as an empty directory while the Secret does not exist), an error when
// something is there that is no file to read.
func CheckRegistryConfig(path string) (present bool, err error) {
	// Stat (through the links a Secret volume has) before opening: opening
	// a named pipe blocks until something writes to it.
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case errors.Is(err, fs.ErrPermission):
		return false, fmt.Errorf("%s: permission denied: make it readable by this user", path)
	case err != nil:
		return false, fmt.Errorf("%s: cannot be read: %v", path, errors.Unwrap(err))
	case !fi.Mode().IsRegular():
		return false, fmt.Errorf("%s: not a regular file: give a docker config.json", path)
	}
	return true, nil
}

func (k *fileKeychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	present, err := CheckRegistryConfig(k.path)
	if err != nil {
		return nil, fmt.Errorf("registry config %w", err)
	}
	if !present {
		return authn.Anonymous, nil
	}
	data, err := safefile.Read(k.path, MaxRegistryConfigBytes, true)
	var notRegular *safefile.NotRegularError
	var tooLarge *safefile.TooLargeError
	var pathErr *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist): // removed since the check
		return authn.Anonymous, nil
	case errors.As(err, &notRegular):
		return nil, fmt.Errorf("registry config %s: not a regular file: give a docker config.json", k.path)
	case errors.As(err, &tooLarge):
		return nil, fmt.Errorf("registry config %s: larger than %d bytes: not a docker config.json", k.path, MaxRegistryConfigBytes)
	case errors.As(err, &pathErr) && pathErr.Op == "read":
		return nil, fmt.Errorf("registry config %s: cannot be read", k.path)
	case err != nil:
		return nil, fmt.Errorf("registry config %s: cannot be opened", k.path)
	}
	return authFromConfig(bytes.NewReader(data), k.path, target)
}

// ConfigKeychain is a keychain over a docker config.json that read
// returns on every lookup (a tenant's, which the tenancy policy reads
// through its own root and checks): the lookup is the --registry-config
// file's; read's fs.ErrNotExist means no credentials; name names the file in
// errors, which never echo its content.
func ConfigKeychain(name string, read func() ([]byte, error)) authn.Keychain {
	return &readerKeychain{name: name, read: read}
}

type readerKeychain struct {
	name string
	read func() ([]byte, error)
}

func (k *readerKeychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	data, err := k.read()
	if errors.Is(err, fs.ErrNotExist) {
		return authn.Anonymous, nil
	}
	if err != nil {
		return nil, err
	}
	return authFromConfig(bytes.NewReader(data), k.name, target)
}

// recordingKeychain remembers every credential its keychain hands out, so
// that errors can be cleaned of them whatever a registry echoes back.
type recordingKeychain struct {
	inner   authn.Keychain
	secrets *secrets
}

func (k *recordingKeychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	a, err := k.inner.Resolve(target)
	if err != nil || a == nil {
		return a, err
	}
	return &recordingAuthenticator{inner: a, secrets: k.secrets}, nil
}

type recordingAuthenticator struct {
	inner   authn.Authenticator
	secrets *secrets
}

func (a *recordingAuthenticator) Authorization() (*authn.AuthConfig, error) {
	cfg, err := a.inner.Authorization()
	if cfg != nil {
		a.secrets.addConfig(cfg)
	}
	return cfg, err
}

// maxSecrets bounds the credentials a loader remembers; bearer tokens are
// new for every repository and expire, so the oldest are dropped.
const maxSecrets = 512

// minSecret is the shortest credential redacted as a literal: shorter ones
// would blank out ordinary words of messages, and are not secrets anyway.
const minSecret = 4

// secrets are the credentials a loader has sent (from its keychain and from
// the Authorization headers its transport sends), in every spelling a
// registry could echo them in: literal and base64. Safe for concurrent use.
type secrets struct {
	mu   sync.Mutex
	list []string // newest last
}

// addConfig records a keychain's answer: user name, password, tokens and
// the "auth" field (base64 of user:password).
func (s *secrets) addConfig(c *authn.AuthConfig) {
	user, pass := c.Username, c.Password
	if c.Auth != "" {
		if dec, err := base64.StdEncoding.DecodeString(c.Auth); err == nil {
			if u, p, ok := strings.Cut(string(dec), ":"); ok {
				user, pass = u, p
			}
		}
		s.add(c.Auth)
	}
	s.addBasic(user, pass)
	s.add(c.IdentityToken, c.RegistryToken)
}

func (s *secrets) addBasic(user, pass string) {
	if user == "" && pass == "" {
		return
	}
	s.add(user, pass)
	pair := []byte(user + ":" + pass)
	s.add(base64.StdEncoding.EncodeToString(pair), base64.RawStdEncoding.EncodeToString(pair), base64.URLEncoding.EncodeToString(pair))
	s.add(base64.StdEncoding.EncodeToString([]byte(pass)), base64.RawStdEncoding.EncodeToString([]byte(pass)))
}

// addAuthorization records the value of an Authorization header.
func (s *secrets) addAuthorization(h string) {
	scheme, value, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok {
		s.add(h)
		return
	}
	value = strings.TrimSpace(value)
	s.add(value)
	if strings.EqualFold(scheme, "basic") {
		if dec, err := base64.StdEncoding.DecodeString(value); err == nil {
			if u, p, ok := strings.Cut(string(dec), ":"); ok {
				s.addBasic(u, p)
			}
		}
	}
}

func (s *secrets) add(values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range values {
		if len(v) < minSecret {
			continue
		}
		if i := slices.Index(s.list, v); i >= 0 {
			s.list = slices.Delete(s.list, i, i+1)
		}
		s.list = append(s.list, v)
	}
	if over := len(s.list) - maxSecrets; over > 0 {
		s.list = slices.Delete(s.list, 0, over)
	}
}

// credentialPatterns find credentials by their shape, for those the loader
// never held (a registry echoing another client's header, a token it
// issued): the value after Basic or Bearer, and after a key such as
// password or token.
var credentialPatterns = sync.OnceValue(func() []credentialPattern {
	return []credentialPattern{
		{regexp.MustCompile(`(?i)\b(basic|bearer)(\s+)[A-Za-z0-9+/_.~=-]{4,}`), "$1$2[redacted]"},
		{regexp.MustCompile(`(?i)("?\b(?:authorization|proxy-authorization|password|passwd|secret|token|access_token|refresh_token|id_token|identitytoken|registrytoken|auth)"?\s*[:=]\s*"?)[^\s",;&}\][]+`), "${1}[redacted]"},
	}
})

type credentialPattern struct {
	re   *regexp.Regexp
	with string
}

// redact removes from text every credential recorded and every value that
// looks like one.
func (s *secrets) redact(text string) string {
	for _, p := range credentialPatterns() {
		text = p.re.ReplaceAllString(text, p.with)
	}
	s.mu.Lock()
	list := slices.Clone(s.list)
	s.mu.Unlock()
	// Longest first: a password inside its own base64 pair must not break
	// the pair's match.
	slices.SortFunc(list, func(a, b string) int { return len(b) - len(a) })
	for _, v := range list {
		text = strings.ReplaceAll(text, v, "[redacted]")
	}
	return text
}
