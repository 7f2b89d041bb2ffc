package render

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// isDirRef tells a bundle directory from an image reference. Only explicit
// paths count as directories, so an image reference can never be mistaken for
// a directory that happens to exist (or the other way round).
func isDirRef(ref string) bool {
	return ref == "." || ref == ".." || strings.HasPrefix(ref, "./") || strings.HasPrefix(ref, "../") || filepath.IsAbs(ref)
}

// BundleRef returns the directory (absolute, symlinks resolved, inside
// RootDir) or the image reference (with spec.version applied as its tag) that
// the spec names. Callers that cache renders use it to know what to key on.
func BundleRef(req Request) (ref string, isDir bool, err error) {
	s := req.Spec
	if isDirRef(s.Bundle) {
		if s.Version != "" {
			return "", false, fmt.Errorf("spec.version %q: only image references take a version; spec.bundle %q is a directory", s.Version, s.Bundle)
		}
		dir, err := localDir(req)
		return dir, true, err
	}
	return imageRef(s.Bundle, s.Version)
}

func localDir(req Request) (string, error) {
	p := req.Spec.Bundle
	if !filepath.IsAbs(p) {
		base := req.SourceDir
		if base == "" {
			base = "."
		}
		p = filepath.Join(base, p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("spec.bundle %q: %w", req.Spec.Bundle, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("spec.bundle %q: bundle directory not found (%s): give a directory holding manifests/ and metadata/, relative to the directory of olm-cmp.yaml", req.Spec.Bundle, abs)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("spec.bundle %q: %s is not a directory", req.Spec.Bundle, abs)
	}
	if req.RootDir != "" {
		root, err := filepath.EvalSymlinks(req.RootDir)
		if err != nil {
			return "", fmt.Errorf("repository root %s: %w", req.RootDir, err)
		}
		if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return "", fmt.Errorf("spec.bundle %q: the bundle directory must be inside the repository", req.Spec.Bundle)
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
