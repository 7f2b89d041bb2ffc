package registry

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	mmsemver "github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/olm-cmp/olm-cmp/internal/editdist"
)

// A tag that does not exist answers 404 with nothing a user can act on.
// The repository's tag list (the registry API's tags/list, paginated) says
// which tags do exist; the ones nearest the missing tag go in the message.
// The list is bounded: a repository may hold tens of thousands of tags, and
// the suggestion must not cost more than the failed render it explains.
const (
	tagsPageSize   = 1000
	maxTagPages    = 5
	nearestShown   = 5
	tagListTimeout = 10 * time.Second
)

// missingTag returns "; tag T does not exist: nearest tags are …" for a
// resolve of tag r that failed with err, when err is a registry's 404 and
// the repository's tags can be listed; else "".
func (c *Client) missingTag(ctx context.Context, r name.Reference, err error) string {
	t, ok := r.(name.Tag)
	re := AsError(err)
	if !ok || re == nil || re.Status != http.StatusNotFound {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, tagListTimeout)
	defer cancel()
	tags, complete, lerr := c.Tags(ctx, t.Context())
	if lerr != nil {
		return "" // the repository itself may not exist: the 404 says enough
	}
	if len(tags) == 0 {
		return fmt.Sprintf("; the repository %s has no tags", t.Context().Name())
	}
	near := nearestTags(t.TagStr(), tags, nearestShown)
	of := fmt.Sprintf("%d tags", len(tags))
	if !complete {
		of = fmt.Sprintf("the first %d tags", len(tags))
	}
	return fmt.Sprintf("; tag %q does not exist: the nearest of %s in %s are %s", t.TagStr(), of, t.Context().Name(), strings.Join(near, ", "))
}

// Tags lists the repository's tags, reading at most maxTagPages pages of
// tagsPageSize; complete is false when more remain. Only names a tag can
// have are kept: a registry's list is not trusted.
func (c *Client) Tags(ctx context.Context, repo name.Repository) (tags []string, complete bool, err error) {
	p, err := remote.NewPuller(append(c.RemoteOptions(ctx), remote.WithPageSize(tagsPageSize))...)
	if err != nil {
		return nil, false, err
	}
	lister, err := p.Lister(ctx, repo)
	if err != nil {
		return nil, false, err
	}
	for page := 0; lister.HasNext(); page++ {
		if page == maxTagPages {
			return tags, false, nil
		}
		ts, err := lister.Next(ctx)
		if err != nil {
			return nil, false, err
		}
		for _, t := range ts.Tags {
			// Only what a tag can be: a registry's list is not trusted.
			if _, err := name.NewTag(repo.Name()+":"+t, name.StrictValidation); err == nil {
				tags = append(tags, t)
			}
		}
	}
	return tags, true, nil
}

// nearestTags returns at most n of tags nearest want: by version when want
// and the tag are versions (1.2.4 is nearer 1.2.3 and 1.2.5 than 1.3.0),
// else by edit distance; ties in tag order.
func nearestTags(want string, tags []string, n int) []string {
	wv, werr := mmsemver.NewVersion(want)
	type scored struct {
		tag          string
		semver       bool
		major, minor uint64
		patch        float64
		dist         int
	}
	abs := func(a, b uint64) uint64 {
		if a > b {
			return a - b
		}
		return b - a
	}
	var all []scored
	for _, t := range slices.Compact(slices.Sorted(slices.Values(tags))) {
		s := scored{tag: t, dist: editdist.Distance(want, t)}
		if tv, err := mmsemver.NewVersion(t); werr == nil && err == nil {
			s.semver = true
			s.major, s.minor = abs(wv.Major(), tv.Major()), abs(wv.Minor(), tv.Minor())
			s.patch = float64(abs(wv.Patch(), tv.Patch()))
			if tv.Prerelease() != wv.Prerelease() {
				s.patch += 0.5 // a release is nearer a release than a pre-release is
			}
		}
		all = append(all, s)
	}
	slices.SortStableFunc(all, func(a, b scored) int {
		if a.semver != b.semver {
			if a.semver {
				return -1
			}
			return 1
		}
		if a.semver {
			if c := cmp.Or(cmp.Compare(a.major, b.major), cmp.Compare(a.minor, b.minor), cmp.Compare(a.patch, b.patch)); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.dist, b.dist)
	})
	out := make([]string, 0, n)
	for _, s := range all[:min(n, len(all))] {
		out = append(out, s.tag)
	}
	return out
}
