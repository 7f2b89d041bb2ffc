package upgrade

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	mmsemver "github.com/Masterminds/semver/v3"
	bsemver "github.com/blang/semver/v4"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/catalog"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/versions"
)

// MaxTagCandidates is how many newer tags of a bundle repository have
// their CSV read (one image pull each): a repository that publishes every
// build can hold thousands of newer tags. The newest are read (a skipRange
// successor is usually among them) and the next one up (a replaces chain's
// only successor).
const MaxTagCandidates = 10

// exactVersion reports whether a catalog spec's version names one version
// (what `olm-cmp resolve --write` writes) rather than a range.
func exactVersion(v string) bool {
	_, err := mmsemver.StrictNewVersion(strings.TrimPrefix(strings.TrimPrefix(v, "="), "v"))
	return err == nil
}

// fromCatalog finds the candidates in the catalog the render chose from
// (rv.Catalog: the image pinned, or the directory), with the policy's rule.
// A spec whose version is a range already renders the newest version the
// range allows: it moves only when the range does.
func (o Options) fromCatalog(ctx context.Context, r *render.Renderer, t *target, rv render.Resolved) (found, error) {
	s := t.spec
	f := found{current: rv.Catalog.Version}
	fsys, closeFS, err := o.openCatalog(ctx, t, rv)
	if err != nil {
		return f, err
	}
	defer closeFS()
	p, err := versions.ReadPackage(ctx, fsys, s.Package)
	if err != nil {
		return f, fmt.Errorf("spec.catalog %s: %w", echo.Quote(s.Catalog), err)
	}
	var channels []string
	for _, c := range strings.Split(s.Channel, ",") {
		if c = strings.TrimSpace(c); c != "" {
			channels = append(channels, c)
		}
	}
	rng := ""
	if !exactVersion(s.Version) {
		rng = s.Version
	}
	where := "every channel"
	if len(channels) > 0 {
		where = "channel " + strings.Join(channels, ", ")
	}
	var es []versions.Entry
	switch o.Policy {
	case OLMv0:
		ch := p.DefaultChannel
		if len(channels) > 0 {
			ch = channels[0]
			for _, c := range channels { // the channel the installed bundle is in
				if slices.ContainsFunc(channelOf(p, c).Entries, func(e versions.Entry) bool { return e.Version == f.current }) {
					ch = c
					break
				}
			}
		}
		where = "channel " + ch
		if e, ok := versions.NextOLMv0(p, f.current, ch); ok {
			es = []versions.Entry{e}
		} else if c := channelOf(p, ch); c.Problem != "" {
			f.reason = fmt.Sprintf("channel %s of package %s: %s", ch, p.Name, c.Problem)
		}
		if e := es; len(e) == 1 && rng != "" {
			if c, err := mmsemver.NewConstraint(rng); err == nil {
				if v, err := mmsemver.NewVersion(e[0].Version); err == nil && !c.Check(v) {
					es = nil
				}
			}
		}
	default:
		if es, err = versions.SuccessorsOLMv1(p, f.current, channels, rng); err != nil {
			return f, fmt.Errorf("spec.catalog %s: %w", echo.Quote(s.Catalog), err)
		}
	}
	// Never down: a channel whose replaces loop back (a cycle) would lead
	// OLM v0 to an older version, which no CRD or operator expects.
	var older []string
	cur, _ := bsemver.ParseTolerant(f.current)
	es = slices.DeleteFunc(es, func(e versions.Entry) bool {
		// A higher release of the same version (versions' successors) is
		// no step down.
		down := e.SemVer().LT(cur)
		if down {
			older = append(older, e.Version)
		}
		return down
	})
	if len(es) == 0 && len(older) > 0 {
		f.reason = fmt.Sprintf("the next version from %s in %s is %s, older: upgrade never goes down a version", f.current, where, strings.Join(older, ", "))
		if c := channelOf(p, strings.TrimPrefix(where, "channel ")); c.Problem != "" {
			f.reason += fmt.Sprintf(" (channel %s: %s)", c.Name, c.Problem)
		}
		return f, nil
	}
	names := installedNames(p, f.current)
	for _, e := range es {
		f.candidates = append(f.candidates, Candidate{Version: e.Version, Edges: bundleEdges(p, e, names, f.current), Deprecated: e.Deprecated})
	}
	if len(es) > 0 {
		f.chosen = es[0].Version
		return f, nil
	}
	if f.reason != "" {
		return f, nil
	}
	newer := newerVersions(p, f.current)
	switch {
	case len(newer) == 0:
		f.reason = fmt.Sprintf("%s is the newest version of package %s in the catalog", f.current, p.Name)
	case rng != "":
		f.reason = fmt.Sprintf("spec.version %s allows no version newer than %s, which the render already takes (newer in the catalog: %s): widen the range to move", echo.Quote(rng), f.current, few(newer))
	default:
		f.reason = fmt.Sprintf("no version of package %s in %s upgrades from %s (newer in the catalog: %s, but none replaces or skips it or has a skipRange holding it there)", p.Name, where, f.current, few(newer))
	}
	return f, nil
}

