package upgrade

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// target is one application directory: its olm-cmp.yaml, the Argo CD
// applications that render it (app passes it a version, or is the only
// one; nil when the file holds the version for all) and the spec the plugin
// renders (the file with that application's version, digest and
// upgradeFrom put in, as Argo CD sends them).
type target struct {
	dir      string
	specFile string
	data     []byte // olm-cmp.yaml as read
	file     *spec.File
	app      *App
	// apps are every application of dir when several render it at one
	// version: a bump writes every place (plan), so they move together.
	apps []*App
	spec spec.Spec
	// matched are the applications of dir (Index.Of); elsewhere those
	// whose path is dir but whose repoURL names another repository.
	matched, elsewhere []*App
}

// where says where the version lives, for the report: every place when
// several applications render the directory.
func (t *target) where() string {
	if len(t.apps) > 1 {
		places := make([]string, len(t.apps))
		for i, a := range t.apps {
			places[i] = placeOf(a, t.specFile)
		}
		return strings.Join(places, "; ")
	}
	return placeOf(t.app, t.specFile)
}

func placeOf(a *App, specFile string) string {
	if inApp(a) {
		return fmt.Sprintf("%s, %s", a, a.Version.Where)
	}
	if a != nil && len(a.Params)+len(a.Env) > 0 {
		return fmt.Sprintf("%s (for %s)", specFile, a)
	}
	return specFile
}

// inApp reports whether the application's version slot is what the
// plugin renders: a parameter or element with a value (an empty one means
// "not set": docs/plugin.md).
func inApp(a *App) bool {
	return a != nil && a.Version != nil && a.Version.Value() != ""
}

// versionInApp reports whether t.app passes the version the plugin renders.
func (t *target) versionInApp() bool { return inApp(t.app) }

// loadTarget reads dir's spec and finds the application passing it a
// version. Several applications rendering one directory, one of which
// passes its own version, digest or upgradeFrom, are upgraded together when
// they render the same bundle at the same version, digest and upgradeFrom
// (an Application and an ApplicationSet element naming one directory, as
// examples/ has); when they disagree, which to bump is not upgrade's to
// guess: refused, naming what each renders.
func loadTarget(ix *Index, dir string, data []byte) (*target, error) {
	t := &target{dir: dir, specFile: filepath.Join(dir, spec.FileName), data: data}
	f, err := spec.Parse(t.specFile, data)
	if err != nil {
		return nil, err
	}
	t.file, t.spec = f, f.Spec
	if err := t.findApps(ix); err != nil {
		return nil, err
	}
	return t, nil
}

// Rendered is s, dir's olm-cmp.yaml, as the plugin renders it for the Argo
// CD application of ix that renders dir, by upgrade's own rules
// (loadTarget): app is nil when none does, or several pass nothing (s
// alone); several that render different versions are an error. diff reads
// a directory's spec with it.
func Rendered(ix *Index, dir string, s spec.Spec) (spec.Spec, *App, error) {
	t := &target{dir: dir, specFile: filepath.Join(dir, spec.FileName), file: &spec.File{Spec: s}, spec: s}
	if err := t.findApps(ix); err != nil {
		return s, nil, err
	}
	return t.spec, t.app, nil
}

