package bundle

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// Repository gives a package that makes its own registry calls
// (internal/versions lists a repository's tags) this loader's registry
// access: ref (a repository, or an image reference whose repository is
// meant) parsed as the loader parses images (the allow-list, insecure
// registries), and the go-containerregistry options of the loader's calls
// (credentials, the transport with its timeouts, retries, bounded and
// redacted error bodies and plain-HTTP refusal). Errors of calls made with
// them go through Redact.
func (l *ImageLoader) Repository(ctx context.Context, ref string) (name.Repository, []remote.Option, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		repo, rerr := name.NewRepository(ref)
		if rerr != nil {
			return name.Repository{}, nil, fmt.Errorf("repository %s: %s", echo.Quote(ref), echo.Short(err.Error()))
		}
		r = repo.Tag("latest")
	}
	if err := l.checkAllowed(ref, r); err != nil {
		return name.Repository{}, nil, err
	}
	repo := r.Context()
	if l.insecure(repo.RegistryStr()) {
		if repo, err = name.NewRepository(repo.Name(), name.Insecure); err != nil {
			return name.Repository{}, nil, fmt.Errorf("repository %s: %s", echo.Quote(ref), echo.Short(err.Error()))
		}
	}
	return repo, l.remoteOptions(ctx), nil
}

// Redact is err as one line, the most telling registry failure first,
// without the credentials this loader has sent; doing says what failed
// ("listing the tags of").
func (l *ImageLoader) Redact(ref, doing string, err error) error {
	return l.registryError(ref, doing, err)
}
