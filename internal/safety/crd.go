package safety

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/convert"
	"github.com/olm-cmp/olm-cmp/internal/safety/crdop"
	"github.com/olm-cmp/olm-cmp/internal/yamlsafe"
)

// checkCRDs compares every CRD of from with the CRD of the same name in to,
// both as the render applies them (see renderedCRDNodes): OLM v1 checks the
// CRDs it renders, and a conversion webhook it wires in changes crdify's
// verdict. A CRD beyond the check's limits (limits.go), or with a version
// crdify cannot read, gets a finding instead of a verdict. The others are
// compared by crdify in olm-cmp-check, all in one batch (verdicts.go). It
// stops with ctx's error once ctx is done.
func checkCRDs(ctx context.Context, from, to *bundle.Bundle, keepCRDs bool) ([]Finding, error) {
	curs, err := renderedCRDNodes(to)
	if err != nil {
		return nil, err
	}
	newCRDs := make(map[string]bundle.Object, len(curs))
	for _, c := range curs {
		newCRDs[c.GetName()] = c
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	olds, err := renderedCRDNodes(from)
	if err != nil {
		return nil, err
	}
	var out []Finding
	var todo []comparison
	for _, oldNode := range olds {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		curNode, ok := newCRDs[oldNode.GetName()]
		if !ok {
			out = append(out, crdRemoved(oldNode.GetName(), to.CSV.Name, keepCRDs))
			continue
		}
		// An unchanged CRD is safe to keep, however big: crdify would find
		// the same issues on both sides and subtract them all. Most CRDs of
		// a bump are unchanged: comparing the nodes first spares decoding
		// them (most of the check's time on big CRDs).
		if sameSpec(oldNode, curNode) {
			continue
		}
		// The limits are judged on the nodes, before decoding: decoding
		// cannot be interrupted, and a CRD beyond them (100,000 properties)
		// took seconds and 150 MB to decode. A big CRD that differs only
		// in key order is therefore reported, not passed as unchanged.
		if f := cmp.Or(crdTooBig(oldNode, from.CSV.Name), crdTooBig(curNode, to.CSV.Name)); f != nil {
			out = append(out, *f)
			continue
		}
		oldJSON, err := crdJSON(oldNode)
		if err != nil {
			return nil, err
		}
		curJSON, err := crdJSON(curNode)
		if err != nil {
			return nil, err
		}
		// A pair compared before (by this process, or by the build whose
		// cache this is) passed the checks below: its verdict is kept by
		// the two CRDs' JSON.
		key := pairKey(oldJSON, curJSON)
		if fs, ok := cachedVerdict(key); ok {
			out = append(out, fs...)
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		old, err := decodeCRDFrom(oldNode, oldJSON)
		if err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cur, err := decodeCRDFrom(curNode, curJSON)
		if err != nil {
			return nil, err
		}
		if equality.Semantic.DeepEqual(old.Spec, cur.Spec) {
			continue
		}
		if f := cmp.Or(withoutSchema(old, from.CSV.Name), withoutSchema(cur, to.CSV.Name)); f != nil {
			out = append(out, *f)
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// A bundle's CRD has no status: what the cluster has stored is at
		// most every version FROM serves or stores.
		c, err := newComparison(cur.Name, key, crdop.Input{Old: oldJSON, New: curJSON, StoredVersions: storedVersions(old)})
		if err != nil {
			return nil, err
		}
		todo = append(todo, c)
	}
	compared, err := compare(ctx, todo)
	if err != nil {
		return nil, err
	}
	return append(out, compared...), nil
}

// sameSpec reports whether two CRD nodes have equal specs, value by value
// (styles aside). An alias anywhere answers false, leaving the verdict to
// the decoded CRDs (decodeCRD bounds aliases first).
func sameSpec(a, b bundle.Object) bool {
	sa, sb := a.Field("spec"), b.Field("spec")
	if sa == nil || sb == nil {
		return false
	}
	return sameValue(sa.Value.YNode(), sb.Value.YNode(), 0)
}

func sameValue(a, b *yaml.Node, depth int) bool {
	if depth > yamlsafe.DefaultLimits.MaxDepth || a.Kind == yaml.AliasNode || b.Kind == yaml.AliasNode {
		return false
	}
	if a.Kind != b.Kind || a.ShortTag() != b.ShortTag() || a.Value != b.Value || len(a.Content) != len(b.Content) {
		return false
	}
	for i := range a.Content {
		if !sameValue(a.Content[i], b.Content[i], depth+1) {
			return false
		}
	}
	return true
}

// withoutSchema is a finding when a version of c (of the bundle whose CSV
// is csv) has no schema: crdify would dereference it. (A CRD beyond the
// check's limits was reported before decoding: crdTooBig.)
func withoutSchema(c *apiextensionsv1.CustomResourceDefinition, csv string) *Finding {
	for i, v := range c.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return &Finding{Severity: Error, Rule: "schema", CRD: c.Name, Version: v.Name, Message: fmt.Sprintf(
				"%s ships this version without a schema (spec.versions[%d].schema.openAPIV3Schema), which an apiextensions.k8s.io/v1 CRD must have (the API server refuses it), so this CRD's upgrade is not checked: give the version a schema",
				csv, i)}
		}
	}
	return nil
}

// renderedCRDNodes are the bundle's CRDs as the render emits them
// (convert.GenerateCRDs), each with its file: a CRD a conversion webhook
// serves gets spec.conversion.strategy Webhook. The options only set the
// webhook Service's namespace and the CA annotation, which no check reads.
func renderedCRDNodes(b *bundle.Bundle) ([]bundle.Object, error) {
	nodes, err := convert.GenerateCRDs(b, convert.Options{})
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", b.CSV.Name, err)
	}
	out := make([]bundle.Object, len(nodes))
	for i, n := range nodes {
		out[i] = bundle.Object{File: b.CRDs[i].File, RNode: n}
	}
	return out, nil
}

func crdRemoved(name, to string, keepCRDs bool) Finding {
	if keepCRDs {
		return Finding{Severity: Warning, Rule: "crdRemoved", CRD: name, Message: fmt.Sprintf("%s no longer ships this CRD: keepCRDs keeps it on the cluster, unmanaged (delete it by hand once no object of it is left)", to)}
	}
	return Finding{Severity: Error, Rule: "crdRemoved", CRD: name, Message: fmt.Sprintf("%s no longer ships this CRD, and with keepCRDs: false Argo CD prunes it, deleting every object of it: set keepCRDs: true, or migrate the objects first", to)}
}

// storedVersions are the versions FROM serves plus its storage version,
// sorted.
func storedVersions(c *apiextensionsv1.CustomResourceDefinition) []string {
	var vs []string
	for _, v := range c.Spec.Versions {
		if v.Served || v.Storage {
			vs = append(vs, v.Name)
		}
	}
	slices.Sort(vs)
	return vs
}
