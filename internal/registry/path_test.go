package registry

import (
	"errors"
	"testing"
)

// TestParseRefusesUncleanPaths: a repository path with an empty, "." or
// ".." component is refused before any network call; go-containerregistry's
// parser alone accepts them (it checks characters only), and a registry
// that cleans paths would serve another repository for them.
func TestParseRefusesUncleanPaths(t *testing.T) {
	c := New(Options{})
	for _, ref := range []string{
		"registry.example.com/team-a/../team-b/op:v1",
		"registry.example.com/team-a/./op:v1",
		"registry.example.com/team-a//op:v1",
		"registry.example.com/team-a/..:v1",
		"registry.example.com/../team-b@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	} {
		_, err := c.Parse(ref)
		if !errors.Is(err, ErrUncleanPath) {
			t.Errorf("%s: got %v, want the unclean path refusal", ref, err)
		}
	}
	for _, ref := range []string{"registry.example.com/team-a/op:v1", "registry.example.com/team-a/op.x:v1", "docker.io/busybox:1"} {
		if _, err := c.Parse(ref); err != nil {
			t.Errorf("%s: %v", ref, err)
		}
	}
	_, err := c.Parse("registry.example.com/team-a/../team-b/op:v1")
	want := `image reference "registry.example.com/team-a/../team-b/op:v1": repository path "team-a/../team-b/op" has an empty, "." or ".." component, which the image reference grammar forbids (a registry may serve another repository for it): write the repository path without it`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}
