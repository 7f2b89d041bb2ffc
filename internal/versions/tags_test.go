package versions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
)

// tagServer is go-containerregistry's in-memory registry, whose tag list
// for repositories in tags is answered here instead, paginated as the
// distribution spec says (n, last, and a Link header to the next page),
// at most pageCap tags a page whatever n asks, as Quay and Docker Hub do.
type tagServer struct {
	host    string
	tags    map[string][]string // sorted
	pageCap int
	pages   atomic.Int64
	// loop, when set, makes every page link to the first one.
	loop bool
}

func newTagServer(t testing.TB, pageCap int, tags map[string][]string) *tagServer {
	ts := &tagServer{tags: tags, pageCap: pageCap}
	for _, l := range tags {
		slices.Sort(l)
	}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		repo, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/v2/"), "/tags/list")
		list, known := ts.tags[repo]
		if !ok || !known || r.Method != http.MethodGet {
			reg.ServeHTTP(w, r)
			return
		}
		ts.pages.Add(1)
		n := ts.pageCap
		if v, err := strconv.Atoi(r.URL.Query().Get("n")); err == nil && v < n {
			n = v
		}
		start := 0
		if last := r.URL.Query().Get("last"); last != "" {
			start, _ = slices.BinarySearch(list, last)
			if start < len(list) && list[start] == last {
				start++
			}
		}
		page := list[start:min(start+n, len(list))]
		if ts.loop || start+n < len(list) {
			last := ""
			if !ts.loop {
				last = page[len(page)-1]
			}
			w.Header().Set("Link", fmt.Sprintf(`</v2/%s/tags/list?n=%d&last=%s>; rel="next"`, repo, n, url.QueryEscape(last)))
		}
		json.NewEncoder(w).Encode(map[string]any{"name": repo, "tags": page})
	}))
	t.Cleanup(srv.Close)
	ts.host = strings.TrimPrefix(srv.URL, "http://")
	return ts
}

// insecure is a loader that reaches host (a test server) over plain HTTP.
func insecure(host string) *bundle.ImageLoader {
	return &bundle.ImageLoader{Insecure: []string{host}}
}

func tagNames(ts []Tag) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func TestListTagsPaginatedAndSorted(t *testing.T) {
	tags := []string{"v1.10.0", "v1.9.0", "1.2.3", "v2.0.0-rc.1", "v2.0.0", "latest", "1.2", "sha256-abc.sig", "v1.2.3", "v1.0.0_build.2", "v1.0.0_build.10", "v1_0"}
	ts := newTagServer(t, 3, map[string][]string{"org/widget-bundle": tags})
	semver, other, _, err := ListTagsWith(context.Background(), insecure(ts.host), ts.host+"/org/widget-bundle:v1.9.0")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"v1.0.0_build.10", "v1.0.0_build.2", "1.2.3", "v1.2.3", "v1.9.0", "v1.10.0", "v2.0.0-rc.1", "v2.0.0"}
	if got := tagNames(semver); !slices.Equal(got, want) {
		t.Errorf("semver tags %v\nwant %v", got, want)
	}
	if !slices.Equal(other, []string{"1.2", "latest", "sha256-abc.sig", "v1_0"}) {
		t.Errorf("other tags %v", other)
	}
	if ts.pages.Load() != 4 { // 12 tags, 3 a page
		t.Errorf("%d pages read, want 4", ts.pages.Load())
	}
	if semver[5].Version.Minor() != 10 {
		t.Errorf("version of %s: %v", semver[5].Name, semver[5].Version)
	}
}

func TestListTags100000(t *testing.T) {
	var tags []string
	for i := range 100_000 {
		if i%10 == 0 {
			tags = append(tags, fmt.Sprintf("build-%06d", i))
		} else {
			tags = append(tags, fmt.Sprintf("v%d.%d.%d", i/10000, i/100%100, i%100))
		}
	}
	ts := newTagServer(t, 1000, map[string][]string{"big": tags})
	semver, other, _, err := ListTagsWith(context.Background(), insecure(ts.host), ts.host+"/big")
	if err != nil {
		t.Fatal(err)
	}
	if len(semver) != 90_000 || len(other) != 10_000 || ts.pages.Load() != 100 {
		t.Errorf("%d semver, %d other tags, %d pages", len(semver), len(other), ts.pages.Load())
	}
	if semver[0].Name != "v0.0.1" || semver[len(semver)-1].Name != "v9.99.99" {
		t.Errorf("first %s, last %s", semver[0].Name, semver[len(semver)-1].Name)
	}
}

