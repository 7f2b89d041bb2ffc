package render

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// IsDirRef tells a bundle directory from an image reference. Only explicit
// paths count as directories, so an image reference can never be mistaken for
// a directory that happens to exist (or the other way round).
func IsDirRef(ref string) bool {
	return ref == "." || ref == ".." || strings.HasPrefix(ref, "./") || strings.HasPrefix(ref, "../") || filepath.IsAbs(ref)
}

// bundleRef returns the directory (absolute, symlinks resolved, inside
// RootDir) or the image reference (with spec.version applied as its tag) that
// the spec names: the spec's rule, applied here only. A catalog spec has no
// bundle reference until its catalog is read: see chooseBundle.
func bundleRef(req Request) (ref string, isDir bool, err error) {
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
	if bareDir(req.SourceDir, s.Bundle) {
		return "", false, fmt.Errorf("spec.bundle %q names a local directory: write it as ./%s (relative to olm-cmp.yaml)", s.Bundle, s.Bundle)
	}
	ref, err = imageRef(s.Bundle, s.Version)
	return ref, false, err
}

// bareDir reports whether ref, a reference without ./, names a directory
// beside olm-cmp.yaml: only explicit paths are directories, but one written
// without ./ was almost certainly meant as such. Looked up through an
// os.Root, so a symbolic link cannot tell what exists outside.
func bareDir(sourceDir, ref string) bool {
	if !filepath.IsLocal(ref) {
		return false
	}
	root, err := os.OpenRoot(cmp.Or(sourceDir, "."))
	if err != nil {
		return false
	}
	defer root.Close()
	fi, err := root.Stat(ref)
	return err == nil && fi.IsDir()
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
		return "", fmt.Errorf("%s %q: %s directory not found: %s, relative to the directory of olm-cmp.yaml", field, named, what, hint)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s %q: not a directory: %s", field, named, hint)
	}
	if req.RootDir != "" {
		root, err := filepath.Abs(req.RootDir)
		if err == nil {
			// real is absolute: a relative root would never contain it.
			root, err = filepath.EvalSymlinks(root)
		}
		if err != nil {
			// Not the path: in the plugin it is the server's checkout directory.
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return "", fmt.Errorf("the repository root cannot be located: %w", err)
		}
		if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return "", fmt.Errorf("%s %q: the %s directory must be inside the repository", field, named, what)
		}
	}
	return real, nil
}

// imageRef checks that ref is an image reference (go-containerregistry's
// grammar, which the loader pulls with) and applies spec.version as the tag of
// one without a tag or digest.
func imageRef(ref, version string) (string, error) {
	r, err := name.ParseReference(ref, name.WithDefaultTag(""))
	if err != nil {
		return "", fmt.Errorf("spec.bundle %s is neither a directory (write ./path) nor an image reference (registry/repository:tag or @sha256:digest): %w", echo.Quote(ref), echo.Err(err))
	}
	if version == "" {
		return ref, nil
	}
	switch r := r.(type) {
	case name.Digest:
		return "", fmt.Errorf("spec.version %q conflicts with spec.bundle %q, which is pinned by digest: remove one", version, ref)
	case name.Tag:
		if tag := r.TagStr(); tag != "" && tag != version {
			return "", fmt.Errorf("spec.version %q conflicts with the tag %q of spec.bundle %q: remove one", version, tag, ref)
		} else if tag != "" {
			return ref, nil
		}
	}
	tagged := ref + ":" + version
	if _, err := name.NewTag(tagged); err != nil {
		return "", fmt.Errorf("spec.version %q is not usable as the tag of spec.bundle %q: %w", version, ref, err)
	}
	return tagged, nil
}