// openCatalog opens the catalog rv was chosen from: the pinned image
// (cached by the resolve), or the directory, inside the application's.
func (o Options) openCatalog(ctx context.Context, t *target, rv render.Resolved) (fs.FS, func(), error) {
	if rv.Catalog.Image != "" {
		fsys, origin, err := o.Loader.LoadCatalog(ctx, rv.Catalog.Image)
		if err != nil {
			return nil, nil, fmt.Errorf("spec.catalog %s: %w", echo.Quote(t.spec.Catalog), err)
		}
		return catalog.Open(fsys, bundle.CatalogIndexFile(origin.Dir)).Remember(o.memo, rv.Catalog.Image), func() {}, nil
	}
	// Resolve read this directory already, through the same bound; the
	// run's memo holds the package it read (one read per catalog and run).
	dir := filepath.Join(t.dir, filepath.FromSlash(t.spec.Catalog))
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("spec.catalog %s: %w", echo.Quote(t.spec.Catalog), err)
	}
	key := dir
	if abs, err := filepath.Abs(dir); err == nil {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			key = real
		}
	}
	return catalog.Open(root.FS(), "").Remember(o.memo, render.CatalogDirKey(key)), func() { root.Close() }, nil
}

func channelOf(p *versions.Package, name string) versions.Channel {
	for _, c := range p.Channels {
		if c.Name == name {
			return c
		}
	}
	return versions.Channel{}
}

// installedNames are the bundle names of version v in the package.
func installedNames(p *versions.Package, v string) []string {
	var out []string
	for _, c := range p.Channels {
		for _, e := range c.Entries {
			if e.Version == v && !slices.Contains(out, e.Name) {
				out = append(out, e.Name)
			}
		}
	}
	return out
}

// bundleEdges are the edges by which the bundle of e upgrades from the
// installed bundle in any channel of the package: a channel lists a bundle
// with edges of its own, and a successor's edge may be in a channel other
// than the one whose entry versions returned (OLM v1 counts an edge of any
// channel), which showed a real successor as "no edge". Each edge once, in
// channel order.
func bundleEdges(p *versions.Package, e versions.Entry, installed []string, version string) []string {
	edges := entryEdges(e, installed, version)
	for _, c := range p.Channels {
		for _, o := range c.Entries {
			if o.Name != e.Name {
				continue
			}
			for _, edge := range entryEdges(o, installed, version) {
				if !slices.Contains(edges, edge) {
					edges = append(edges, edge)
				}
			}
		}
	}
	return edges
}

// entryEdges are the edges by which e upgrades from the installed bundle.
func entryEdges(e versions.Entry, installed []string, version string) []string {
	edges := []string{}
	if slices.Contains(installed, e.Replaces) {
		edges = append(edges, "replaces "+e.Replaces)
	}
	for _, s := range e.Skips {
		if slices.Contains(installed, s) {
			edges = append(edges, "skips "+s)
		}
	}
	if e.SkipRange != "" {
		if r, err := bsemver.ParseRange(e.SkipRange); err == nil {
			if v, err := bsemver.ParseTolerant(version); err == nil && r(v) {
				edges = append(edges, "skipRange "+e.SkipRange)
			}
		}
	}
	return edges
}

// newerVersions are the package's versions above v, lowest first.
func newerVersions(p *versions.Package, v string) []string {
	cur, err := bsemver.ParseTolerant(v)
	if err != nil {
		return nil
	}
	var out []bsemver.Version
	for _, c := range p.Channels {
		for _, e := range c.Entries {
			if ev, err := bsemver.ParseTolerant(e.Version); err == nil && ev.GT(cur) && !slices.ContainsFunc(out, ev.Equals) {
				out = append(out, ev)
			}
		}
	}
	slices.SortFunc(out, func(a, b bsemver.Version) int { return a.Compare(b) })
	s := make([]string, len(out))
	for i, v := range out {
		s[i] = v.String()
	}
	return s
}

// few lists at most five items, the last ones (the newest), and how many
// more there are.
func few(items []string) string {
	if len(items) <= 5 {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[len(items)-5:], ", "), len(items)-5)
}

