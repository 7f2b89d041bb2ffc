package cmpserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/cmpserver/pluginpb"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// BuildRequest reads appDir/olm-cmp.yaml and applies the environment's
// overrides (parameters > plugin env > file). rootDir bounds relative bundle
// directories (the repository root); "" trusts the filesystem. notes are
// what an override changed beyond its own field, for a warning line each.
func BuildRequest(appDir, rootDir string, env *AppEnv) (req render.Request, notes []string, err error) {
	f, err := spec.Load(appDir)
	if err != nil {
		return render.Request{}, nil, err
	}
	s, err := spec.ApplyOverrides(f.Spec, env.Overrides)
	if err != nil {
		return render.Request{}, nil, err
	}
	notes = append(followShape(f.Spec, &s, env.Overrides), followNamespace(f.Spec, &s, env.Overrides)...)
	if err := f.Validate(&s); err != nil {
		return render.Request{}, notes, err // with the line of each value the file wrote
	}
	name := f.Metadata.Name
	if name == "" {
		name = env.AppName
	}
	return render.Request{Spec: s, Name: name, SourceDir: appDir, RootDir: rootDir, APIVersions: env.APIVersions, Project: env.Project}, notes, nil
}

// overridden reports whether an override sets the spec field named field.
func overridden(overrides []spec.Override, field string) bool {
	for _, o := range overrides {
		if p, ok := spec.FindParam(o.Name); ok && p.Name == field {
			return true
		}
	}
	return false
}

// followShape lets a bundle override replace a catalog spec's catalog
// (package, channel, version range and pin), and a catalog override a
// bundle spec's bundle (its version and pin), as the CLI's --bundle and
// --catalog do: an empty parameter means "not set", so the other field
// could not be cleared, and the render failed with "both set". A field
// overridden too is kept.
func followShape(file spec.Spec, s *spec.Spec, overrides []spec.Override) (notes []string) {
	var by, value, what string
	switch {
	case file.Catalog != "" && overridden(overrides, "bundle") && !overridden(overrides, "catalog"):
		by, value, what = "bundle", s.Bundle, "the catalog's choice"
		notes = append(notes, fmt.Sprintf("the bundle parameter (or plugin env) %q replaces the catalog: spec.catalog %q, spec.package %q, spec.channel %q and the version range %q are not used", s.Bundle, file.Catalog, file.Package, file.Channel, file.Version))
		s.Catalog, s.Package, s.Channel = "", "", ""
	case file.Bundle != "" && overridden(overrides, "catalog") && !overridden(overrides, "bundle"):
		by, value, what = "catalog", s.Catalog, "the spec's own bundle"
		notes = append(notes, fmt.Sprintf("the catalog parameter (or plugin env) %q replaces the bundle: spec.bundle %q and its version %q are not used", s.Catalog, file.Bundle, file.Version))
		s.Bundle = ""
	default:
		return nil
	}
	if !overridden(overrides, "version") {
		s.Version = ""
	}
	if s.Digest != "" && !overridden(overrides, "digest") {
		notes = append(notes, fmt.Sprintf("the %s parameter (or plugin env) %q: spec.digest %s pinned %s and is not used", by, value, s.Digest, what))
		s.Digest = ""
	}
	return notes
}

// followNamespace moves a watched namespace that was the file's install
// namespace to the namespace an override gave, as the CLI's -n does: left
// behind, its Roles would go to a namespace nothing creates any more. A
// watchNamespaces override is taken as given.
func followNamespace(file spec.Spec, s *spec.Spec, overrides []spec.Override) (notes []string) {
	if file.Namespace == "" || s.Namespace == file.Namespace {
		return nil
	}
	if overridden(overrides, "watchNamespaces") {
		return nil
	}
	for i, ns := range s.WatchNamespaces {
		if ns == file.Namespace {
			s.WatchNamespaces = slices.Clone(s.WatchNamespaces)
			s.WatchNamespaces[i] = s.Namespace
			notes = append(notes, fmt.Sprintf("the namespace parameter (or plugin env) %q: spec.watchNamespaces[%d] %q was the install namespace and becomes %q too (give watchNamespaces to choose otherwise)", s.Namespace, i, ns, s.Namespace))
		}
	}
	return notes
}

