// Package diff compares two renders object by object, for review: what a
// version bump adds, removes (what Argo CD prunes) and changes, with a
// summary of each change a reviewer can read before the raw diff.
//
// Objects are paired by what they are, not only by name: OLM names its RBAC
// <csv>-<sa>-<hash of the rules>, so a rule change or a CSV rename gives the
// same Role a new name; pairing it by its ServiceAccount shows the rule diff
// instead of one object added and another removed.
package diff

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/safety"
	"github.com/olm-cmp/olm-cmp/internal/transform"
)

// Object names one object: its JSON form is part of `olm-cmp diff -o json`.
// Every key is always present (namespace is "" for cluster-scoped objects).
type Object struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// String is "Kind.group namespace/name" ("Kind name" for the core group,
// cluster-scoped).
func (o Object) String() string {
	kind := o.Kind
	if o.Group != "" {
		kind += "." + o.Group
	}
	return kind + " " + strings.TrimPrefix(o.Namespace+"/"+o.Name, "/")
}

// Removed is an object of FROM that TO lacks.
type Removed struct {
	Object
	// Pruned is whether Argo CD deletes it on sync: false when FROM's object
	// carries Prune=false (CRDs under keepCRDs, the default).
	Pruned bool `json:"pruned"`
}

// Change is an object present on both sides that differs.
type Change struct {
	// Object is the object as TO names it.
	Object
	// PreviousName is FROM's name when the object was paired across a rename
	// (hashed RBAC, a CSV rename), else "".
	PreviousName string `json:"previousName"`
	// Summary says what changed in words (CRD versions and fields, images,
	// RBAC rules), before the raw diff; it may be empty.
	Summary []string `json:"summary"`
	// Diff is the unified diff of the two YAML documents.
	Diff string `json:"diff"`
}

// Side identifies one render.
type Side struct {
	Package string `json:"package"`
	Version string `json:"version"`
	CSV     string `json:"csv"`
	// Source is where the bundle came from: image@digest, or the directory
	// with its content digest.
	Source string `json:"source"`
}

// Report is the whole comparison, in the order a reviewer reads it.
type Report struct {
	From   Side
	To     Side
	Safety []safety.Finding
	// Requirements are the requirement findings the bump adds or removes.
	Requirements Requirements
	Added        []Object
	Removed      []Removed
	Changed      []Change
}

// HasChanges reports whether the renders differ: in their objects, or in
// what the operator requires of the cluster.
func (r *Report) HasChanges() bool {
	return len(r.Added)+len(r.Removed)+len(r.Changed)+r.Requirements.changes() > 0
}

// Count returns the findings of severity s not acknowledged.
func (r *Report) Count(s safety.Severity) int {
	n := 0
	for _, f := range r.Safety {
		if f.Severity == s && f.Acknowledged == "" {
			n++
		}
	}
	return n
}

// Acknowledged counts the findings spec.acknowledge names.
func (r *Report) Acknowledged() int {
	n := 0
	for _, f := range r.Safety {
		if f.Acknowledged != "" {
			n++
		}
	}
	return n
}

// IgnoredAnnotationPrefix marks the provenance annotations every rendered
// object carries (bundle, package@version, source): they change with every
// bump and say nothing about the object, so they are left out of the diff.
const IgnoredAnnotationPrefix = "olm-cmp.dev/"

// item is one parsed manifest.
type item struct {
	obj  Object
	node *yaml.RNode
	text string // the YAML document without provenance annotations
	// rewritten says text was written from the node (the document was not
	// in the renderer's form, see stripProvenance), not cut from the
	// document: its counterpart must be written the same way to compare.
	rewritten bool
}

// rewrite sets text from the node without its provenance annotations.
func (it *item) rewrite() error {
	if it.rewritten {
		return nil
	}
	n := it.node.Copy()
	var drop []string
	for k := range n.GetAnnotations() {
		if strings.HasPrefix(k, IgnoredAnnotationPrefix) {
			drop = append(drop, k)
		}
	}
	slices.Sort(drop)
	for _, k := range drop {
		if err := n.PipeE(yaml.ClearAnnotation(k)); err != nil {
			return err
		}
	}
	text, err := n.String()
	if err != nil {
		return err
	}
	it.text, it.rewritten = text, true
	return nil
}

// Compare pairs the objects of two renders (YAML documents, in apply order)
// and reports what was added, removed and changed. fromCSV and toCSV, the
// CSV names, let an object named after the CSV pair across a CSV rename.
// Added and changed follow TO's order, removed FROM's.
func Compare(from, to []string, fromCSV, toCSV string) (*Report, error) {
	return CompareContext(context.Background(), from, to, fromCSV, toCSV)
}

