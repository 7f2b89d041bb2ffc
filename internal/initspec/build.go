package initspec

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// Request is what `olm-cmp init` was asked.
type Request struct {
	// Ref is a bundle image reference or a directory (relative to the
	// working directory): an explicit path, or a directory that exists (the
	// CLI's rule, isLocal).
	Ref string
	// Catalog (an image or a directory, relative to the working directory),
	// Package, Channel: instead of Ref. Version is a range with a catalog,
	// the tag with an image.
	Catalog, Package, Channel, Version string
	// Namespace, when set, replaces the CSV's suggestion.
	Namespace string
	// ExcludeFiles are bundle files to skip unread (spec.excludeFiles): the
	// way past a vendor's file that does not load.
	ExcludeFiles []string
	// Dir is where olm-cmp.yaml goes: paths in the spec are relative to it,
	// and its other YAML files are the render's extra manifests.
	Dir string
	// RepoRoot, when set, is the top directory of the Git repository
	// holding Dir: a bundle or catalog directory outside it gets a warning,
	// since Argo CD's plugin refuses one.
	RepoRoot string
}

// Result is the spec init wrote and what its strict render said.
type Result struct {
	Text []byte
	// Findings counts the requirements report's findings for the bundle
	// alone, every one answered (served through clusterAPIs, or accepted).
	Findings int
	// Warnings are init's own (a directory outside the repository) and the
	// strict render's (none expected).
	Warnings []string
	// LeftOut are the files of other tools beside the spec, which it leaves
	// out of its extra manifests (spec.extraManifests.exclude).
	LeftOut []render.OtherToolFile
}

// Build writes the spec of req's bundle: it resolves and loads the bundle
// through the render pipeline, renders it to get the requirements report,
// answers the findings (AnswerInstalls, then AnswerRest on a second render,
// since a served API can change what else is reported), and renders the
// text it wrote, strictly, exactly as `olm-cmp render --strict Dir` would,
// before returning it: a spec that would not render clean is an error, never
// a file.
func Build(ctx context.Context, r *render.Renderer, req Request) (*Result, error) {
	src, err := source(req)
	if err != nil {
		return nil, err
	}
	// The install namespace plays no part in loading; Resolve wants one.
	base := render.Request{Spec: spec.Spec{
		Bundle: src.Bundle, Version: src.Version, Catalog: src.Catalog, Package: src.Package, Channel: src.Channel,
		Namespace: "init", ExcludeFiles: req.ExcludeFiles,
	}, SourceDir: req.Dir}
	rv, err := r.Resolve(ctx, base)
	if err != nil {
		return nil, asGiven(err, req, src)
	}
	b, err := r.Load(ctx, rv)
	if err != nil {
		if fe := (*bundle.FileError)(nil); errors.As(err, &fe) {
			// The hint names the spec field; init takes it as a flag.
			err = fmt.Errorf("%w; with init: --exclude-file %s", err, fe.File)
		}
		return nil, asGiven(err, req, src)
	}
	src = pin(src, rv)
	plan, err := New(b, src, req.Namespace)
	if err != nil {
		return nil, err
	}
	plan.ExcludeFiles = req.ExcludeFiles
	if plan.OtherTools, err = render.OtherToolFiles(req.Dir); err != nil {
		return nil, err
	}
	if len(plan.OtherTools) > spec.MaxExtraManifestGlobs {
		return nil, fmt.Errorf("%d files of other tools beside %s, over the %d entries spec.extraManifests.exclude may hold: keep %s in a directory of its own", len(plan.OtherTools), spec.FileName, spec.MaxExtraManifestGlobs, spec.FileName)
	}
	report := func() (*render.Result, error) {
		rv.Request.Spec, rv.Request.Name = plan.Spec(), plan.Name
		return r.RenderLoaded(ctx, rv, b)
	}
	res, err := report()
	if err != nil {
		return nil, err
	}
	plan.ExcludeConsole(res.Requirements)
	plan.AnswerRan(b.Package, res.Requirements)
	plan.AnswerInstalls(res.Requirements)
	found := len(res.Requirements)
	if res, err = report(); err != nil {
		return nil, err
	}
	plan.AnswerRest(res.Requirements, ownedGroups(b))
	if n := len(plan.Spec().Accept); n > spec.MaxAcceptEntries {
		return nil, fmt.Errorf("%d findings to accept, over the %d entries spec.accept may hold: write this spec by hand, accepting whole categories (\"openshift\") or * globs; olm-cmp inspect %s lists them", n, spec.MaxAcceptEntries, cmp.Or(req.Ref, req.Catalog))
	}
	text := plan.Text(fmt.Sprintf("%s (%s %s)", b.CSV.Name, b.Package, b.CSV.Spec.Version.String()))
	out, err := verify(ctx, r, req.Dir, text)
	if err != nil {
		return nil, err
	}
	out.Findings = found
	out.Warnings = append(outsideRepository(req, src), out.Warnings...)
	out.LeftOut = plan.OtherTools
	return out, nil
}

// verify renders text as olm-cmp render --strict would from dir.
func verify(ctx context.Context, r *render.Renderer, dir string, text []byte) (*Result, error) {
	file := filepath.Join(dir, spec.FileName)
	f, err := spec.Parse(file, text)
	if err == nil {
		s := f.Spec
		s.Strict = true
		var res *render.Result
		if res, err = r.Render(ctx, render.Request{Spec: s, Name: f.Metadata.Name, SourceDir: dir}); err == nil {
			return &Result{Text: text, Warnings: res.Warnings}, nil
		}
	}
	if ctx.Err() != nil {
		return nil, err
	}
	return nil, fmt.Errorf("the spec init made does not render with --strict, so %s was not written (a bug in olm-cmp init: please report it with the bundle): %w", file, err)
}

