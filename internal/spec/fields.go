package spec

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	kustomizetypes "sigs.k8s.io/kustomize/api/types"

	"github.com/olm-cmp/olm-cmp/internal/jsonfields"
)

// olmFields are field names of OLM's own objects (Subscription,
// OperatorGroup, OLM v1's ClusterExtension) that users coming from OLM
// write in olm-cmp.yaml: each says what olm-cmp has instead.
var olmFields = map[string]string{
	"targetNamespaces":        "OLM's OperatorGroup field is spec.watchNamespaces here (a list; leave it out to watch all namespaces)",
	"installMode":             "olm-cmp picks the install mode from spec.watchNamespaces: leave it out for AllNamespaces, [the install namespace] for OwnNamespace, one other namespace for SingleNamespace",
	"installModes":            "olm-cmp picks the install mode from spec.watchNamespaces: leave it out for AllNamespaces, [the install namespace] for OwnNamespace, one other namespace for SingleNamespace",
	"startingCSV":             "olm-cmp renders one bundle: name its version with spec.version (the image tag, or with spec.catalog a version range such as 1.2.x)",
	"installPlanApproval":     "olm-cmp has no install plans (an Argo CD sync is the approval): remove it, and pin the bundle with spec.version and spec.digest (olm-cmp resolve --write)",
	"approval":                "olm-cmp has no install plans (an Argo CD sync is the approval): remove it, and pin the bundle with spec.version and spec.digest (olm-cmp resolve --write)",
	"source":                  "a Subscription's CatalogSource is spec.catalog here: the catalog image itself (or a ./directory), with spec.package",
	"sourceNamespace":         "olm-cmp reads the catalog image named by spec.catalog directly: remove it",
	"sourceType":              "olm-cmp reads the catalog image named by spec.catalog directly: remove it",
	"packageName":             "the OLM package is spec.package here (with spec.catalog)",
	"channels":                "spec.channel here takes one channel or several separated by commas (with spec.catalog)",
	"serviceAccount":          "olm-cmp installs nothing itself (Argo CD applies what it renders), so it needs no installer ServiceAccount: remove it; extra ServiceAccounts for operands go in spec.serviceAccounts",
	"upgradeConstraintPolicy": "olm-cmp checks a version bump when spec.upgradeFrom names the version the cluster runs: set that instead",
	"installNamespace":        "the install namespace is spec.namespace here",
}

// olmHint returns OLM's field's pointer to olm-cmp's equivalent, "" for
// other keys. spec.name (a Subscription's package) is only such a field
// directly under spec, where olm-cmp has no name.
func olmHint(parent, key string) string {
	if key == "name" && parent == "spec" {
		return "a Subscription's package name is spec.package here (with spec.catalog); the operator's own name goes in metadata.name"
	}
	if h, ok := olmFields[key]; ok && (parent == "" || parent == "spec" || parent == "spec.config") {
		return h
	}
	return ""
}

// fieldHomes maps each field name of olm-cmp.yaml's own structure (File,
// its spec, spec.syncWaves, spec.config, a patch and its target) to the
// paths where it belongs, so a key indented under the wrong parent is told
// where to go. The types of OLM and Kubernetes below spec.config are left
// out: their common names (name, value, key) would point anywhere.
var fieldHomes = sync.OnceValue(func() map[string][]string {
	homes, _ := fieldTree()
	return homes
})

// listFields are the paths of fieldHomes that hold lists (spec.patches):
// a key belonging there goes in one of its items.
var listFields = sync.OnceValue(func() map[string]bool {
	_, lists := fieldTree()
	return lists
})

func fieldTree() (map[string][]string, map[string]bool) {
	homes, lists := map[string][]string{}, map[string]bool{}
	var walk func(t reflect.Type, path string, depth int)
	walk = func(t reflect.Type, path string, depth int) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || depth > 4 {
			return
		}
		for name, f := range jsonfields.Of(t) {
			p := fieldPath(path, name)
			homes[name] = append(homes[name], p)
			ft := f.Type
			if ft.Kind() == reflect.Slice {
				lists[p] = true
			}
			for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
				ft = ft.Elem()
			}
			own := ft.PkgPath() == reflect.TypeFor[File]().PkgPath()
			if own || ft == reflect.TypeFor[kustomizetypes.Patch]() || ft == reflect.TypeFor[kustomizetypes.Selector]() && depth < 3 {
				walk(ft, p, depth+1)
			} else if ft == reflect.TypeFor[v1alpha1.SubscriptionConfig]() {
				for n := range jsonfields.Of(ft) {
					homes[n] = append(homes[n], fieldPath(p, n))
				}
			}
		}
	}
	walk(reflect.TypeFor[File](), "", 0)
	for _, ps := range homes {
		slices.Sort(ps)
	}
	return homes, lists
}

// misplaced says where key, unknown under parent, belongs in olm-cmp.yaml
// and how to move it there, or "" when it belongs nowhere (or in several
// places). It also returns the path it belongs at.
func misplaced(parent, key string) (msg, home string) {
	// The shallowest home, when one is: namespace is spec.namespace
	// rather than a patch target's.
	var best []string
	for _, h := range fieldHomes()[key] {
		switch d := strings.Count(h, "."); {
		case len(best) == 0 || d < strings.Count(best[0], "."):
			best = []string{h}
		case d == strings.Count(best[0], "."):
			best = append(best, h)
		}
	}
	if len(best) != 1 {
		return "", ""
	}
	home = best[0]
	homeParent := ""
	if i := strings.LastIndexByte(home, '.'); i >= 0 {
		homeParent = home[:i]
	}
	// Paths of list items (spec.patches[0].target) are compared without
	// their index.
	at := stripIndexes(parent)
	switch {
	case homeParent == at:
		return "", "" // a field of this very parent: not a misplacement
	case homeParent == "":
		return fmt.Sprintf("%s is a top-level field, not one of %s: indent it as far as spec", key, parent), home
	case (at == "" || strings.HasPrefix(homeParent, at+".")) && listFields()[homeParent]:
		return fmt.Sprintf("%s belongs in an item of the list %s (%s): indent it under %s, as \"- %s: ...\"", key, homeParent, home, lastName(homeParent), key), home
	case at == "" || strings.HasPrefix(homeParent, at+"."):
		return fmt.Sprintf("%s belongs under %s (%s): indent it under %s", key, homeParent, home, lastName(homeParent)), home
	case strings.HasPrefix(at, homeParent+"."):
		// home's parent is an ancestor: the key is indented too deep.
		sibling := strings.TrimPrefix(at, homeParent+".")
		sibling, _, _ = strings.Cut(sibling, ".")
		return fmt.Sprintf("%s belongs to %s (%s), not to %s: indent it as far as %s", key, homeParent, home, parent, sibling), home
	}
	return fmt.Sprintf("%s belongs under %s (%s), not under %s: move it there", key, homeParent, home, parent), home
}

// stripIndexes removes list indexes from a field path.
func stripIndexes(p string) string {
	var b strings.Builder
	depth := 0
	for _, r := range p {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func lastName(p string) string { return p[strings.LastIndexByte(p, '.')+1:] }