// CompareContext is Compare, stopped when ctx ends: its cost is linear in
// the renders' size, but a CRD of 100,000 properties still takes a second
// or two, and `diff --timeout` bounds the whole command. It checks ctx
// between objects, while it parses a document (every 512 bytes read) and
// while it summarises a CRD (every few thousand schema nodes).
func CompareContext(ctx context.Context, from, to []string, fromCSV, toCSV string) (*Report, error) {
	a, err := parseAll(ctx, from)
	if err != nil {
		return nil, sideError("FROM", err)
	}
	b, err := parseAll(ctx, to)
	if err != nil {
		return nil, sideError("TO", err)
	}
	pairs := pair(a, b, fromCSV, toCSV) // index in b → index in a
	r := &Report{Added: []Object{}, Removed: []Removed{}, Changed: []Change{}}
	paired := make(map[int]bool, len(pairs))
	cells := maxDiffCells
	for j, it := range b {
		i, ok := pairs[j]
		if !ok {
			r.Added = append(r.Added, it.obj)
			continue
		}
		paired[i] = true
		old := a[i]
		if old.text != it.text && old.rewritten != it.rewritten {
			// One side was written from its node: write the other so too.
			if err := old.rewrite(); err != nil {
				return nil, err
			}
			if err := it.rewrite(); err != nil {
				return nil, err
			}
		}
		if old.text == it.text {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("comparing the renders: %w", err)
		}
		c, err := change(ctx, old, it, &cells)
		if err != nil {
			if errors.Is(err, ctx.Err()) {
				return nil, fmt.Errorf("comparing the renders: %w", err)
			}
			return nil, fmt.Errorf("%s: %w", it.obj, err)
		}
		r.Changed = append(r.Changed, c)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("comparing the renders: %w", err)
	}
	for i, it := range a {
		if !paired[i] {
			r.Removed = append(r.Removed, Removed{Object: it.obj, Pruned: pruned(it.node)})
		}
	}
	return r, nil
}

// sideError names the render a document of which does not parse; the
// deadline's error (comparing the renders: …) is no render's.
func sideError(side string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("the %s render: %w", side, err)
}

func parseAll(ctx context.Context, manifests []string) ([]item, error) {
	items := make([]item, 0, len(manifests))
	for i, m := range manifests {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("comparing the renders: %w", err)
		}
		n, err := parseDocument(ctx, m)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, fmt.Errorf("comparing the renders: %w", cerr)
			}
			return nil, fmt.Errorf("document %d is not valid YAML: %w", i+1, err)
		}
		var drop []string
		for k := range n.GetAnnotations() {
			if strings.HasPrefix(k, IgnoredAnnotationPrefix) {
				drop = append(drop, k)
			}
		}
		// The renderer's text, cut; a document not in its block form (a
		// hand-made manifest) is written from the node instead.
		it := item{node: n}
		text, ok := stripProvenance(m, len(drop))
		if ok {
			it.text = text
		} else if err := it.rewrite(); err != nil {
			return nil, err
		}
		group, _, found := strings.Cut(n.GetApiVersion(), "/")
		if !found {
			group = ""
		}
		it.obj = Object{Group: group, Kind: n.GetKind(), Namespace: n.GetNamespace(), Name: n.GetName()}
		items = append(items, it)
	}
	return items, nil
}

// parseDocument is yaml.Parse(m), stopped when ctx ends: the parser reads
// its input 512 bytes at a time, and each read checks ctx, so a CRD of
// several megabytes (seconds to parse) does not run past the deadline.
func parseDocument(ctx context.Context, m string) (*yaml.RNode, error) {
	var n yaml.Node
	if err := yaml.NewDecoder(ctxReader{ctx, strings.NewReader(m)}).Decode(&n); err != nil {
		return nil, err
	}
	return yaml.NewRNode(&n), nil
}

// ctxReader is r that fails with ctx's error once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// pruned reports whether Argo CD prunes the live object when the render
// drops it: not when its sync options say Prune=false.
func pruned(n *yaml.RNode) bool {
	for _, o := range strings.Split(n.GetAnnotations()[transform.SyncOptionsAnnotation], ",") {
		if strings.TrimSpace(o) == transform.OptPruneFalse {
			return false
		}
	}
	return true
}

// change describes one paired object that differs.
func change(ctx context.Context, old, cur item, cells *int) (Change, error) {
	c := Change{Object: cur.obj, Summary: []string{}}
	if old.obj.Name != cur.obj.Name {
		c.PreviousName = old.obj.Name
	}
	sum, err := summarize(ctx, old, cur)
	if err != nil {
		return Change{}, err
	}
	if err := ctx.Err(); err != nil {
		return Change{}, err
	}
	c.Summary = append(c.Summary, sum...)
	// The names are the bundle's: a line break in one would split the
	// header line (see echo.Text).
	text, minimal, err := unifiedDiff(old.text, cur.text, "from/"+echo.Text(old.obj.String()), "to/"+echo.Text(cur.obj.String()), cells)
	if err != nil {
		return Change{}, err
	}
	if !minimal {
		c.Summary = append(c.Summary, "raw diff: one hunk replaces every line from the first change to the last (too many lines differ to search for the smallest diff)")
	}
	c.Diff = text
	return c, nil
}

// sortFindings orders a report's findings as safety.Check does (a report
// may be built by hand), leaving the report's own slice as it is.
func sortFindings(fs []safety.Finding) []safety.Finding {
	out := slices.Clone(fs)
	slices.SortStableFunc(out, safety.Compare)
	return out
}
