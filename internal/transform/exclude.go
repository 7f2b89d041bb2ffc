package transform

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/editdist"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// Selector is one parsed exclude entry. Each field is a path.Match pattern;
// AnyGroup means the selector named no group.
type Selector struct {
	Group, Kind, Name string
	AnyGroup          bool
}

// dotlessGroups are the built-in API groups whose names have no '.', so a
// two-segment selector starting with one of them is group/Kind. "core" stands
// for the core group, whose real name is "".
var dotlessGroups = map[string]bool{
	"core": true, "apps": true, "batch": true, "autoscaling": true, "policy": true, "extensions": true,
}

// ParseSelector parses [group/]Kind[/name]:
//
//   - "Kind": that kind in any group, any name.
//   - "a/b": group/Kind when a contains a '.' or is a built-in group without one
//     (core, apps, batch, autoscaling, policy, extensions); otherwise Kind/name.
//     So "apps/Deployment" and "console.openshift.io/*" are group/Kind, and
//     "Deployment/my-operator" and "*/my-operator" are Kind/name.
//   - "group/Kind/name".
//
// Every segment is a path.Match glob (*, ?, [a-z]). "core" names the core group
// (""); a Kind-only selector matches the core group too.
func ParseSelector(s string) (Selector, error) {
	if err := spec.ValidateSelector(s); err != nil {
		return Selector{}, err
	}
	parts := strings.Split(s, "/")
	var sel Selector
	switch len(parts) {
	case 1:
		sel = Selector{Kind: parts[0], Name: "*", AnyGroup: true}
	case 2:
		if strings.Contains(parts[0], ".") || dotlessGroups[parts[0]] {
			sel = Selector{Group: parts[0], Kind: parts[1], Name: "*"}
		} else {
			sel = Selector{Kind: parts[0], Name: parts[1], AnyGroup: true}
		}
	default:
		sel = Selector{Group: parts[0], Kind: parts[1], Name: parts[2]}
	}
	if sel.Group == "core" {
		sel.Group = ""
	}
	return sel, nil
}

// Matches reports whether n is selected.
func (s Selector) Matches(n *yaml.RNode) bool {
	gk := gkOf(n)
	// Patterns were checked by ParseSelector: path.Match cannot fail here.
	if ok, _ := path.Match(s.Kind, gk.Kind); !ok {
		return false
	}
	if ok, _ := path.Match(s.Name, n.GetName()); !ok {
		return false
	}
	if s.AnyGroup {
		return true
	}
	ok, _ := path.Match(s.Group, gk.Group)
	return ok
}

// excludeFilter drops the objects any selector matches.
type excludeFilter struct {
	selectors []string
	warn      func(string)
	drops     *Drops
}

// Exclude drops every object matching one of selectors (see ParseSelector for
// the syntax) and warns about each selector that matched nothing, naming
// what it could have meant, so a typo does not go unnoticed (see noop.go).
// An invalid selector is an error.
func Exclude(selectors []string, warn func(string)) kio.Filter {
	return excludeFilter{selectors, warn, nil}
}

// excludeRecording is Exclude noting each drop in drops.
func excludeRecording(selectors []string, warn func(string), drops *Drops) kio.Filter {
	return excludeFilter{selectors, warn, drops}
}

func (f excludeFilter) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	if len(f.selectors) == 0 {
		return nodes, nil
	}
	sels := make([]Selector, len(f.selectors))
	for i, s := range f.selectors {
		sel, err := ParseSelector(s)
		if err != nil {
			return nil, fmt.Errorf("exclude[%d]: %w", i, err)
		}
		sels[i] = sel
	}
	used := make([]bool, len(sels))
	out := nodes[:0:0]
	for _, n := range nodes {
		first := -1
		for i, sel := range sels {
			if sel.Matches(n) {
				used[i] = true
				if first < 0 {
					first = i
				}
			}
		}
		if first < 0 {
			out = append(out, n)
			continue
		}
		fix := fmt.Sprintf("remove %q from exclude (to change the object, patch it instead)", f.selectors[first])
		if gkOf(n).Group == groupCertManager {
			fix = fmt.Sprintf("remove %q from exclude, or set certificateProvider: none and supply the Secret", f.selectors[first])
		}
		f.drops.recordChosen(n, fmt.Sprintf("exclude %q matches it", f.selectors[first]), fix)
	}
	for i, u := range used {
		if !u {
			warnf(f.warn, "exclude %q matched no object; %s", f.selectors[i], nearSelections(sels[i], nodes))
		}
	}
	return out, nil
}

// nearSelections says what an exclude selector that matched nothing could
// have meant: the names of the objects of its kind when it names one (a
// misspelt name), else a kind one edit away, else the kinds rendered.
func nearSelections(sel Selector, nodes []*yaml.RNode) string {
	var names, kinds, groups []string
	kindOnly := Selector{Group: sel.Group, Kind: sel.Kind, Name: "*", AnyGroup: sel.AnyGroup}
	anyGroup := Selector{Kind: sel.Kind, Name: "*", AnyGroup: true}
	for _, n := range nodes {
		kinds = append(kinds, n.GetKind())
		if kindOnly.Matches(n) {
			names = append(names, n.GetName())
		}
		if anyGroup.Matches(n) {
			groups = append(groups, cmp.Or(gkOf(n).Group, "core"))
		}
	}
	if sel.Name != "*" && len(names) > 0 {
		slices.Sort(names)
		return "objects of that kind: " + listSome(names)
	}
	if len(names) == 0 && len(groups) > 0 {
		slices.Sort(groups)
		return "that kind is in group " + listSome(groups)
	}
	slices.Sort(kinds)
	kinds = slices.Compact(kinds)
	for _, k := range kinds {
		if editdist.OneEditApart(sel.Kind, k) {
			return "did you mean " + k + "?"
		}
	}
	none := ""
	if !strings.ContainsAny(sel.Kind, "*?[") {
		none = "no " + sel.Kind + " is rendered; "
	}
	return none + "kinds rendered: " + listUpTo(kinds, maxKinds)
}
