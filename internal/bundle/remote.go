package bundle

import (
	"context"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Repository gives a package that makes its own registry calls
// (internal/versions lists a repository's tags) this loader's registry
// access: ref (a repository, or an image reference whose repository is
// meant) parsed as the loader parses images (the allow-list, insecure
// registries), and the go-containerregistry options of the loader's calls.
// Errors of calls made with them go through Redact.
func (l *ImageLoader) Repository(ctx context.Context, ref string) (name.Repository, []remote.Option, error) {
	r, err := l.Registry().Parse(ref)
	if err != nil {
		return name.Repository{}, nil, err
	}
	return r.Context(), l.Registry().RemoteOptions(ctx), nil
}

// Redact is err as one line without the credentials this loader has sent.
func (l *ImageLoader) Redact(ref, doing string, err error) error {
	return l.Registry().Error(ref, doing, err)
}
