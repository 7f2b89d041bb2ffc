package registry

import (
	"context"
	"slices"
	"strings"
	"testing"

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
