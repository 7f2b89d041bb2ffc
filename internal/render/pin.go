package render

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// A pin is a digest that must equal what a tag (or a catalog) names today.
// It comes from spec.digest (what `olm-cmp resolve --write` writes beside
// spec.version) or from a reference written repo:tag@sha256:…. A tag moves
// and a version gets bumped: rendering the digest would then silently
// render another version than the spec says, and rendering the tag would
// silently drop the pin. Either is refused, with both digests and the fix
// (docs/spec.md, "Pinning").

// ImageParts splits an image reference as the user spelled it into its
// repository, tag and digest (each "" when absent): how render reads
// spec.bundle and spec.catalog, and how upgrade writes them back.
func ImageParts(ref string) (repo, tag, digest string, err error) {
	if _, err := name.ParseReference(ref, name.WithDefaultTag("")); err != nil {
		return "", "", "", err
	}
	repo, digest, _ = strings.Cut(ref, "@")
	if t, err := name.NewTag(repo, name.WithDefaultTag("")); err == nil && t.TagStr() != "" {
		repo, tag = strings.TrimSuffix(repo, ":"+t.TagStr()), t.TagStr()
	}
	return repo, tag, digest, nil
}

// imagePin is an image bundle's reference with its pin (see bundleRef).
type imagePin struct {
	// repo, tag: the repository as spelled and the tag (spec.bundle's or
	// spec.version); digest: the pin, "" when there is none.
	repo, tag, digest string
	// tagFrom names where the tag was written; pinFrom, where the digest.
	tagFrom, pinFrom string
}

// ref is what to resolve: repo:tag, or repo@digest without a tag, or the
// repository alone.
func (p imagePin) ref() string {
	switch {
	case p.tag != "":
		return p.repo + ":" + p.tag
	case p.digest != "":
		return p.repo + "@" + p.digest
	}
	return p.repo
}

// resolvePinned resolves the tag of p and checks it still names the pinned
// digest; without a tag, the digest is the pin and nothing moves. A pin
// that does not match is an error of its own (mismatch), not a registry
// error about the reference.
func (r *Renderer) resolvePinned(ctx context.Context, p imagePin) (bundle.Origin, error) {
	o, err := r.Loader.Resolve(ctx, p.ref())
	if err != nil {
		return bundle.Origin{}, fmt.Errorf("spec.bundle %s: %w", echo.Quote(p.ref()), err)
	}
	if p.digest == "" || p.tag == "" || o.Digest == p.digest {
		return o, nil
	}
	// Which versions the two images are tells a bump from a re-push (tags
	// need not be versions: "v1", "latest").
	pinned := r.imageVersion(ctx, p.repo+"@"+p.digest)
	now := ""
	if pinned != "" {
		now = r.imageVersion(ctx, o.Image)
	}
	return bundle.Origin{}, p.mismatch(o.Digest, pinned, now)
}

// PinError is a pin that no longer names what the spec asks for: Problem
// says what disagrees, Fix how to repair olm-cmp.yaml. Now is the digest
// the spec's version (its tag, or the catalog's choice) names today, and
// InDigestField says the pin is spec.digest rather than a digest written in
// a reference. A transport whose overrides set the version or the digest
// (the plugin's parameters) gives its own fix: running resolve --write on
// olm-cmp.yaml would pin the file's version, not the parameter's.
type PinError struct {
	Problem, Fix, Now string
	InDigestField     bool
}

func (e *PinError) Error() string { return e.Problem + ": " + e.Fix }

// mismatch is the error of a pin that the tag no longer names: now is the
// tag's digest; pinnedV and nowV the CSV versions of the pinned image and of
// the tag's ("" when unknown).
func (p imagePin) mismatch(now, pinnedV, nowV string) error {
	keep, unpin := "delete the version line", "delete the digest line"
	if p.tagFrom != "spec.version" {
		keep = fmt.Sprintf("drop the tag (%s@%s)", p.repo, p.digest)
	}
	if p.pinFrom != "spec.digest" {
		unpin = "drop the digest from spec.bundle"
	}
	tagged := p.repo + ":" + p.tag
	e := &PinError{Now: now, InDigestField: p.pinFrom == "spec.digest"}
	switch {
	case pinnedV != "" && nowV != "" && pinnedV != nowV:
		e.Problem = fmt.Sprintf("%s is %s but %s pins %s (%s); %s is %s (%s)", p.tagFrom, p.tag, p.pinFrom, pinnedV, p.digest, tagged, nowV, now)
		e.Fix = "run olm-cmp resolve --write to pin it, or " + unpin
	case pinnedV != "" && nowV != "":
		e.Problem = fmt.Sprintf("%s pins %s (%s), but the tag %s now points to %s (%s too)", p.pinFrom, p.digest, pinnedV, tagged, now, nowV)
		e.Fix = fmt.Sprintf("the tag moved since it was pinned; review the new image (olm-cmp diff --to-bundle %s), then run olm-cmp resolve --write to pin it, or %s to keep the pinned one", tagged, keep)
	default:
		e.Problem = fmt.Sprintf("%s pins %s, but %s (%s) is %s", p.pinFrom, p.digest, tagged, p.tagFrom, now)
		e.Fix = fmt.Sprintf("%s changed or the tag moved since the pin; run olm-cmp resolve --write to pin %s, or %s", p.tagFrom, now, unpin)
	}
	return e
}

