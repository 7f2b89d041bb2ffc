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

// checkEdge judges the upgrade edge from FROM to TO as OLM does: TO must be
// reachable from FROM through replaces, skips and olm.skipRange, in the
// catalog when there is one, else between the two CSVs. Going down a
// version, or an edge the graph lacks, is a warning (an error with Strict);
// the same version is no upgrade at all.
func checkEdge(ctx context.Context, from, to *bundle.Bundle, o Options) ([]Finding, error) {
	fv, tv := from.CSV.Spec.Version.Version, to.CSV.Spec.Version.Version
	sev := Warning
	if o.Strict {
		sev = Error
	}
	switch c := tv.Compare(fv); {
	case c == 0:
		return nil, nil
	case c < 0:
		return []Finding{{Severity: sev, Rule: "upgradeEdge", Message: fmt.Sprintf("%s (%s) is older than %s (%s): OLM never goes down a version, and the new CRDs and operator may not read what the newer one stored", to.CSV.Name, tv, from.CSV.Name, fv)}}, nil
	}
	if o.Catalog != nil {
		return catalogEdge(ctx, from, to, o, sev)
	}
	if why := csvEdge(from, to); why != "" {
		return []Finding{{Severity: sev, Rule: "upgradeEdge", Message: fmt.Sprintf("no upgrade edge from %s to %s: %s", from.CSV.Name, to.CSV.Name, why)}}, nil
	}
	return nil, nil
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
func catalogEdge(ctx context.Context, from, to *bundle.Bundle, o Options, sev Severity) ([]Finding, error) {
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
		return []Finding{{Severity: sev, Rule: "upgradeEdge", Message: fmt.Sprintf("no upgrade edge from %s to %s: the catalog's package %s has no bundle of version %s", from.CSV.Name, to.CSV.Name, pkg, missing)}}, nil
	}
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
	}
	return []Finding{{Severity: sev, Rule: "upgradeEdge", Message: fmt.Sprintf("no upgrade edge from %s to %s: no path from %s to %s through replaces, skips or skipRange in %s of the catalog's package %s", froms[0], tos[0], froms[0], tos[0], where, pkg)}}, nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
