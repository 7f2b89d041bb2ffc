package safety

import (
	"context"
	"fmt"
	"slices"
	"strings"

	bsemver "github.com/blang/semver/v4"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/catalog"
)

// skipRangeAnnotation is the CSV annotation OLM reads skip ranges from.
const skipRangeAnnotation = "olm.skipRange"

// checkEdge judges the upgrade edge from FROM to TO as OLM v1 does: TO must
// be reachable from FROM through replaces, skips and olm.skipRange, in the
// catalog when there is one, else between the two CSVs. Going down a
// version, or an edge the graph lacks, is an error under OLM v1's default
// upgradeConstraintPolicy (CatalogProvided), a warning under SelfCertified
// (see edgeFinding); the same version is no upgrade at all.
func checkEdge(ctx context.Context, from, to *bundle.Bundle, o Options) ([]Finding, error) {
	fv, tv := from.CSV.Spec.Version.Version, to.CSV.Spec.Version.Version
	switch c := tv.Compare(fv); {
	case c == 0:
		return nil, nil
	case c < 0:
		return edgeFinding(o, fmt.Sprintf("%s (%s) is older than %s (%s): OLM never goes down a version by itself, and the older CRDs and operator may not read what the newer one stored", to.CSV.Name, tv, from.CSV.Name, fv),
			fmt.Sprintf("render %s or a newer version", fv)), nil
	}
	if o.Catalog != nil {
		return catalogEdge(ctx, from, to, o)
	}
	if why := csvEdge(from, to); why != "" {
		return edgeFinding(o, fmt.Sprintf("no upgrade edge from %s to %s: %s", from.CSV.Name, to.CSV.Name, why),
			fmt.Sprintf("first render a version whose CSV replaces or skips %s or has an %s holding %s", from.CSV.Name, skipRangeAnnotation, fv)), nil
	}
	return nil, nil
}

// edgeFinding is the upgradeEdge finding saying what, under o's policy:
// with CatalogProvided (OLM v1's default) an error that says how to get
// past it (fix, or SelfCertified), with SelfCertified a warning that says
// why it passes. strict changes neither: the policy is the spec's own word.
func edgeFinding(o Options, what, fix string) []Finding {
	if o.SelfCertified {
		return []Finding{{Severity: Warning, Rule: "upgradeEdge", Message: what + "; allowed as spec.upgradeConstraintPolicy is SelfCertified (you have checked this upgrade yourself; OLM v1 installs it then too)"}}
	}
	return []Finding{{Severity: Error, Rule: "upgradeEdge", Message: what + "; OLM v1's default upgradeConstraintPolicy, CatalogProvided, refuses it: " + fix + ", or set spec.upgradeConstraintPolicy: SelfCertified once you have checked this upgrade yourself"}}
}

// csvEdge says why TO's CSV is no upgrade of FROM's, or "" when it is one.
func csvEdge(from, to *bundle.Bundle) string {
	spec := to.CSV.Spec
	if spec.Replaces == from.CSV.Name || slices.Contains(spec.Skips, from.CSV.Name) {
		return ""
	}
	fv := from.CSV.Spec.Version.Version
	sr := to.CSV.Annotations[skipRangeAnnotation]
	if sr != "" {
		r, err := bsemver.ParseRange(sr)
		if err != nil {
			return fmt.Sprintf("its %s annotation %q is not a semver range", skipRangeAnnotation, sr)
		}
		if r(fv) {
			return ""
		}
	}
	return fmt.Sprintf("%s replaces %s, skips %s and has %s %s, none of which includes %s (%s)",
		to.CSV.Name, orNone(spec.Replaces), orNone(strings.Join(spec.Skips, ", ")), skipRangeAnnotation, orNone(sr), from.CSV.Name, fv)
}

// catalogEdge looks for a path from FROM to TO in the catalog's channels.
func catalogEdge(ctx context.Context, from, to *bundle.Bundle, o Options) ([]Finding, error) {
	pkg := o.Package
	if pkg == "" {
		pkg = to.Package
	}
	g, err := catalog.ReadGraph(ctx, o.Catalog, pkg, o.Channel)
	if err != nil {
		return nil, err
	}
	fv, tv := from.CSV.Spec.Version.Version, to.CSV.Spec.Version.Version
	froms, tos := g.Named(fv), g.Named(tv)
	where := "any channel"
	if o.Channel != "" {
		where = "channel " + o.Channel
	}
	if len(froms) == 0 || len(tos) == 0 {
		missing := fv
		if len(froms) != 0 {
			missing = tv
		}
		return edgeFinding(o, fmt.Sprintf("no upgrade edge from %s to %s: the catalog's package %s has no bundle of version %s", from.CSV.Name, to.CSV.Name, pkg, missing),
			"compare versions of the package (olm-cmp versions lists them)"), nil
	}
	var next []string
	for _, f := range froms {
		for _, t := range tos {
			ok, err := g.ReachesContext(ctx, f, t)
			if err != nil {
				return nil, err
			}
			if ok {
				return nil, nil
			}
		}
		succ, err := g.Successors(ctx, f)
		if err != nil {
			return nil, err
		}
		next = append(next, succ...)
	}
	return edgeFinding(o, fmt.Sprintf("no upgrade edge from %s to %s: no path through replaces, skips or skipRange in %s of the catalog's package %s", froms[0], tos[0], where, pkg),
		fmt.Sprintf("first render a version the catalog upgrades %s to (%s)", fv, versionList(g, next, where))), nil
}

// versionList names the versions of the bundles names, highest first, at
// most five, or says there are none in where.
func versionList(g *catalog.Graph, names []string, where string) string {
	var vs []bsemver.Version
	for _, n := range names {
		vs = append(vs, g.Versions[n])
	}
	slices.SortFunc(vs, func(a, b bsemver.Version) int { return b.Compare(a) })
	vs = slices.CompactFunc(vs, func(a, b bsemver.Version) bool { return a.Equals(b) })
	if len(vs) == 0 {
		return "it lists none in " + where
	}
	const most = 5
	out := make([]string, 0, most)
	for _, v := range vs[:min(len(vs), most)] {
		out = append(out, v.String())
	}
	s := strings.Join(out, ", ")
	if len(vs) > most {
		s += fmt.Sprintf(", … %d in all", len(vs))
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