// findApps finds the applications of ix rendering t.dir and the one passing
// it a version, and sets t.spec to what the plugin renders for it.
func (t *target) findApps(ix *Index) error {
	f, dir := t.file, t.dir
	if ix == nil {
		return nil
	}
	apps, elsewhere, err := ix.Of(dir)
	if err != nil {
		return err
	}
	t.matched, t.elsewhere = apps, elsewhere
	var passing []*App
	for _, a := range apps {
		if a.Version != nil || a.Digest != nil || a.UpgradeFr != nil {
			passing = append(passing, a)
			for _, sl := range []*Slot{a.Version, a.Digest, a.UpgradeFr} {
				if sl != nil && sl.Template == "" && strings.Contains(sl.Value(), "{{") {
					return fmt.Errorf("%s: %s is %s, a template, which only an ApplicationSet fills in: Argo CD passes it to the plugin as written; write the value itself", a, sl.Where, echo.Quote(sl.Value()))
				}
			}
			if a.Shared != "" {
				return fmt.Errorf("%s passes its version, digest or upgradeFrom through a YAML anchor or alias (%s): an edit there would change every place that repeats it, or not the place meant; write the values out in full (no & or *), or make the change by hand", a, echo.Quote(a.Shared))
			}
		}
	}
	if len(passing) == 0 && len(apps) != 1 {
		return nil
	}
	specs := make([]spec.Spec, len(apps))
	for i, a := range apps {
		if specs[i], err = overrides(f.Spec, a); err != nil {
			return err
		}
	}
	t.app = apps[0]
	if len(passing) > 0 {
		t.app = passing[0]
	}
	for i, a := range apps {
		if a == t.app {
			t.spec = specs[i]
		}
	}
	if len(apps) == 1 {
		return nil
	}
	var differ []string
	for i, a := range apps {
		if versionKey(specs[i]) != versionKey(t.spec) {
			differ = append(differ, fmt.Sprintf("%s renders %s", a.What, versionKey(specs[i])))
		}
	}
	if len(differ) > 0 {
		names := make([]string, len(apps))
		for i, a := range apps {
			names[i] = a.String()
		}
		return fmt.Errorf("%s is rendered by %d Argo CD applications (%s) that do not render one version (%s renders %s; %s): upgrade cannot write one version for all of them; give each application its own directory (one olm-cmp.yaml each), or name the manifests in use with --apps-from",
			dir, len(apps), strings.Join(names, "; "), t.app.What, versionKey(t.spec), strings.Join(differ, "; "))
	}
	t.apps = apps
	return nil
}

// versionKey is what applications of one directory must agree on to be
// bumped together: the bundle or catalog choice and the version, digest and
// upgradeFrom they render.
func versionKey(s spec.Spec) string {
	w := func(v string) string {
		if v == "" {
			return "none"
		}
		return echo.Quote(v)
	}
	k := fmt.Sprintf("version %s, digest %s, upgradeFrom %s", w(s.Version), w(s.Digest), w(s.UpgradeFrom))
	if s.Catalog != "" {
		return fmt.Sprintf("catalog %s package %s channel %s %s", w(s.Catalog), w(s.Package), w(s.Channel), k)
	}
	return fmt.Sprintf("bundle %s %s", w(s.Bundle), k)
}

// imageTag is the tag an image spec renders: spec.bundle's, else
// spec.version.
func imageTag(s spec.Spec) (repo, tag, digest string, err error) {
	repo, tag, digest, err = render.ImageParts(s.Bundle)
	if err == nil && tag == "" {
		tag = s.Version
	}
	return repo, tag, digest, err
}

// overrides is s as the plugin renders it for the application: its plugin
// env and parameters applied by the plugin's own rules
// (spec.PluginEnvOverride, spec.Parameter, spec.ApplyOverrides; docs/plugin.md).
func overrides(s spec.Spec, a *App) (spec.Spec, error) {
	var ovs []spec.Override
	for _, e := range a.Env {
		ovs = append(ovs, spec.PluginEnvOverride(e[0], e[1]))
	}
	for _, p := range a.Params {
		ovs = append(ovs, p.Override())
	}
	out, err := spec.ApplyOverrides(s, ovs)
	if err != nil {
		return s, fmt.Errorf("%s: %w", a, err)
	}
	return out, nil
}

// AdoptRepoURLs adds the repository URLs of other, already normalised (a
// second NormalizeRepoURL would read "host/org/repo" as a local path and
// match no repoURL): diff --git-base gives the index of the manifests at a
// revision, which has no .git of its own, the URLs of the checkout.
func (ix *Index) AdoptRepoURLs(other *Index) {
	for _, n := range other.repos {
		if !slices.Contains(ix.repos, n) {
			ix.repos = append(ix.repos, n)
		}
	}
}