// locateError is req.Locate, with the plugin's own fix for a stale pin
// that a parameter set (overriddenPinFix).
func locateError(req render.Request, err error) error {
	if req.SourceDir != "" {
		if f, ferr := spec.Load(req.SourceDir); ferr == nil {
			err = overriddenPinFix(f.Spec, req.Spec, err)
		}
	}
	return req.Locate(err)
}

// overriddenPinFix rewrites the fix of a stale spec.digest when a parameter
// or the plugin env, not olm-cmp.yaml, set the version or the digest:
// `olm-cmp resolve --write` would pin the file's version again, not the
// parameter's. file is olm-cmp.yaml's spec, s the spec after overrides.
func overriddenPinFix(file, s spec.Spec, err error) error {
	var pe *render.PinError
	if !errors.As(err, &pe) || !pe.InDigestField {
		return err
	}
	var fix string
	switch {
	case s.Digest != file.Digest:
		fix = fmt.Sprintf("the digest parameter (or plugin env) sets spec.digest: give it %q, the image of version %s today (after reviewing it), or leave it empty", pe.Now, s.Version)
	case s.Version != file.Version:
		fix = fmt.Sprintf("the version parameter (or plugin env) replaced spec.version %q of %s, whose spec.digest pins that version: give the digest parameter %q beside it, or delete spec.digest from %s to pin in one place", file.Version, spec.FileName, pe.Now, spec.FileName)
	default:
		return err
	}
	return &fixedError{msg: strings.Replace(err.Error(), pe.Error(), pe.Problem+": "+fix, 1), err: err}
}

// fixedError is an error with its text rewritten; errors.Is and errors.As
// still see the original.
type fixedError struct {
	msg string
	err error
}

func (e *fixedError) Error() string { return e.msg }
func (e *fixedError) Unwrap() error { return e.err }

// HasSpec reports whether dir holds olm-cmp.yaml (discovery).
func HasSpec(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, spec.FileName))
	return err == nil && fi.Mode().IsRegular()
}

// Announcement is Argo CD's ParameterAnnouncement in the JSON a dynamic
// parameters command prints (the same field names as the proto's JSON).
type Announcement struct {
	Name           string            `json:"name"`
	Title          string            `json:"title,omitempty"`
	Tooltip        string            `json:"tooltip,omitempty"`
	Required       bool              `json:"required,omitempty"`
	ItemType       string            `json:"itemType,omitempty"`
	CollectionType string            `json:"collectionType,omitempty"`
	String         string            `json:"string,omitempty"`
	Array          []string          `json:"array,omitempty"`
	Map            map[string]string `json:"map,omitempty"`
}

// Announce lists every spec field as a parameter, with its current value
// from appDir/olm-cmp.yaml and the plugin env (parameters are what the user
// sets on top, so they are not folded in). Without olm-cmp.yaml the values
// are empty; an invalid file is an error, so the UI shows what to fix.
func Announce(appDir string, env *AppEnv) ([]Announcement, error) {
	var cur spec.Spec
	if HasSpec(appDir) {
		f, err := spec.Load(appDir)
		if err != nil {
			return nil, err
		}
		var envOnly []spec.Override
		for _, o := range env.Overrides {
			if strings.HasPrefix(o.Source, spec.PluginEnvSource) {
				envOnly = append(envOnly, o)
			}
		}
		if cur, err = spec.ApplyOverrides(f.Spec, envOnly); err != nil {
			return nil, err
		}
	}
	var out []Announcement
	for _, p := range spec.Params() {
		a := Announcement{
			Name:           p.Name,
			Title:          p.Title,
			Tooltip:        p.Tooltip,
			Required:       p.Name == "bundle" || p.Name == "namespace",
			ItemType:       "string",
			CollectionType: p.Collection,
		}
		a.String, a.Array, a.Map = p.Current(&cur)
		out = append(out, a)
	}
	return out, nil
}

// toProto converts announcements for the gRPC reply.
func toProto(as []Announcement) []*pluginpb.ParameterAnnouncement {
	out := make([]*pluginpb.ParameterAnnouncement, len(as))
	for i, a := range as {
		out[i] = &pluginpb.ParameterAnnouncement{
			Name: a.Name, Title: a.Title, Tooltip: a.Tooltip, Required: a.Required,
			ItemType: a.ItemType, CollectionType: a.CollectionType,
			String_: a.String, Array: a.Array, Map: a.Map,
		}
	}
	return out
}
