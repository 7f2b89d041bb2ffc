package versions

import (
	"context"
	"errors"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// ListTagsWith is ListTags through the loader's registry access: its
// allow-list, insecure registries, credentials and transport, with
// credentials removed from errors. It is the one place internal/versions
// reaches a registry through olm-cmp's own access.
func ListTagsWith(ctx context.Context, l *bundle.ImageLoader, ref string) ([]Tag, []string, error) {
	repo, opts, err := l.Repository(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	sorted, other, err := listTags(ctx, repo, opts)
	var rf *registryFailure
	if errors.As(err, &rf) {
		return nil, nil, l.Redact(repo.Name(), "listing the tags of", rf.err)
	}
	return sorted, other, err
}