// fromTags finds the candidates of an image bundle without a catalog: the
// repository's semver tags newer than the one rendered (pre-releases only
// from a pre-release), the newest MaxTagCandidates of them with their CSVs
// read, and chooses the highest whose CSV upgrades from the running one
// (replaces or skips its CSV name, or olm.skipRange holds its version), as
// OLM would accept it.
func (o Options) fromTags(ctx context.Context, t *target, from *bundle.Bundle) (found, error) {
	repo, tag, _, err := imageTag(t.spec)
	if err != nil {
		return found{}, err
	}
	f := found{current: tag}
	if tag == "" {
		f.current = from.CSV.Spec.Version.String()
	}
	// The current tag is read as versions reads a repository's tags
	// (versions.SortTags): a full semantic version, v-prefixed or not. A
	// partial one (v99, 1.2) floats to each new release like latest does,
	// so it names no one bundle to upgrade from.
	sv, _ := versions.SortTags([]string{f.current})
	if len(sv) != 1 {
		return f, fmt.Errorf("%s renders the tag %s, which is not a full semantic version (a tag like latest or 1.2 moves to each new release): upgrade compares versions; write the version's own tag, MAJOR.MINOR.PATCH (olm-cmp versions %s lists them)", t.where(), echo.Quote(f.current), repo)
	}
	cur := sv[0].Version
	tags, _, _, err := versions.ListTagsWith(ctx, o.Loader, repo)
	if err != nil {
		return f, err
	}
	if tag == "" {
		// Pinned by digest alone: the tag of the CSV's version is the one
		// left (upgradeFrom names an image by its tag).
		for _, tg := range tags {
			if tg.Version.Equal(cur) && (f.current == from.CSV.Spec.Version.String() || strings.HasPrefix(tg.Name, "v")) {
				f.current = tg.Name
			}
		}
	}
	var newer []versions.Tag
	for _, tg := range tags {
		if !tg.Version.GreaterThan(cur) || tg.Version.Prerelease() != "" && cur.Prerelease() == "" {
			continue
		}
		// One tag per version: the one spelled as the current one (v or not).
		if n := len(newer); n > 0 && newer[n-1].Version.Equal(tg.Version) {
			if strings.HasPrefix(tg.Name, "v") == strings.HasPrefix(f.current, "v") {
				newer[n-1] = tg
			}
			continue
		}
		newer = append(newer, tg)
	}
	if len(newer) == 0 {
		f.reason = fmt.Sprintf("%s is the newest semver tag of %s (%d semver tags)", f.current, repo, len(tags))
		return f, nil
	}
	slices.Reverse(newer) // newest first
	unchecked := 0
	if len(newer) > MaxTagCandidates {
		// The newest (a skipRange successor is usually the newest) and the
		// next one up (a replaces chain's only successor).
		unchecked = len(newer) - MaxTagCandidates
		newer = append(newer[:MaxTagCandidates-1:MaxTagCandidates-1], newer[len(newer)-1])
	}
	fromV := from.CSV.Spec.Version.Version
	for _, tg := range newer {
		ref := repo + ":" + tg.Name
		origin, err := o.Loader.Resolve(ctx, ref)
		if err != nil {
			return f, err
		}
		b, err := o.Loader.Load(ctx, origin)
		if err != nil {
			return f, fmt.Errorf("%s: %w", ref, err)
		}
		if b.CSV == nil {
			return f, fmt.Errorf("%s: the bundle has no ClusterServiceVersion", ref)
		}
		c := Candidate{Version: tg.Name, Edges: csvEdges(b, from.CSV.Name, fromV)}
		f.candidates = append(f.candidates, c)
		if f.chosen == "" && len(c.Edges) > 0 {
			f.chosen = tg.Name
		}
	}
	if f.chosen == "" {
		names := make([]string, len(f.candidates))
		for i, c := range f.candidates {
			names[i] = c.Version
		}
		f.reason = fmt.Sprintf("the newer tags of %s (%s) do not upgrade from %s: none replaces or skips it or has an olm.skipRange holding %s, so OLM would not move to them; review one with olm-cmp diff %s --to-version TAG and bump by hand",
			repo, strings.Join(names, ", "), from.CSV.Name, fromV, t.dir)
		if unchecked > 0 {
			f.reason += fmt.Sprintf(" (%d newer tags between them and %s not read)", unchecked, f.current)
		}
	}
	return f, nil
}

// csvEdges are the edges by which b's CSV upgrades from the CSV name at
// version v.
func csvEdges(b *bundle.Bundle, name string, v bsemver.Version) []string {
	edges := []string{}
	s := b.CSV.Spec
	if s.Replaces == name {
		edges = append(edges, "replaces "+name)
	}
	if slices.Contains(s.Skips, name) {
		edges = append(edges, "skips "+name)
	}
	if sr := b.CSV.Annotations["olm.skipRange"]; sr != "" {
		if r, err := bsemver.ParseRange(sr); err == nil && r(v) {
			edges = append(edges, "skipRange "+sr)
		}
	}
	return edges
}
