package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/validate"
)

// originOf tells the validate step where an object came from, so that the
// line of an object the API server would refuse names the file and the fix
// that fit it. validate knows only what an object says; the pipeline knows
// which objects the extra manifests, the examples and the bundle's
// manifests/ gave. An object is named only when exactly one of them gave an
// object of its group, kind and name (sameObject): otherwise the line keeps
// validate's general wording (and checkUnique refuses the pair anyway).
//
//   - an extra manifest: the user's file, to fix (validate's wording);
//   - an object of manifests/ (not a CRD: its fix is validate's own): the
//     vendor's file, which the user cannot fix, so the fix is to leave the
//     object out (spec.exclude), or its whole file (spec.excludeFiles, when
//     the loader would allow it), or to correct it with spec.patches;
//   - an example, and objects conversion made from the CSV: validate's
//     wording.
func (p *pipeline) originOf(n *yaml.RNode) validate.Origin {
	k := sameObject(n)
	extra, inBundle := p.extraFiles[k], p.bundleFilesOf(k)
	sources := len(extra) + len(inBundle)
	if p.exampleObjs[k] {
		sources++
	}
	switch {
	case sources != 1:
		return validate.Origin{}
	case len(extra) == 1:
		return validate.Origin{Where: "the extra manifest " + extra[0]}
	case len(inBundle) == 1:
		return validate.Origin{Where: "the bundle file " + inBundle[0], Fix: p.bundleFileFix(n, inBundle[0])}
	}
	return validate.Origin{}
}

// bundleFilesOf is the files of manifests/ holding an object keyed k
// (sameObject), CRDs left out.
func (p *pipeline) bundleFilesOf(k string) []string {
	if p.bundleFiles == nil {
		p.bundleFiles = make(map[string][]string, len(p.b.Others))
		for _, o := range p.b.Others {
			key := sameObject(o.RNode)
			p.bundleFiles[key] = append(p.bundleFiles[key], o.File)
		}
	}
	return p.bundleFiles[k]
}

// bundleFileFix is the fix for an object of the bundle file file that the
// API server would refuse.
func (p *pipeline) bundleFileFix(n *yaml.RNode, file string) string {
	fix := "the bundle ships it so: leave it out with spec.exclude: [" + echo.Quote(excludeSelector(n)) + "]"
	if p.skippable(file) {
		fix += fmt.Sprintf(" (or its whole file with spec.excludeFiles: [%s])", file)
	}
	return fix + ", or correct it with spec.patches"
}

// skippable says whether spec.excludeFiles may name file: the loader
// refuses to skip the CSV's file or that of a CRD the CSV owns.
func (p *pipeline) skippable(file string) bool {
	return file != p.b.CSVFile && !p.ownedCRDFiles[file]
}

// ownedCRDFiles are the files of b's CRDs that its CSV owns.
func ownedCRDFiles(b *bundle.Bundle) map[string]bool {
	files := map[string]bool{}
	for _, c := range b.CRDs {
		if c.RNode != nil && slices.ContainsFunc(b.CSV.Spec.CustomResourceDefinitions.Owned, func(o v1alpha1.CRDDescription) bool { return o.Name == c.GetName() }) {
			files[c.File] = true
		}
	}
	return files
}

// excludeSelector is the spec.exclude entry that selects n alone:
// group/Kind/name, or Kind/name for the core group.
func excludeSelector(n *yaml.RNode) string {
	sel := n.GetKind() + "/" + n.GetName()
	if group, _, found := strings.Cut(n.GetApiVersion(), "/"); found {
		sel = group + "/" + sel
	}
	return sel
}
