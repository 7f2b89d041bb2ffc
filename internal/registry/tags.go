package registry

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	mmsemver "github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

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
	list, lerr := c.Tags(ctx, t.Context(), TagBounds{Pages: maxTagPages, Time: tagListTimeout})
	tags, complete := list.Tags, list.Complete()
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

// TagBounds bound one tag listing. A registry pages its tag list (the
// distribution API's Link headers); a repository that publishes every
// build holds tens of thousands of tags, and a hostile one could page
// forever, one tag a page. Zero Pages or Tags is no bound on them.
type TagBounds struct {
	Pages int           // pages read, whatever each holds
	Tags  int           // distinct tags kept
	Time  time.Duration // the whole listing, every page included
}

// TagList is what Tags read: the repository's distinct tags in the
// registry's order, and how many listed names were not tags.
type TagList struct {
	Tags []string
	// Invalid counts the names the registry listed that are not tags (the
	// distribution grammar), left out so that a caller can say so.
	Invalid int
	// OverPages and OverTags say which bound stopped the listing before its
	// end; Tags then holds what was read (at most the Tags bound).
	OverPages, OverTags bool
}

// Complete reports whether the whole list was read.
func (l TagList) Complete() bool { return !l.OverPages && !l.OverTags }

// Tags lists the repository's tags, page after page of tagsPageSize,
// within b: a bound reached ends the listing without an error, and the
// list says which (a caller that needs every tag makes that its error).
// Only names a tag can have are kept: a registry's list is not trusted.
// A failure is one line without credentials; a 404 is a
// *TagsNotFoundError.
func (c *Client) Tags(ctx context.Context, repo name.Repository, b TagBounds) (TagList, error) {
	// The bound's cause names it: the transport words a stop by its
	// context's cause ("the deadline of the operation expired" names no
	// bound); a caller's earlier deadline keeps its own cause.
	ctx, cancel := context.WithTimeoutCause(ctx, b.Time, fmt.Errorf("the tag list took over %s, olm-cmp's bound on one listing (docs/operations.md, Limits): the registry is too slow, or pages without end", b.Time))
	defer cancel()
	var list TagList
	p, err := remote.NewPuller(append(c.RemoteOptions(ctx), remote.WithPageSize(tagsPageSize))...)
	if err != nil {
		return list, c.listError(ctx, repo, err)
	}
	lister, err := p.Lister(ctx, repo)
	if err != nil {
		return list, c.listError(ctx, repo, err)
	}
	seen := map[string]bool{}
	for page := 0; lister.HasNext(); page++ {
		if b.Pages > 0 && page == b.Pages {
			list.OverPages = true
			return list, nil
		}
		ts, err := lister.Next(ctx)
		if err != nil {
			return TagList{}, c.listError(ctx, repo, err)
		}
		for _, t := range ts.Tags {
			if !validTag(t) {
				list.Invalid++
				continue
			}
			if seen[t] {
				continue
			}
			if b.Tags > 0 && len(list.Tags) == b.Tags {
				list.OverTags = true
				return list, nil
			}
			seen[t] = true
			list.Tags = append(list.Tags, t)
		}
	}
	return list, nil
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

// listError makes a failed listing one line without credentials; a 404
// says the repository is not there.
func (c *Client) listError(ctx context.Context, repo name.Repository, err error) error {
	status, worded := 0, false
	if re := AsError(err); re != nil {
		worded = true
		if re.Reason == ReasonStatus {
			status = re.Status
		}
	}
	var te *transport.Error
	if status == 0 && errors.As(err, &te) {
		status = te.StatusCode
	}
	if status == http.StatusNotFound {
		return &TagsNotFoundError{Repository: repo.Name()}
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if !worded && (errors.As(err, &syntax) || errors.As(err, &typ) || errors.Is(err, io.ErrUnexpectedEOF)) {
		// The answer was not the distribution API's {"name", "tags"}: a
		// login page, a proxy's error, a hostile document.
		err = errors.New("the registry's answer to the tag list is not the distribution API's JSON tag list (a login page or a proxy in the way?): check the registry address")
	} else if errors.Is(err, context.DeadlineExceeded) && !worded {
		err = context.Cause(ctx)
	}
	return c.Error(repo.Name(), "listing the tags of", err)
}

// TagsNotFoundError is a registry's 404 on a repository's tag list.
type TagsNotFoundError struct{ Repository string }

func (e *TagsNotFoundError) Error() string {
	return fmt.Sprintf("repository %s not found (the registry answered 404 to its tag list): check the repository's name, and that your credentials may read it (--registry-config)", e.Repository)
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
