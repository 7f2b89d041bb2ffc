package render

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// IsDirRef tells a bundle directory from an image reference. Only explicit
// paths count as directories, so an image reference can never be mistaken for
// a directory that happens to exist (or the other way round).
func IsDirRef(ref string) bool {
	return ref == "." || ref == ".." || strings.HasPrefix(ref, "./") || strings.HasPrefix(ref, "../") || filepath.IsAbs(ref)
}

// IsLocalDir tells a directory from an image reference on the command line:
// IsDirRef's rule, or a name that is an existing directory (what a shell
// completes without ./). A spec's own references follow IsDirRef alone.
func IsLocalDir(ref string) bool {
	if IsDirRef(ref) {
		return true
	}
	fi, err := os.Stat(ref)
	return err == nil && fi.IsDir()
}

// bundleRef returns the directory (absolute, symlinks resolved, inside
// RootDir) or the image reference and its pin (spec.version applied as its
// tag, spec.digest or the reference's digest as the pin) that the spec
// names: the spec's rule, applied here only. A catalog spec has no bundle
// reference until its catalog is read: see chooseBundle.
func bundleRef(req Request) (dir string, img imagePin, isDir bool, err error) {
	s := req.Spec
	if s.Catalog != "" {
		return "", imagePin{}, false, fmt.Errorf("spec.catalog %s: the bundle is chosen from the catalog, not named by spec.bundle", echo.Quote(s.Catalog))
	}
	if IsDirRef(s.Bundle) {
		if s.Version != "" {
			return "", imagePin{}, false, fmt.Errorf("spec.version %s: only image references take a version; spec.bundle %s is a directory", echo.Quote(s.Version), echo.Quote(s.Bundle))
		}
		if s.Digest != "" {
			return "", imagePin{}, false, fmt.Errorf("spec.digest %s: only image bundles take a digest; spec.bundle %s is a directory, which Git pins: delete the digest line", echo.Quote(s.Digest), echo.Quote(s.Bundle))
		}
		dir, err := localDir(req, "spec.bundle", s.Bundle, "give a directory holding manifests/ and metadata/")
		return dir, imagePin{}, true, err
	}
	if err := notLocal(req, "spec.bundle", s.Bundle); err != nil {
		return "", imagePin{}, false, err
	}
	img, err = imageRef(s.Bundle, s.Version, s.Digest)
	return "", img, false, err
}

// notLocal refuses an image reference (ref, of field) that was probably
// meant as a directory: one that names a directory beside olm-cmp.yaml
// without ./, or one without a registry host, which go-containerregistry
// would look up on Docker Hub. Operator bundles and catalogs are almost
// never there, and a mistyped directory would otherwise turn into a Docker
// Hub lookup and a 401 or 404 that names neither the field nor the fix;
// Docker Hub stays reachable by its name (docker.io/org/repo).
func notLocal(req Request, field, ref string) error {
	if bareDir(req.SourceDir, ref) {
		return fmt.Errorf("%s %s names a local directory: write it as ./%s (relative to olm-cmp.yaml)", field, echo.Quote(ref), echo.Short(ref))
	}
	if !HasRegistry(ref) {
		return fmt.Errorf("%s %s is not a directory beside olm-cmp.yaml and names no registry: write ./%s for a directory, or the image with its registry (quay.io/org/%s, docker.io/org/%s for Docker Hub)", field, echo.Quote(ref), echo.Short(ref), echo.Short(lastPart(ref)), echo.Short(lastPart(ref)))
	}
	return nil
}

// HasRegistry reports whether an image reference starts with a registry
// host, by the rule Docker uses: the first path component holds a '.' or a
// ':', or is localhost. A reference with no '/' has none. The commands
// apply it to their bundle arguments too (a mistyped path has none).
func HasRegistry(ref string) bool {
	first, _, found := strings.Cut(ref, "/")
	return found && (strings.ContainsAny(first, ".:") || first == "localhost")
}

