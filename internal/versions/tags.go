package versions

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	mmsemver "github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// Tag is a tag of a bundle repository that reads as a semantic version.
type Tag struct {
	Name    string
	Version *mmsemver.Version
}

// Bounds of the listing of `olm-cmp versions` and `upgrade`, which need
// every tag (registry.Client.Tags lists them, registry.TagBounds says why
// a listing is bounded).
const (
	// MaxTags is the most tags a listing reads: a repository with more
	// fails, as its newest versions could be among those not read
	// (registries list tags lexically, not by version).
	MaxTags = 250_000
	// maxPages bounds the pages, whatever each holds (registry asks for
	// 1000 tags a page; Quay and Docker Hub answer with at most 100).
	maxPages = 5_000
	// ListTimeout bounds a whole listing, every page included.
	ListTimeout = 2 * time.Minute
)

// maxTags, maxPages and ListTimeout are the bounds, lowered by tests.
var (
	maxTagsRead  = MaxTags
	maxPagesRead = maxPages
	listTimeout  = ListTimeout
)

// RepositoryName is the repository ref names (a tag or digest dropped), as
// the registry names it: index.docker.io/library/x for docker.io/x.
func RepositoryName(ref string) (string, error) {
	r, err := parseRepository(ref)
	if err != nil {
		return "", err
	}
	return r.Name(), nil
}

func parseRepository(ref string) (name.Repository, error) {
	if r, err := name.ParseReference(ref); err == nil {
		return r.Context(), nil
	}
	r, err := name.NewRepository(ref)
	if err != nil {
		return name.Repository{}, RepositoryError(ref)
	}
	return r, nil
}

// RepositoryError says why ref is not a repository reference, in the
// terms of its grammar rather than go-containerregistry's "could not
// parse reference".
func RepositoryError(ref string) error {
	hint := "a repository is registry/path (quay.io/org/operator-bundle), its path 2 to 255 lowercase letters, digits and . _ - / (a :tag or @sha256:digest after it is ignored)"
	if l := strings.ToLower(ref); l != ref {
		if _, err := name.ParseReference(l); err == nil {
			hint = "a repository's path is lowercase: give " + echo.Short(l)
		}
	}
	return fmt.Errorf("repository %s is not an image repository reference: %s", echo.Quote(ref), hint)
}

// SortTags splits tags into semantic versions, sorted lowest first, and
// the rest, sorted by name.
func SortTags(tags []string) (semverSorted []Tag, other []string) {
	for _, t := range tags {
		if v := tagVersion(t); v != nil {
			semverSorted = append(semverSorted, Tag{Name: t, Version: v})
		} else {
			other = append(other, t)
		}
	}
	slices.SortFunc(semverSorted, func(a, b Tag) int {
		return cmp.Or(a.Version.Compare(b.Version), strings.Compare(a.Version.Metadata(), b.Version.Metadata()), strings.Compare(a.Name, b.Name))
	})
	slices.Sort(other)
	return semverSorted, other
}

// tagVersion reads a tag as a full semantic version, v-prefixed or not;
// nil when it is not one. A tag cannot hold "+", so build metadata is
// written after "_" (1.0.0_build.2), as Helm and operator-sdk push it.
// Masterminds' NewVersion would also read 1.2 and 1 as 1.2.0 and 1.0.0,
// but such tags float (they move to each patch release): they are not
// versions of one bundle.
func tagVersion(t string) *mmsemver.Version {
	s := strings.Replace(strings.TrimPrefix(t, "v"), "_", "+", 1)
	v, err := mmsemver.StrictNewVersion(s)
	if err != nil {
		return nil
	}
	return v
}