func TestListTagsBounds(t *testing.T) {
	var tags []string
	for i := range 50 {
		tags = append(tags, fmt.Sprintf("v1.0.%d", i))
	}
	ts := newTagServer(t, 10, map[string][]string{"many": tags})
	defer func(n, p int) { maxTagsRead, maxPagesRead = n, p }(maxTagsRead, maxPagesRead)
	maxTagsRead = 20
	if _, _, _, err := ListTagsWith(context.Background(), insecure(ts.host), ts.host+"/many"); err == nil ||
		err.Error() != "repository "+ts.host+"/many has over 20 tags: olm-cmp lists at most 20 (registries list tags by name, so the newest versions could be among those left out)" {
		t.Errorf("err = %v", err)
	}
	maxTagsRead = MaxTags
	ts.loop = true
	maxPagesRead = 30
	if _, _, _, err := ListTagsWith(context.Background(), insecure(ts.host), ts.host+"/many"); err == nil || !strings.Contains(err.Error(), "its tag list runs over 30 pages") {
		t.Errorf("err = %v", err)
	}
}

func TestListTags404(t *testing.T) {
	ts := newTagServer(t, 10, nil)
	_, _, _, err := ListTagsWith(context.Background(), insecure(ts.host), ts.host+"/org/nothing")
	var nf *NotFoundError
	if !errors.As(err, &nf) || err.Error() != "repository "+ts.host+"/org/nothing not found (the registry answered 404 to its tag list): check the repository's name, and that your credentials may read it (--registry-config)" {
		t.Errorf("err = %v", err)
	}
	// Through the loader's access too (its transport words statuses).
	l := &bundle.ImageLoader{Insecure: []string{ts.host}}
	if _, _, _, err := ListTagsWith(context.Background(), l, ts.host+"/org/nothing"); !errors.As(err, &nf) {
		t.Errorf("through the loader: %v", err)
	}
}

func TestListTagsWithLoader(t *testing.T) {
	host, _ := bundletest.NewAuthRegistry(t, "user", "s3cret-pass")
	bundletest.PushDir(t, host, "org/widget-bundle", "v1.0.0", "../bundle/testdata/good")
	bundletest.PushDir(t, host, "org/widget-bundle", "v1.1.0", "../bundle/testdata/good")
	bundletest.PushDir(t, host, "org/widget-bundle", "latest", "../bundle/testdata/good")

	// No credentials: the loader's words, without the password.
	l := &bundle.ImageLoader{Insecure: []string{host}, Keychain: authn.NewMultiKeychain()}
	_, _, _, err := ListTagsWith(context.Background(), l, host+"/org/widget-bundle")
	if err == nil || !strings.Contains(err.Error(), "listing the tags of image "+host+"/org/widget-bundle: registry "+host+" answered 401 Unauthorized") {
		t.Errorf("without credentials: %v", err)
	}
	// With them: the tags.
	l = &bundle.ImageLoader{Insecure: []string{host}, Keychain: basicKeychain{}}
	semver, other, _, err := ListTagsWith(context.Background(), l, host+"/org/widget-bundle:v1.0.0")
	if err != nil || !slices.Equal(tagNames(semver), []string{"v1.0.0", "v1.1.0"}) || !slices.Equal(other, []string{"latest"}) {
		t.Errorf("with credentials: %v %v %v", tagNames(semver), other, err)
	}
	// Not allowed: refused before any call.
	l = &bundle.ImageLoader{AllowedRegistries: []string{"quay.io"}}
	if _, _, _, err := ListTagsWith(context.Background(), l, host+"/org/widget-bundle"); err == nil || !strings.Contains(err.Error(), "registry not allowed") {
		t.Errorf("not allowed: %v", err)
	}
	// Plain HTTP to a registry not listed as insecure is refused.
	l = &bundle.ImageLoader{}
	if _, _, _, err := ListTagsWith(context.Background(), l, host+"/org/widget-bundle"); err == nil {
		t.Error("plain HTTP without --insecure-registry: no error")
	}
}

type basicKeychain struct{}

func (basicKeychain) Resolve(authn.Resource) (authn.Authenticator, error) {
	return &authn.Basic{Username: "user", Password: "s3cret-pass"}, nil
}
