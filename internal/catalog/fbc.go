package catalog

import (
	"cmp"
	"context"
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
//     an empty q.Range is no filter, pre-releases included, as OLM v1's
//     resolver applies no range when the ClusterExtension names no version;
//   - non-deprecated bundles win, then the highest version, then the highest
//     release (the olm.package `release` field, or legacy build metadata);
//   - a bundle declaring dependencies (olm.package.required, olm.gvk.required,
//     olm.constraint) is an error, as OLM v1 does not install them.
//
// The catalog reader is small and hand-written (operator-registry's declcfg
// would add 40 MB to the binary): it reads .yaml/.yml/.json files anywhere
// under the root in one streaming pass (read.go), honours .indexignore files
// (gitignore-style patterns; `!` negation is not supported), keeps only the
// fields resolution uses, and checks the package as opm validate does
// (fbcPackage.validate). fsys may be a *Catalog (Open), whose index answers
// without reading the catalog.
func Choose(ctx context.Context, fsys fs.FS, q Query) (image string, version string, err error) {
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
	cat, err := Open(fsys, "").read(ctx, pkg)
	if err != nil {
		return "", "", err
	}

	// A copy: the package may be shared (Memo), and candidates is cut and
	// sorted below.
	candidates := slices.Clone(cat.bundles)
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
		candidates = slices.DeleteFunc(candidates, func(b fbcBundle) bool { return !inChannels[b.name] })
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
			return "", "", fmt.Errorf("catalog: package %s has no bundles in %s", echo.Quote(pkg), echo.Short(where))
		}
		return "", "", fmt.Errorf("catalog: no bundle of package %s in %s matches version range %s (versions: %s)", echo.Quote(pkg), echo.Short(where), echo.Quote(versionRange), echo.Short(strings.Join(all, ", ")))
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
			return "", "", fmt.Errorf("catalog: bundle %s declares a dependency (property %s), which OLM v1 and olm-cmp do not install; install the dependency separately and pin another version", echo.Quote(best.name), p)
		}
	}
	if best.image == "" {
		return "", "", fmt.Errorf("catalog: bundle %s has no image", echo.Quote(best.name))
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
			return nil, fmt.Errorf("catalog: package %s has no channel %s (channels: %s)", echo.Quote(pkg), echo.Quote(n), echo.Short(strings.Join(slices.Sorted(maps.Keys(c.channels)), ", ")))
		}
		names = append(names, n)
	}
	return names, nil
}

// compareRelease orders releases by dot-separated segments as OLM does
// (semver pre-release rules): numerically where both segments are numbers,
// a number below any other segment, others lexically; no release is the
// lowest.
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
		switch {
		case aerr == nil && berr == nil:
			c = cmp.Compare(ai, bi)
		case aerr == nil:
			c = -1 // 9 < 10a, as in semver: a number is below any word
		case berr == nil:
			c = 1
		default:
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