// asGiven names the bundle or catalog in a resolve or load error as the
// command line gave it: the render names it as the spec would, relative to
// req.Dir, which is not what the user typed.
func asGiven(err error, req Request, src Source) error {
	for _, r := range []struct{ field, spec, given string }{
		{"spec.bundle", src.Bundle, req.Ref}, {"spec.catalog", src.Catalog, req.Catalog},
	} {
		prefix := fmt.Sprintf("%s %q: ", r.field, r.spec)
		if r.spec != "" && r.spec != r.given && strings.HasPrefix(err.Error(), prefix) {
			return fmt.Errorf("%s: %s", r.given, strings.TrimPrefix(err.Error(), prefix))
		}
	}
	return err
}

// source is how the spec will name req's bundle, as seen from req.Dir.
func source(req Request) (Source, error) {
	switch {
	case req.Catalog != "":
		if req.Package == "" {
			return Source{}, errors.New("--catalog needs --package: the package to install from the catalog")
		}
		c := req.Catalog
		if render.IsLocalDir(c) {
			rel, err := relative(req.Dir, c, "--catalog", "a catalog directory")
			if err != nil {
				return Source{}, err
			}
			c = rel
		}
		return Source{Catalog: c, Package: req.Package, Channel: req.Channel, Version: req.Version, Range: req.Version}, nil
	case req.Package != "" || req.Channel != "":
		return Source{}, errors.New("--package and --channel need --catalog")
	case req.Ref == "":
		return Source{}, errors.New("no bundle: give a bundle image reference or directory, or --catalog and --package")
	case render.IsLocalDir(req.Ref):
		if req.Version != "" {
			return Source{}, fmt.Errorf("--version %s: only a bundle image or a catalog takes a version; %s is a directory", echo.Quote(req.Version), echo.Quote(req.Ref))
		}
		rel, err := relative(req.Dir, req.Ref, "", "a bundle directory (holding manifests/ and metadata/)")
		if err != nil {
			return Source{}, err
		}
		return Source{Bundle: rel}, nil
	}
	return Source{Bundle: req.Ref, Version: req.Version}, nil
}

// relative rewrites p, a directory relative to the working directory, as
// the spec in dir must name it: relative to dir, as an explicit path
// (./x, ../x). flag names the argument in errors ("" for the bundle).
func relative(dir, p, flag, what string) (string, error) {
	named := strings.TrimSpace(flag + " " + p)
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("%s: no such directory: give %s or an image reference", named, what)
	case err != nil:
		return "", fmt.Errorf("%s: %w", named, errors.Unwrap(err))
	case !fi.IsDir():
		return "", fmt.Errorf("%s: not a directory: give %s or an image reference", named, what)
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	absP, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(absDir, absP)
	if err != nil {
		return absP, nil
	}
	rel = filepath.ToSlash(rel)
	if rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") {
		rel = "./" + rel
	}
	return rel, nil
}

// pin names the resolved bundle as `olm-cmp resolve --write` pins it: an
// image as repository, tag (spec.version) and digest; a catalog's choice as
// its exact version and the chosen bundle's digest. A directory is pinned by
// Git.
func pin(src Source, rv render.Resolved) Source {
	switch {
	case rv.Catalog != nil:
		src.Version, src.Digest = rv.Catalog.Version, rv.Origin.Digest
	case rv.Origin.Image != "":
		repo, digest, _ := strings.Cut(src.Bundle, "@")
		tag := src.Version
		if t, err := name.NewTag(repo, name.WithDefaultTag("")); err == nil && t.TagStr() != "" {
			repo, tag = strings.TrimSuffix(repo, ":"+t.TagStr()), t.TagStr()
		}
		if digest != "" && tag == "" {
			return src // pinned by its digest alone: nothing moves
		}
		src.Bundle, src.Version, src.Digest = repo, tag, rv.Origin.Digest
	}
	return src
}

// ownedGroups are the API groups of the CRDs and APIServices the CSV owns.
func ownedGroups(b *bundle.Bundle) []string {
	var out []string
	for _, c := range b.CSV.Spec.CustomResourceDefinitions.Owned {
		if _, g, ok := strings.Cut(c.Name, "."); ok {
			out = append(out, g)
		}
	}
	for _, a := range b.CSV.Spec.APIServiceDefinitions.Owned {
		out = append(out, a.Group)
	}
	return out
}

// outsideRepository warns about a bundle or catalog directory the spec
// names outside req.RepoRoot: the CLI renders it, the plugin, which reads
// only the repository Argo CD checked out, refuses it.
func outsideRepository(req Request, src Source) []string {
	if req.RepoRoot == "" {
		return nil
	}
	var out []string
	for _, d := range []struct{ field, path, instead string }{
		{"spec.bundle", src.Bundle, "the bundle's image"}, {"spec.catalog", src.Catalog, "a catalog image"},
	} {
		if d.path == "" || !render.IsDirRef(d.path) {
			continue
		}
		if err := render.CheckInRepository(req.Dir, req.RepoRoot, d.field, d.path); err != nil {
			out = append(out, fmt.Sprintf("%v (the Git repository of %s is %s): olm-cmp render takes it, Argo CD's plugin will refuse it; copy the directory into the repository, or name %s instead", err, req.Dir, req.RepoRoot, d.instead))
		}
	}
	return out
}
