package versions

import (
	"context"
	"errors"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/registry"
)

// registryStatus is the HTTP status of a failed call through olm-cmp's
// registry transport (0 for another failure), and whether the transport
// worded the failure itself (a timeout, a stop) as a *registry.Error.
func registryStatus(err error) (status int, worded bool) {
	var re *registry.Error
	if !errors.As(err, &re) {
		return 0, false
	}
	if re.Reason == registry.ReasonStatus {
		return re.Status, true
	}
	return 0, true
}

// ListTagsWith is ListTags through the loader's registry access: its
// allow-list, insecure registries, credentials and transport, with
// credentials removed from errors. It is the one place internal/versions
// reaches a registry through olm-cmp's own access (with registryStatus:
// re-point both when registry access moves out of internal/bundle).
func ListTagsWith(ctx context.Context, l *bundle.ImageLoader, ref string) ([]Tag, []string, int, error) {
	if _, err := parseRepository(ref); err != nil {
		return nil, nil, 0, err
	}
	repo, opts, err := l.Repository(ctx, ref)
	if err != nil {
		return nil, nil, 0, err
	}
	sorted, other, invalid, err := listTags(ctx, repo, opts)
	var rf *registryFailure
	if errors.As(err, &rf) {
		return nil, nil, 0, l.Redact(repo.Name(), "listing the tags of", rf.err)
	}
	return sorted, other, invalid, err
}
