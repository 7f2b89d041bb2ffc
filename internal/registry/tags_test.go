package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
)

// A tag that does not exist lists the repository's nearest tags, read from
// a real (in-process) registry.
func TestMissingTagListsNearestTags(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	img := bundletest.Image(t)
	for _, tag := range []string{"1.2.3", "1.2.5", "1.3.0", "0.9.0", "2.0.0", "latest", "1.2.5-rc.1"} {
		bundletest.Push(t, host, "org/op-bundle", tag, img)
	}
	c := New(Options{Insecure: []string{host}})
	ref := host + "/org/op-bundle:1.2.4"
	_, err := c.Resolve(context.Background(), ref)
	if err == nil {
		t.Fatal("a missing tag resolved")
	}
	want := `; tag "1.2.4" does not exist: the nearest of 7 tags in ` + host + `/org/op-bundle are 1.2.3, 1.2.5, 1.2.5-rc.1, 1.3.0, 2.0.0`
	if !strings.HasPrefix(err.Error(), "resolving image "+ref+": ") || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("got\n%v\nwant it to end in\n%s", err, want)
	}

	// A repository that does not exist: the 404 alone.
	_, err = c.Resolve(context.Background(), host+"/org/nothing:1.0.0")
	if err == nil || strings.Contains(err.Error(), "nearest") {
		t.Errorf("missing repository: %v", err)
	}
}

func TestNearestTags(t *testing.T) {
	tags := []string{"v1.0.0", "v1.1.0", "v1.10.0", "v2.0.0", "latest", "main", "v1.0.1"}
	for _, tc := range []struct {
		want string
		n    int
		out  []string
	}{
		{"v1.0.2", 3, []string{"v1.0.1", "v1.0.0", "v1.1.0"}},
		{"lates", 2, []string{"latest", "main"}},
		{"v1.9.0", 2, []string{"v1.10.0", "v1.1.0"}},
	} {
		if got := nearestTags(tc.want, tags, tc.n); !slices.Equal(got, tc.out) {
			t.Errorf("nearestTags(%q) = %q, want %q", tc.want, got, tc.out)
		}
	}
}

// pagingServer answers GET /v2/org/w/tags/list from tags, perPage a page
// (whatever n asks, as Quay and Docker Hub cap pages), linking each page
// to the next; anything else under /v2/org/ is a 404.
func pagingServer(t *testing.T, perPage int, tags []string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/" {
			return
		}
		if r.URL.Path != "/v2/org/w/tags/list" {
			http.NotFound(w, r)
			return
		}
		start, _ := strconv.Atoi(r.URL.Query().Get("last"))
		end := min(start+perPage, len(tags))
		if end < len(tags) {
			w.Header().Set("Link", fmt.Sprintf(`</v2/org/w/tags/list?last=%d>; rel="next"`, end))
		}
		json.NewEncoder(w).Encode(map[string]any{"name": "org/w", "tags": tags[start:end]})
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// One lister, its bounds the caller's: a bound reached is not an error,
// the list says which one; names that are not tags are counted and left
// out, a tag listed twice is kept once.
func TestTagsBounds(t *testing.T) {
	tags := []string{"v1.0.0", "-bad", "v1.0.0", "v1.1.0", "x\u202ey", "v1.2.0", "latest", "v2.0.0"}
	host := pagingServer(t, 2, tags)
	c := New(Options{Insecure: []string{host}})
	repo, err := name.NewRepository(host+"/org/w", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		b                   TagBounds
		want                string
		invalid             int
		overPages, overTags bool
	}{
		{TagBounds{Time: time.Minute}, "v1.0.0,v1.1.0,v1.2.0,latest,v2.0.0", 2, false, false},
		{TagBounds{Pages: 2, Time: time.Minute}, "v1.0.0,v1.1.0", 1, true, false},
		{TagBounds{Tags: 3, Time: time.Minute}, "v1.0.0,v1.1.0,v1.2.0", 2, false, true},
		{TagBounds{Pages: 4, Tags: 5, Time: time.Minute}, "v1.0.0,v1.1.0,v1.2.0,latest,v2.0.0", 2, false, false},
	} {
		l, err := c.Tags(ctx, repo, tc.b)
		if err != nil || strings.Join(l.Tags, ",") != tc.want || l.Invalid != tc.invalid || l.OverPages != tc.overPages || l.OverTags != tc.overTags || l.Complete() != (!tc.overPages && !tc.overTags) {
			t.Errorf("%+v: %+v, %v", tc.b, l, err)
		}
	}
	missing, _ := name.NewRepository(host+"/org/nothing", name.Insecure)
	_, err = c.Tags(ctx, missing, TagBounds{Time: time.Minute})
	var nf *TagsNotFoundError
	if !errors.As(err, &nf) || nf.Repository != host+"/org/nothing" {
		t.Errorf("404: %v", err)
	}
}

// The suggestion reads at most maxTagPages pages and says it read the
// first N tags when more remain.
func TestMissingTagFromFirstPages(t *testing.T) {
	var tags []string
	for i := range 2 * (maxTagPages + 1) {
		tags = append(tags, fmt.Sprintf("1.0.%d", i))
	}
	host := pagingServer(t, 2, tags)
	c := New(Options{Insecure: []string{host}})
	r, _ := name.ParseReference(host+"/org/w:1.0.99", name.Insecure)
	note := c.missingTag(context.Background(), r, &Error{Reason: ReasonStatus, Status: http.StatusNotFound})
	want := `; tag "1.0.99" does not exist: the nearest of the first 10 tags in ` + host + `/org/w are 1.0.9, 1.0.8, 1.0.7, 1.0.6, 1.0.5`
	if note != want {
		t.Errorf("got  %s\nwant %s", note, want)
	}
}
