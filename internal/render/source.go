package render

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// IsDirRef tells a bundle directory from an image reference. Only explicit
// paths count as directories, so an image reference can never be mistaken for
// a directory that happens to exist (or the other way round).
func IsDirRef(ref string) bool {
	return ref == "." || ref == ".." || strings.HasPrefix(ref, "./") || strings.HasPrefix(ref, "../") || filepath.IsAbs(ref)
}

// BundleRef returns the directory (absolute, symlinks resolved, inside
// RootDir) or the image reference (with spec.version applied as its tag) that
// the spec names. Callers that cache renders use it to know what to key on.
// A catalog spec has no bundle reference until its catalog is read: see
// ChooseBundle.
func BundleRef(req Request) (ref string, isDir bool, err error) {
	s := req.Spec
	if s.Catalog != "" {
		return "", false, fmt.Errorf("spec.catalog %q: the bundle is chosen from the catalog, not named by spec.bundle", s.Catalog)
	}
	if IsDirRef(s.Bundle) {
		if s.Version != "" {
			return "", false, fmt.Errorf("spec.version %q: only image references take a version; spec.bundle %q is a directory", s.Version, s.Bundle)
		}
		dir, err := localDir(req, "spec.bundle", s.Bundle, "give a directory holding manifests/ and metadata/")
		return dir, true, err
	}
	return imageRef(s.Bundle, s.Version)
}

// localDir locates the directory p that the spec field names: relative to the
// source directory, symlinks resolved, and inside RootDir when set. hint says
// what the directory should hold.
func localDir(req Request, field, p, hint string) (string, error) {
	named := p
	if !filepath.IsAbs(p) {
		base := req.SourceDir
		if base == "" {
			base = "."
		}
		p = filepath.Join(base, p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%s %q: %w", field, named, err)
	}
	what := strings.TrimPrefix(field, "spec.")
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%s %q: %s directory not found (%s): %s, relative to the directory of olm-cmp.yaml", field, named, what, abs, hint)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s %q: %s is not a directory", field, named, abs)
	}
	if req.RootDir != "" {
		root, err := filepath.Abs(req.RootDir)
		if err == nil {
			// real is absolute: a relative root would never contain it.
			root, err = filepath.EvalSymlinks(root)
		}
		if err != nil {
			return "", fmt.Errorf("repository root %s: %w", req.RootDir, err)
		}
		if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return "", fmt.Errorf("%s %q: the %s directory must be inside the repository", field, named, what)
		}
	}
	return real, nil
}

// imageRef applies spec.version as the tag of an image reference without one.
func imageRef(ref, version string) (string, bool, error) {
	if strings.ContainsAny(ref, " \t\n") {
		return "", false, fmt.Errorf("spec.bundle %q: not an image reference (contains white space)", ref)
	}
	tag, hasTag, hasDigest := refTag(ref)
	switch {
	case version == "":
		return ref, false, nil
	case hasDigest:
		return "", false, fmt.Errorf("spec.version %q conflicts with spec.bundle %q, which is pinned by digest: remove one", version, ref)
	case hasTag && tag != version:
		return "", false, fmt.Errorf("spec.version %q conflicts with the tag %q of spec.bundle %q: remove one", version, tag, ref)
	case hasTag:
		return ref, false, nil
	}
	return ref + ":" + version, false, nil
}

// refTag splits the tag off an image reference. A ':' only starts a tag in the
// last path segment (registry host:port come before the first '/').
func refTag(ref string) (tag string, hasTag, hasDigest bool) {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref, hasDigest = ref[:i], true
	}
	last := ref[strings.LastIndex(ref, "/")+1:]
	if i := strings.LastIndex(last, ":"); i >= 0 {
		return last[i+1:], true, hasDigest
	}
	return "", false, hasDigest
}
