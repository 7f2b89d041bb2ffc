package catalog

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	mmsemver "github.com/Masterminds/semver/v3"
	bsemver "github.com/blang/semver/v4"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/echo"
)

// Choose picks a bundle of q.Package from the file-based catalog (FBC) in
// fsys (the directory the operators.operatorframework.io.index.configs.v1
// label names) and returns its image and version, following OLM v1's
// CatalogResolver for one catalog and no installed bundle:
//
//   - candidates are every olm.bundle of the package when q.Channel is empty,
//     else the bundles listed in the named channel(s) (comma-separated);
//   - q.Range is a Masterminds/semver constraint (">=1.0.0, <2", "~1.2",
//     "1.2.x", "1.0 - 1.4", "a || b"); pre-releases match only when named;
//   - non-deprecated bundles win, then the highest version, then the highest
//     release (the olm.package `release` field, or legacy build metadata);
//   - a bundle declaring dependencies (olm.package.required, olm.gvk.required,
//     olm.constraint) is an error, as OLM v1 does not install them.
//
// The catalog reader is small and hand-written (operator-registry's declcfg
// would add 40 MB to the binary): it reads .yaml/.yml/.json files anywhere
// under the root, honours .indexignore files (gitignore-style patterns; `!`
// negation is not supported), and needs only the fields resolution uses.
func Choose(fsys fs.FS, q Query) (image string, version string, err error) {
	pkg, versionRange, channel := q.Package, q.Range, q.Channel
	if pkg == "" {
		return "", "", errors.New("catalog: no package name given")
	}
	var constraint *mmsemver.Constraints
	if versionRange != "" {
		if constraint, err = mmsemver.NewConstraint(versionRange); err != nil {
			return "", "", fmt.Errorf("version range %s is invalid: %s", echo.Quote(versionRange), echo.Short(err.Error()))
		}
	}
	cat, err := readCatalog(fsys, pkg)
	if err != nil {
		return "", "", err
	}
	if !cat.found {
		return "", "", fmt.Errorf("catalog: package %q not found", pkg)
	}

	candidates := cat.bundles
	channels, err := cat.namedChannels(pkg, channel)
	if err != nil {
		return "", "", err
	}
	if channel != "" {
		inChannels := map[string]bool{}
		for _, c := range channels {
			for _, e := range cat.channels[c] {
				inChannels[e.Name] = true
			}
		}
		candidates = slices.DeleteFunc(slices.Clone(candidates), func(b fbcBundle) bool { return !inChannels[b.name] })
	}
	var all []string
	for _, b := range candidates {
		all = append(all, b.versionStr)
	}
	if constraint != nil {
		candidates = slices.DeleteFunc(candidates, func(b fbcBundle) bool { return !constraint.Check(b.constrained) })
	}
	if len(candidates) == 0 {
		where := "any channel"
		if len(channels) > 0 {
			where = "channel " + strings.Join(channels, ", ")
		}
		if versionRange == "" {
			return "", "", fmt.Errorf("catalog: package %q has no bundles in %s", pkg, where)
		}
		return "", "", fmt.Errorf("catalog: no bundle of package %s in %s matches version range %s (versions: %s)", echo.Quote(pkg), where, echo.Quote(versionRange), strings.Join(all, ", "))
	}
	slices.SortStableFunc(candidates, func(a, b fbcBundle) int {
		if da, db := cat.deprecated[a.name], cat.deprecated[b.name]; da != db {
			if da {
				return 1
			}
			return -1
		}
		if c := b.version.Compare(a.version); c != 0 {
			return c
		}
		return compareRelease(b.release, a.release)
	})
	best := candidates[0]
	for _, p := range best.properties {
		switch p {
		case "olm.package.required", "olm.gvk.required", "olm.constraint":
			return "", "", fmt.Errorf("catalog: bundle %q declares a dependency (property %s), which OLM v1 and olm-cmp do not install; install the dependency separately and pin another version", best.name, p)
		}
	}
	if best.image == "" {
		return "", "", fmt.Errorf("catalog: bundle %q has no image", best.name)
	}
	return best.image, best.versionStr, nil
}

// namedChannels splits channel (comma-separated, as spec.channel writes it)
// into channel names, each of which the package must have.
func (c *fbcPackage) namedChannels(pkg, channel string) ([]string, error) {
	var names []string
	for _, n := range strings.Split(channel, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if _, ok := c.channels[n]; !ok {
			return nil, fmt.Errorf("catalog: package %q has no channel %q (channels: %s)", pkg, n, strings.Join(slices.Sorted(maps.Keys(c.channels)), ", "))
		}
		names = append(names, n)
	}
	return names, nil
}

type fbcBundle struct {
	name, image, versionStr, release string
	// version orders bundles; constrained is the same version for
	// Masterminds constraints (OLM v1 parses with blang and matches ranges
	// with Masterminds), converted once, when the catalog is read.
	version     bsemver.Version
	constrained *mmsemver.Version
	properties  []string // property types
}

type fbcPackage struct {
	found      bool
	bundles    []fbcBundle
	channels   map[string][]Entry // channel → its entries, in file order
	deprecated map[string]bool    // bundle names
}

// fbcObject holds the fields of every schema resolution needs.
type fbcObject struct {
	Schema  string `yaml:"schema"`
	Name    string `yaml:"name"`
	Package string `yaml:"package"`
	Image   string `yaml:"image"`
	Entries []struct {
		Name      string   `yaml:"name"`
		Replaces  string   `yaml:"replaces"`
		Skips     []string `yaml:"skips"`
		SkipRange string   `yaml:"skipRange"`
		Reference struct {
			Schema string `yaml:"schema"`
			Name   string `yaml:"name"`
		} `yaml:"reference"`
	} `yaml:"entries"`
	Properties []struct {
		Type  string    `yaml:"type"`
		Value yaml.Node `yaml:"value"`
	} `yaml:"properties"`
}

