package versions

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	mmsemver "github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// Tag is a tag of a bundle repository that reads as a semantic version.
type Tag struct {
	Name    string
	Version *mmsemver.Version
}

// Bounds of one tag listing. A registry pages its tag list (the
// distribution API's Link headers); a repository that publishes every
// build holds tens of thousands of tags, and a hostile one could page
// forever, one tag a page.
const (
	// MaxTags is the most tags a listing reads: a repository with more
	// fails, as its newest versions could be among those not read
	// (registries list tags lexically, not by version).
	MaxTags = 250_000
	// maxPages bounds the pages, whatever each holds.
	maxPages = 5_000
	// tagsPageSize is what olm-cmp asks a page to hold; registries may
	// answer with fewer (Quay and Docker Hub cap pages at 100).
	tagsPageSize = 1000
	// ListTimeout bounds a whole listing, every page included.
	ListTimeout = 2 * time.Minute
)

// maxTags and maxPages are the bounds, lowered by tests.
var (
	maxTagsRead  = MaxTags
	maxPagesRead = maxPages
)

// ListTags lists the tags of the repository repo (an image reference's
// tag or digest is ignored), all pages of it, within MaxTags and
// ListTimeout: semverSorted are the tags that are semantic versions
// (MAJOR.MINOR.PATCH with an optional leading v, a pre-release, and build
// metadata after "_", as a tag cannot hold "+"),
// by version, lowest first (equal versions by name); other are the rest
// (latest, 1.2, sha256-….sig), sorted. opts are the registry access
// (bundle.ImageLoader.Repository gives the CLI's: ListTagsWith).
func ListTags(ctx context.Context, repo string, opts ...remote.Option) (semverSorted []Tag, other []string, err error) {
	r, err := parseRepository(repo)
	if err != nil {
		return nil, nil, err
	}
	sorted, other, err := listTags(ctx, r, opts)
	var rf *registryFailure
	if errors.As(err, &rf) {
		return nil, nil, fmt.Errorf("listing the tags of %s: %w", r.Name(), rf.err)
	}
	return sorted, other, err
}

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
		return name.Repository{}, fmt.Errorf("repository %s: %s", echo.Quote(ref), echo.Short(err.Error()))
	}
	return r, nil
}

// listTags pages through repo's tag list. The caller's options come first
// and olm-cmp's context last, so ListTimeout holds whatever they say.
func listTags(ctx context.Context, repo name.Repository, opts []remote.Option) ([]Tag, []string, error) {
	ctx, cancel := context.WithTimeout(ctx, ListTimeout)
	defer cancel()
	opts = append(slices.Clip(opts), remote.WithContext(ctx), remote.WithPageSize(tagsPageSize))
	p, err := remote.NewPuller(opts...)
	if err != nil {
		return nil, nil, err
	}
	lister, err := p.Lister(ctx, repo)
	if err != nil {
		return nil, nil, listError(repo, err)
	}
	seen := map[string]bool{}
	var all []string
	for page := 0; lister.HasNext(); page++ {
		if page == maxPagesRead {
			return nil, nil, fmt.Errorf("repository %s: its tag list runs over %d pages: not a tag list olm-cmp reads (the registry may be paging in a loop)", repo.Name(), maxPagesRead)
		}
		ts, err := lister.Next(ctx)
		if err != nil {
			return nil, nil, listError(repo, err)
		}
		for _, t := range ts.Tags {
			// Only what a tag can be: a registry's list is not trusted.
			if seen[t] || !validTag(t) {
				continue
			}
			seen[t] = true
			if all = append(all, t); len(all) > maxTagsRead {
				return nil, nil, fmt.Errorf("repository %s has over %d tags: olm-cmp lists at most %d (registries list tags by name, so the newest versions could be among those left out)", repo.Name(), maxTagsRead, maxTagsRead)
			}
		}
	}
	sorted, other := SortTags(all)
	return sorted, other, nil
}

// validTag is the distribution spec's tag grammar: [A-Za-z0-9_][A-Za-z0-9._-]{0,127}.
func validTag(t string) bool {
	if t == "" || len(t) > 128 || t[0] == '.' || t[0] == '-' {
		return false
	}
	return !strings.ContainsFunc(t, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-')
	})
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

// listError makes a failed listing one line; a 404 says the repository is
// not there.
func listError(repo name.Repository, err error) error {
	status, worded := registryStatus(err)
	var te *transport.Error
	if status == 0 && errors.As(err, &te) {
		status = te.StatusCode
	}
	if status == http.StatusNotFound {
		return &NotFoundError{Repository: repo.Name()}
	}
	if errors.Is(err, context.DeadlineExceeded) && !worded {
		err = fmt.Errorf("gave up after %s (the tag list's time bound) or at the caller's deadline", ListTimeout)
	}
	return &registryFailure{err}
}

// registryFailure is a registry call's error, which the caller words
// (ListTagsWith through the loader's redaction).
type registryFailure struct{ err error }

func (e *registryFailure) Error() string { return e.err.Error() }
func (e *registryFailure) Unwrap() error { return e.err }

// NotFoundError is a registry's 404 on a repository's tag list.
type NotFoundError struct{ Repository string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("repository %s not found (the registry answered 404 to its tag list): check the repository's name, and that your credentials may read it (--registry-config)", e.Repository)
}
