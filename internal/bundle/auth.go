package bundle

import (
	"fmt"
	"io"

	"github.com/docker/cli/cli/config"
	"github.com/docker/cli/cli/config/types"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
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
