package versions

import (
	"context"
	"fmt"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/registry"
)

// NotFoundError is a registry's 404 on a repository's tag list.
type NotFoundError = registry.TagsNotFoundError

// ListTagsWith lists the tags of the repository ref names (an image
// reference's tag or digest is ignored), every page of it, through the
// loader's registry access (its allow-list, insecure registries,
// credentials and transport; no credential in an error), within MaxTags,
// maxPages and ListTimeout: semverSorted are the tags that are semantic
// versions (MAJOR.MINOR.PATCH with an optional leading v, a pre-release,
// and build metadata after "_", as a tag cannot hold "+"), by version,
// lowest first (equal versions by name); other are the rest (latest, 1.2,
// sha256-….sig), sorted; invalid counts the names the registry listed that
// are not tags, left out of both, so that a caller can say so. A listing a
// bound cut short fails: registries list tags by name, so the newest
// versions could be among those not read.
func ListTagsWith(ctx context.Context, l *bundle.ImageLoader, ref string) (semverSorted []Tag, other []string, invalid int, err error) {
	if _, err := parseRepository(ref); err != nil {
		return nil, nil, 0, err
	}
	r, err := l.Registry().Parse(ref)
	if err != nil {
		return nil, nil, 0, err
	}
	repo := r.Context()
	list, err := l.Registry().Tags(ctx, repo, registry.TagBounds{Pages: maxPagesRead, Tags: maxTagsRead, Time: listTimeout})
	switch {
	case err != nil:
		return nil, nil, 0, err
	case list.OverPages:
		return nil, nil, 0, fmt.Errorf("repository %s: its tag list runs over %d pages: not a tag list olm-cmp reads (the registry may be paging in a loop)", repo.Name(), maxPagesRead)
	case list.OverTags:
		return nil, nil, 0, fmt.Errorf("repository %s has over %d tags: olm-cmp lists at most %d (registries list tags by name, so the newest versions could be among those left out)", repo.Name(), maxTagsRead, maxTagsRead)
	}
	semverSorted, other = SortTags(list.Tags)
	return semverSorted, other, list.Invalid, nil
}