// sameVersion compares an image tag with a CSV version: "v1.2.3" is 1.2.3.
func sameVersion(csv, tag string) bool {
	return strings.TrimPrefix(csv, "v") == strings.TrimPrefix(tag, "v")
}

// imageVersionTimeout bounds looking up which versions a stale pin and the
// tag's image are: it only makes an error clearer.
const imageVersionTimeout = 10 * time.Second

// imageVersion is the CSV version of image (repo@digest), for the message
// of a pin that no longer matches; "" when it cannot be read. The pinned
// image was rendered before, so it is usually in the cache.
func (r *Renderer) imageVersion(ctx context.Context, image string) string {
	_, digest, _ := strings.Cut(image, "@")
	ctx, cancel := context.WithTimeout(ctx, imageVersionTimeout)
	defer cancel()
	b, err := r.Loader.Load(ctx, bundle.Origin{Ref: image, Image: image, Digest: digest})
	if err != nil || b.CSV == nil {
		return ""
	}
	return b.CSV.Spec.Version.String()
}

// checkChosenPin checks spec.digest against the bundle a catalog chose.
func (r *Renderer) checkChosenPin(ctx context.Context, s spec.Spec, rv Resolved) error {
	if s.Digest == "" || rv.Origin.Digest == s.Digest {
		return nil
	}
	c := rv.Catalog
	asked := fmt.Sprintf("spec.version %q chose %s", s.Version, c.Version)
	if s.Version == "" {
		asked = "spec.version (empty: the newest) chose " + c.Version
	}
	repo := rv.Origin.Image
	if i := strings.LastIndex(repo, "@"); i >= 0 {
		repo = repo[:i]
	}
	pinned := r.imageVersion(ctx, repo+"@"+s.Digest)
	e := &PinError{Now: rv.Origin.Digest, InDigestField: true, Fix: "run olm-cmp resolve --write to pin it, or delete the digest line"}
	switch {
	case pinned != "" && !sameVersion(pinned, c.Version):
		e.Problem = fmt.Sprintf("%s but spec.digest pins %s (%s); spec.catalog %q gives %s as %s", asked, pinned, s.Digest, s.Catalog, c.Version, rv.Origin.Image)
	case pinned != "":
		e.Problem = fmt.Sprintf("spec.digest pins %s (%s), but spec.catalog %q now gives %s as %s", s.Digest, pinned, s.Catalog, c.Version, rv.Origin.Image)
		e.Fix = "the catalog changed that version's image since it was pinned; review it, then " + e.Fix
	default:
		e.Problem = fmt.Sprintf("spec.digest pins %s, but %s, whose image is %s", s.Digest, asked, rv.Origin.Image)
	}
	return e
}

// checkCatalogPin checks a catalog image written catalog:tag@sha256:…:
// its tag must still name that digest.
func (r *Renderer) checkCatalogPin(ctx context.Context, s spec.Spec) error {
	if IsDirRef(s.Catalog) || r.Loader == nil {
		return nil
	}
	repo, tag, digest, err := ImageParts(s.Catalog)
	if err != nil || tag == "" || digest == "" {
		return nil // a bad reference is openCatalog's to report
	}
	o, err := r.Loader.Resolve(ctx, repo+":"+tag)
	if err != nil {
		return fmt.Errorf("spec.catalog %s: checking its tag still names its digest: %w", echo.Quote(s.Catalog), err)
	}
	if o.Digest == digest {
		return nil
	}
	return fmt.Errorf("spec.catalog %q: the tag %s now points to %s, not the pinned %s: run olm-cmp resolve --write (it pins the chosen bundle in spec.digest and lets the catalog's tag move), or drop the tag (%s@%s) to keep this catalog",
		s.Catalog, tag, o.Digest, digest, repo, digest)
}

// Unpinned is s without its pins, for `olm-cmp resolve`, which asks what
// the spec's tags and version name today: spec.digest cleared, and the
// digest dropped from a bundle or catalog reference that has a tag (or,
// for a bundle, a spec.version) to resolve instead. A reference pinned by
// digest alone keeps it: there is nothing else to resolve.
func Unpinned(s spec.Spec) spec.Spec {
	s.Digest = ""
	if !IsDirRef(s.Bundle) {
		if repo, tag, digest, err := ImageParts(s.Bundle); err == nil && digest != "" && (tag != "" || s.Version != "") {
			s.Bundle = repo
			if tag != "" {
				s.Bundle += ":" + tag
			}
		}
	}
	if s.Catalog != "" && !IsDirRef(s.Catalog) {
		if repo, tag, digest, err := ImageParts(s.Catalog); err == nil && digest != "" && tag != "" {
			s.Catalog = repo + ":" + tag
		}
	}
	return s
}