func readCatalog(fsys fs.FS, pkg string) (*fbcPackage, error) {
	cat := &fbcPackage{channels: map[string][]Entry{}, deprecated: map[string]bool{}}
	ignores := map[string][]string{} // directory → .indexignore patterns
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			data, err := fs.ReadFile(fsys, path.Join(p, ".indexignore"))
			if err == nil {
				ignores[p] = parseIgnore(data)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		if p != "." && ignored(ignores, p, d.IsDir()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || d.Name() == ".indexignore" {
			return nil
		}
		switch path.Ext(p) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		docs, err := bundle.ParseDocuments(data)
		if err != nil {
			return fmt.Errorf("catalog file %s: %w", p, err)
		}
		for i, doc := range docs {
			if doc == nil || doc.Kind != yaml.MappingNode {
				continue
			}
			rn := yaml.NewRNode(doc)
			if pk, name := scalar(rn, "package"), scalar(rn, "name"); pk != pkg && !(scalar(rn, "schema") == "olm.package" && name == pkg) {
				continue // most of a catalog is other packages: skip before decoding
			}
			var o fbcObject
			if err := doc.Decode(&o); err != nil {
				return fmt.Errorf("catalog file %s: document %d: %w", p, i+1, err)
			}
			if err := cat.add(o); err != nil {
				return fmt.Errorf("catalog file %s: document %d: %w", p, i+1, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return cat, nil
}

func (c *fbcPackage) add(o fbcObject) error {
	switch o.Schema {
	case "olm.package":
		c.found = true
	case "olm.channel":
		for _, e := range o.Entries {
			c.channels[o.Name] = append(c.channels[o.Name], Entry{Name: e.Name, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange})
		}
	case "olm.deprecations":
		for _, e := range o.Entries {
			if e.Reference.Schema == "olm.bundle" {
				c.deprecated[e.Reference.Name] = true
			}
		}
	case "olm.bundle":
		b := fbcBundle{name: o.Name, image: o.Image}
		found := false
		for _, p := range o.Properties {
			b.properties = append(b.properties, p.Type)
			if p.Type != "olm.package" {
				continue
			}
			var v struct {
				Version string  `yaml:"version"`
				Release *string `yaml:"release"`
			}
			if err := p.Value.Decode(&v); err != nil {
				return fmt.Errorf("bundle %q: olm.package property: %w", o.Name, err)
			}
			ver, err := bsemver.Parse(v.Version)
			if err != nil {
				return fmt.Errorf("bundle %q: olm.package version %q: %w", o.Name, v.Version, err)
			}
			b.version, b.versionStr, b.constrained, found = ver, v.Version, masterminds(ver), true
			if v.Release != nil {
				b.release = *v.Release
			} else {
				b.release = strings.Join(ver.Build, ".") // legacy registry+v1: release in build metadata
			}
		}
		if !found {
			return fmt.Errorf("bundle %q has no olm.package property with its version", o.Name)
		}
		c.bundles = append(c.bundles, b)
	}
	return nil
}

// compareRelease orders releases by dot-separated segments, numerically
// where both segments are numbers; no release is the lowest.
func compareRelease(a, b string) int {
	if a == b {
		return 0
	}
	if a == "" || b == "" {
		return cmp.Compare(len(a), len(b))
	}
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		ai, aerr := strconv.ParseUint(as[i], 10, 64)
		bi, berr := strconv.ParseUint(bs[i], 10, 64)
		var c int
		if aerr == nil && berr == nil {
			c = cmp.Compare(ai, bi)
		} else {
			c = strings.Compare(as[i], bs[i])
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(as), len(bs))
}

func parseIgnore(data []byte) []string {
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
}

// ignored applies the .indexignore patterns of p's ancestors: a pattern with
// a leading or inner "/" matches the path relative to its file's directory,
// one without matches any name below it; a trailing "/" matches directories.
func ignored(ignores map[string][]string, p string, isDir bool) bool {
	for dir := path.Dir(p); ; dir = path.Dir(dir) {
		rel := p
		if dir != "." {
			rel = strings.TrimPrefix(p, dir+"/")
		}
		for _, pat := range ignores[dir] {
			if strings.HasSuffix(pat, "/") {
				if !isDir {
					continue
				}
				pat = strings.TrimSuffix(pat, "/")
			}
			if strings.Contains(pat, "/") {
				if ok, _ := path.Match(strings.TrimPrefix(pat, "/"), rel); ok {
					return true
				}
			} else if ok, _ := path.Match(pat, path.Base(p)); ok {
				return true
			}
		}
		if dir == "." {
			return false
		}
	}
}

// masterminds converts a blang version for Masterminds' constraints.
func masterminds(v bsemver.Version) *mmsemver.Version {
	pre := make([]string, len(v.Pre))
	for i, p := range v.Pre {
		pre[i] = p.String()
	}
	return mmsemver.New(v.Major, v.Minor, v.Patch, strings.Join(pre, "."), strings.Join(v.Build, "."))
}

// scalar is the value of a scalar field of an object, or "".
func scalar(n *yaml.RNode, field string) string {
	if f := n.Field(field); f != nil && f.Value.YNode().Kind == yaml.ScalarNode {
		return f.Value.YNode().Value
	}
	return ""
}
