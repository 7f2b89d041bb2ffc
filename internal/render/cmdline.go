package render

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/catalog"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// The rules of a bundle or catalog named on the command line (an argument,
// --bundle, --to-bundle, --catalog): the spec's rules (IsDirRef, notLocal),
// worded for the command line, where a path is relative to the working
// directory, where a shell completed it, and needs no ./ when it exists.

// CheckRefArg refuses a bundle named on the command line (REF|DIR,
// --bundle, --to-bundle; flag is the flag's name, or empty for an
// argument) that is neither an existing directory nor an image reference
// with a registry host: a mistyped path would otherwise become a Docker
// Hub lookup that fails with a 401 or a DNS error naming neither the
// argument nor the fix.
func CheckRefArg(flag, ref string) error {
	return DirOrImage(flag, "bundle", ref)
}

// DirOrImage is CheckRefArg's rule for a bundle or catalog (what).
func DirOrImage(flag, what, ref string) error {
	if IsLocalDir(ref) || HasRegistry(ref) {
		return nil
	}
	if flag != "" {
		flag += " "
	}
	last := lastPart(ref)
	return fmt.Errorf("%s%s: no such directory, and not an image reference (it names no registry): give the %s directory relative to the working directory, or the image with its registry (quay.io/org/%s, docker.io/org/%s for Docker Hub)",
		flag, echo.Short(ref), what, echo.Short(last), echo.Short(last))
}

// CatalogArg is a --catalog value as the spec takes it: a directory that
// exists (with or without ./) made absolute, or an image reference that
// names its registry.
func CatalogArg(ref string) (string, error) {
	if err := DirOrImage("--catalog", "catalog", ref); err != nil {
		return "", err
	}
	if !IsLocalDir(ref) {
		return ref, nil
	}
	return FlagDir("--catalog", ref)
}

// SetBundleArg makes ref, the value of a command-line flag (--bundle,
// --to-bundle), the spec's bundle. A directory is relative to the working
// directory, not to olm-cmp.yaml; it must exist, and it clears
// spec.version, which only an image reference takes.
func SetBundleArg(s *spec.Spec, flag, ref string) error {
	if err := CheckRefArg(flag, ref); err != nil {
		return err
	}
	if IsLocalDir(ref) {
		abs, err := FlagDir(flag, ref)
		if err != nil {
			return err
		}
		ref, s.Version = abs, ""
	}
	s.Bundle = ref
	return nil
}

// FlagDir is the directory a command-line flag names (--bundle ./x,
// --catalog ./x), made absolute from the working directory; it must exist.
func FlagDir(flag, ref string) (string, error) {
	fi, err := os.Stat(ref)
	shown := echo.Short(ref) // a path can be any length
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("%s %s: no such directory (a path is relative to the working directory)", flag, shown)
	case err != nil:
		return "", fmt.Errorf("%s %s: %w", flag, shown, errors.Unwrap(err))
	case !fi.IsDir():
		what := "a bundle directory (holding manifests/ and metadata/)"
		if flag == "--catalog" {
			what = "a file-based catalog's directory"
		}
		return "", fmt.Errorf("%s %s: not a directory: give %s or an image reference", flag, shown, what)
	}
	abs, err := filepath.Abs(ref)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", flag, shown, err)
	}
	return abs, nil
}

// Untagged is ref without the tag or digest it has, and whether it had
// one: the repository another version is taken from. A reference that
// does not parse is given back as it is.
func Untagged(ref string) (repo string, had bool) {
	r, err := name.ParseReference(ref, name.WithDefaultTag(""))
	if err != nil {
		return ref, false
	}
	if t, ok := r.(name.Tag); ok && t.TagStr() == "" {
		return ref, false
	}
	return r.Context().Name(), true
}