// lastPart is the last path component of ref.
func lastPart(ref string) string { return ref[strings.LastIndexByte(ref, '/')+1:] }

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
		return "", fmt.Errorf("%s %s: %w", field, echo.Quote(named), err)
	}
	what := strings.TrimPrefix(field, "spec.")
	outside := fmt.Errorf("%s %s: the %s directory must be inside the repository", field, echo.Quote(named), what)
	notFound := fmt.Errorf("%s %s: %s directory not found: %s, relative to the directory of olm-cmp.yaml", field, echo.Quote(named), what, hint)
	if req.RootDir != "" {
		// Inside or not is decided before anything outside is looked at:
		// lexically first, then through an os.Root, which refuses a symbolic
		// link that leaves the repository without following it. Else
		// "not found" and "must be inside" would tell whether a path
		// exists on the server.
		root, err := filepath.Abs(req.RootDir)
		if err != nil {
			return "", fmt.Errorf("the repository root cannot be located: %w", unwrapPath(err))
		}
		rel, err := filepath.Rel(root, abs)
		if err != nil || !filepath.IsLocal(rel) && rel != "." {
			return "", outside
		}
		r, err := os.OpenRoot(root)
		if err != nil {
			return "", fmt.Errorf("the repository root cannot be located: %w", unwrapPath(err))
		}
		fi, err := r.Stat(rel)
		r.Close()
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			return "", notFound
		case errors.Is(err, fs.ErrPermission):
			return "", fmt.Errorf("%s %s: the %s directory cannot be read (permission denied)", field, echo.Quote(named), what)
		case err != nil:
			return "", outside // a symbolic link that leaves the repository
		case !fi.IsDir():
			return "", fmt.Errorf("%s %s: not a directory: %s", field, echo.Quote(named), hint)
		}
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", notFound
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s %s: not a directory: %s", field, echo.Quote(named), hint)
	}
	if req.RootDir != "" {
		root, err := filepath.Abs(req.RootDir)
		if err == nil {
			// real is absolute: a relative root would never contain it.
			root, err = filepath.EvalSymlinks(root)
		}
		if err != nil {
			return "", fmt.Errorf("the repository root cannot be located: %w", unwrapPath(err))
		}
		if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return "", outside
		}
	}
	return real, nil
}

// CheckInRepository applies the plugin's repository bound to a directory a
// spec in sourceDir names (field spec.bundle or spec.catalog, p as the spec
// writes it), root being the repository's top directory: the error the
// plugin would give, or nil. For `olm-cmp init`, which writes a spec the
// CLI renders without the bound.
func CheckInRepository(sourceDir, root, field, p string) error {
	_, err := localDir(Request{SourceDir: sourceDir, RootDir: root}, field, p, "")
	return err
}

// unwrapPath drops the path of a *fs.PathError: in the plugin it is the
// server's checkout directory, which messages never name.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// imageRef checks that ref is an image reference (go-containerregistry's
// grammar, which the loader pulls with), applies version as the tag of one
// without a tag, and takes its pin from digest (spec.digest) or from the
// reference's own digest. A version that differs from the reference's tag
// is refused; one that differs from what the pin pinned is found when the
// tag is resolved (Renderer.resolvePinned).
func imageRef(ref, version, digest string) (imagePin, error) {
	repo, tag, refDigest, err := ImageParts(ref)
	if err != nil {
		return imagePin{}, fmt.Errorf("spec.bundle %s is neither a directory (write ./path) nor an image reference (registry/repository:tag or @sha256:digest): %w", echo.Quote(ref), echo.Err(err))
	}
	p := imagePin{repo: repo, tag: tag, digest: refDigest, tagFrom: "the tag of spec.bundle", pinFrom: "spec.bundle"}
	if digest != "" {
		if refDigest != "" && refDigest != digest {
			return imagePin{}, fmt.Errorf("spec.digest %s and the digest of spec.bundle %s differ: keep one pin", echo.Quote(digest), echo.Quote(ref))
		}
		p.digest, p.pinFrom = digest, "spec.digest"
	}
	switch {
	case version == "":
	case tag != "" && tag != version && p.digest != "":
		return imagePin{}, fmt.Errorf("spec.version is %s but spec.bundle %s is pinned to its tag %s: write the version in one place (spec.version), then run olm-cmp resolve --write to pin it", version, echo.Quote(ref), tag)
	case tag != "" && tag != version:
		return imagePin{}, fmt.Errorf("spec.version %s conflicts with the tag %s of spec.bundle %s: remove one", echo.Quote(version), echo.Quote(tag), echo.Quote(ref))
	case tag == "":
		if _, err := name.NewTag(repo+":"+version, name.StrictValidation); err != nil {
			return imagePin{}, fmt.Errorf("spec.version %s is not usable as the tag of spec.bundle %s: %w", echo.Quote(version), echo.Quote(ref), echo.Err(err))
		}
		p.tag, p.tagFrom = version, "spec.version"
	}
	return p, nil
}
