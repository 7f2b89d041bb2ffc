package requirements

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
)

// dependencyFindings reports the packages the bundle requires
// (dependencies.yaml olm.package, properties olm.package.required, and the
// packages of olm.constraint): OLM v0 would install them first; olm-cmp,
// like OLM v1, does not.
func dependencyFindings(in Input) []Finding {
	if in.Bundle == nil {
		return nil
	}
	var out []Finding
	add := func(pkgs []string, versions, source, why string) {
		subject := strings.Join(pkgs, " or ")
		msg := fmt.Sprintf("needs package %s", subject)
		if versions != "" {
			msg += " " + versions
		}
		if why != "" {
			msg += " (" + why + ")"
		}
		msg += " installed first: OLM v0 would install it, olm-cmp does not"
		out = append(out, Finding{Category: Dependency, Subject: subject, Source: source, Severity: Required, Message: msg,
			Fix: fmt.Sprintf("install it first (its own Application, in an earlier sync wave or synced before this one), then accept %q", "dependency:"+subject)})
	}
	if why := in.Bundle.DependenciesUnreadable; why != "" {
		out = append(out, unreadableDependencies(why))
	}
	for _, src := range []struct {
		file  string
		props []bundle.Property
	}{{"metadata/dependencies.yaml", in.Bundle.Dependencies}, {"metadata/properties.yaml", in.Bundle.Properties}} {
		for _, p := range src.props {
			switch p.Type {
			case "olm.package", "olm.package.required":
				var v struct {
					PackageName  string `json:"packageName"`
					Version      string `json:"version"`
					VersionRange string `json:"versionRange"`
				}
				if json.Unmarshal(p.Value, &v) != nil || v.PackageName == "" {
					continue
				}
				add([]string{v.PackageName}, v.Version+v.VersionRange, src.file+" "+p.Type, "")
			case "olm.constraint":
				var v struct {
					FailureMessage string `json:"failureMessage"`
				}
				_ = json.Unmarshal(p.Value, &v)
				if pkgs := constraintPackages(p.Value); len(pkgs) > 0 {
					add(pkgs, "", src.file+" olm.constraint", v.FailureMessage)
				}
			}
		}
	}
	return out
}

// unreadableDependencies is the finding for a metadata/dependencies.yaml
// the loader could not read (why: "not valid YAML near line 22: …"). OLM v1
// never reads the file to render, so the render goes on; what the operator
// needs installed first is then unknown, which the user must find out.
func unreadableDependencies(why string) Finding {
	return Finding{
		Category: Dependency, Subject: "unknown", Source: bundle.DependenciesFile, Severity: Warning,
		Message: fmt.Sprintf("the packages this operator needs installed first are unknown: %s cannot be read (%s); OLM v1 does not read it to render, and neither does olm-cmp",
			bundle.DependenciesFile, why),
		Fix: fmt.Sprintf("read the file (or the operator's documentation) for the operators it needs, install them first, then accept %q", "dependency:unknown"),
	}
}

// constraintPackages are the packageNames anywhere in an olm.constraint
// (inside any/all/not), sorted.
func constraintPackages(raw json.RawMessage) []string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(x any) {
		switch t := x.(type) {
		case map[string]any:
			if p, ok := t["packageName"].(string); ok && p != "" {
				out = append(out, p)
			}
			for _, c := range t {
				walk(c)
			}
		case []any:
			for _, c := range t {
				walk(c)
			}
		}
	}
	walk(v)
	return slices.Compact(slices.Sorted(slices.Values(out)))
}