// OpenCatalogArg opens the catalog --catalog names without rendering from
// it (`olm-cmp versions`): an image pulled through p (cached by digest,
// with its per-package index beside it) or a directory. image is the
// catalog image pinned by digest ("" for a directory); done closes what it
// opened.
func OpenCatalogArg(ctx context.Context, p catalog.Puller, ref string) (fsys fs.FS, image string, done func(), err error) {
	ref, err = CatalogArg(ref)
	if err != nil {
		return nil, "", nil, err
	}
	if IsLocalDir(ref) {
		root, err := os.OpenRoot(ref)
		if err != nil {
			return nil, "", nil, fmt.Errorf("--catalog %s: %w", echo.Quote(ref), err)
		}
		return catalog.Open(root.FS(), ""), "", func() { root.Close() }, nil
	}
	fsys, o, err := p.LoadCatalog(ctx, ref)
	if err != nil {
		return nil, "", nil, fmt.Errorf("--catalog %s: %w", echo.Quote(ref), err)
	}
	return catalog.Open(fsys, bundle.CatalogIndexFile(o.Dir)), o.Image, func() {}, nil
}

// RepositoryArg refuses an image repository named on the command line
// (`olm-cmp versions REF`) that is a directory or names no registry.
func RepositoryArg(ref string) error {
	if IsLocalDir(ref) {
		return fmt.Errorf("%s is a directory: versions REF lists the tags of a bundle image repository (quay.io/org/operator-bundle); for a catalog directory give --catalog %s --package P", echo.Short(ref), echo.Short(ref))
	}
	if !HasRegistry(ref) {
		last := lastPart(ref)
		return fmt.Errorf("%s: not an image repository with its registry: give it as quay.io/org/%s (docker.io/org/%s for Docker Hub)", echo.Short(ref), echo.Short(last), echo.Short(last))
	}
	return nil
}

// SourceDirArg returns the source directory that a command's argument
// names: a directory, or the olm-cmp.yaml in one (what a shell completes a
// path to). No argument ("") is the working directory. Every command that reads a
// source directory finds it here, so they all accept the same arguments
// and say the same thing about a wrong one.
func SourceDirArg(arg string) (string, error) {
	if arg == "" {
		return ".", nil
	}
	fi, err := os.Stat(arg)
	switch {
	case errors.Is(err, os.ErrNotExist):
		// A path a shell would complete to a spec file names a file.
		switch filepath.Ext(arg) {
		case ".yaml", ".yml":
			return "", fmt.Errorf("%s: no such file", arg)
		}
		return "", fmt.Errorf("%s: no such directory", arg)
	case err != nil:
		return "", fmt.Errorf("%s: %w", arg, errors.Unwrap(err))
	case fi.IsDir():
		return arg, nil
	case filepath.Base(arg) == spec.FileName:
		return filepath.Dir(arg), nil
	case filepath.Base(arg) == "olm-cmp.yml":
		return "", fmt.Errorf("%s: olm-cmp reads %s only (the Argo CD plugin discovers applications by that name): rename it to %s", arg, spec.FileName, filepath.Join(filepath.Dir(arg), spec.FileName))
	}
	return "", fmt.Errorf("%s is a file, not a source directory: give the directory holding %s (or that %s itself)", arg, spec.FileName, spec.FileName)
}

// NamesSource reports whether arg, given where a bundle or a source
// directory may be (`olm-cmp inspect ARG`), names a source directory (one
// holding olm-cmp.yaml) or a spec file (DIR/olm-cmp.yaml, as render takes
// it), or one render would refuse with its fix (an olm-cmp.yml, or a
// directory holding one and no bundle): not a bundle.
func NamesSource(arg string) bool {
	regular := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.Mode().IsRegular()
	}
	if regular(filepath.Join(arg, spec.FileName)) {
		return true
	}
	switch filepath.Base(arg) {
	case spec.FileName, "olm-cmp.yml":
		return regular(arg)
	}
	_, err := os.Stat(filepath.Join(arg, "metadata"))
	return regular(filepath.Join(arg, "olm-cmp.yml")) && err != nil
}
