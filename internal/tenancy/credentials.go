package tenancy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/registry"
	"github.com/olm-cmp/olm-cmp/internal/safefile"
)

// ReadCredentials reads a project's docker config, name, below dir (the
// policy's CredentialsDir) through an os.Root: a link leading out of the
// directory is refused, as is anything but a regular file (a FIFO would
// block the reader), a file over registry.MaxRegistryConfigBytes, one owned
// by another user than root or this process's (someone else's file, which
// they could rewrite), one others may write, and one naming a credential
// helper (a program the sidecar would run for a tenant). A file that does not
// exist is fs.ErrNotExist: no credentials yet (an optional Secret not yet
// created). Errors name the file as the policy does, never the directory.
func ReadCredentials(dir, name string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("registryConfig %s: its credentialsDir cannot be opened", echo.Quote(name))
	}
	defer root.Close()
	fi, err := root.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, err
	case err != nil:
		// os.Root refuses a link out of dir with an error of its own.
		return nil, fmt.Errorf("registryConfig %s: cannot be read below credentialsDir (a link leading out of it?): mount the credentials Secret there", echo.Quote(name))
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("registryConfig %s: is %s, not a regular file: give a docker config.json", echo.Quote(name), safefile.Kind(fi.Mode()))
	case fi.Size() > registry.MaxRegistryConfigBytes:
		return nil, fmt.Errorf("registryConfig %s: larger than %d bytes: not a docker config.json", echo.Quote(name), registry.MaxRegistryConfigBytes)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if st.Uid != 0 && int(st.Uid) != os.Geteuid() {
			return nil, fmt.Errorf("registryConfig %s: owned by uid %d, neither root nor this sidecar's user: mount it from a Secret", echo.Quote(name), st.Uid)
		}
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("registryConfig %s: writable by others (mode %04o): mount it from a Secret (read-only)", echo.Quote(name), fi.Mode().Perm())
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("registryConfig %s: cannot be opened", echo.Quote(name))
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !os.SameFile(fi, now) {
		return nil, fmt.Errorf("registryConfig %s: changed while it was read: try again", echo.Quote(name))
	}
	data, err := io.ReadAll(io.LimitReader(f, registry.MaxRegistryConfigBytes+1))
	if err != nil || len(data) > registry.MaxRegistryConfigBytes {
		return nil, fmt.Errorf("registryConfig %s: cannot be read", echo.Quote(name))
	}
	// Judged as the keychain's loader reads it: a file it would read
	// otherwise than a check of our own (trailing bytes, a second value)
	// is refused, never skipped.
	helpers, err := registry.ConfigHelpers(data)
	switch {
	case errors.Is(err, registry.ErrNotOneObject):
		return nil, fmt.Errorf("registryConfig %s: is not exactly one JSON object (a docker config.json, nothing after it): give the file docker login writes", echo.Quote(name))
	case err != nil:
		return nil, fmt.Errorf("registryConfig %s: %s: give the file docker login writes", echo.Quote(name), err)
	case helpers:
		return nil, fmt.Errorf("registryConfig %s: names a credential helper (credsStore, credHelpers), a program the sidecar would run: give the credentials themselves (auths)", echo.Quote(name))
	}
	return data, nil
}

// Keychain is the registry keychain of a project entry: its registryConfig
// read on every lookup (a rotated Secret is used from the next pull on), no
// credentials while it does not exist; nil for an entry granted the
// sidecar's own credentials (the caller keeps them).
func (p *Policy) Keychain(e *Project) authn.Keychain {
	if e.SidecarCredentials {
		return nil
	}
	if e.RegistryConfig == "" {
		return anonymous{}
	}
	dir, name := p.CredentialsDir, e.RegistryConfig
	return registry.ConfigKeychain(name, func() ([]byte, error) { return ReadCredentials(dir, name) })
}

// anonymous is the keychain of a project without credentials.
type anonymous struct{}

func (anonymous) Resolve(authn.Resource) (authn.Authenticator, error) { return authn.Anonymous, nil }
