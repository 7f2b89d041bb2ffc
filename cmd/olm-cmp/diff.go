package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/render"
)

func newDiffCmd() *cobra.Command {
	var (
		to       specFlags
		rf       registryFlags
		exitCode bool
	)
	cmd := &cobra.Command{
		Use:   "diff [DIR] --version NEW",
		Short: "Show what changes in the rendered manifests if the spec changed (e.g. a version bump)",
		Long: `Diff renders DIR/olm-cmp.yaml as it is and again with the given flags applied,
and prints objects added (+), removed (-) and changed (~, with a unified diff),
in apply order: the review of a one-line version bump before it is committed.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			loader, err := rf.loader()
			if err != nil {
				return err
			}
			r := &render.Renderer{Loader: loader}
			// The old side is the file alone, the new side the file plus flags.
			oldReq, err := loadRequest(cmd, dir, nil)
			if err != nil {
				return err
			}
			newReq, err := loadRequest(cmd, dir, &to)
			if err != nil {
				return err
			}
			oldRes, err := r.Render(cmd.Context(), oldReq)
			if err != nil {
				return fmt.Errorf("rendering the current spec: %w", err)
			}
			newRes, err := r.Render(cmd.Context(), newReq)
			if err != nil {
				return fmt.Errorf("rendering the changed spec: %w", err)
			}
			changed, err := writeDiff(cmd.OutOrStdout(), oldRes, newRes)
			if err != nil {
				return err
			}
			if changed && exitCode {
				return errChanged
			}
			return nil
		},
	}
	to.register(cmd.Flags())
	rf.register(cmd.Flags())
	cmd.Flags().BoolVar(&exitCode, "exit-code", false, "exit with status 1 when the renders differ")
	return cmd
}

var errChanged = fmt.Errorf("the renders differ")

// writeDiff prints the object-level difference of two renders and reports
// whether there was any.
func writeDiff(w io.Writer, oldRes, newRes *render.Result) (bool, error) {
	oldObjs, oldOrder, err := byID(oldRes.Manifests)
	if err != nil {
		return false, err
	}
	newObjs, newOrder, err := byID(newRes.Manifests)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(w, "# %s %s -> %s %s\n", oldRes.CSVName, oldRes.Origin.Digest, newRes.CSVName, newRes.Origin.Digest)
	changed := false
	for _, id := range newOrder {
		old, ok := oldObjs[id]
		switch {
		case !ok:
			changed = true
			fmt.Fprintf(w, "+ %s\n", id)
		case old != newObjs[id]:
			changed = true
			fmt.Fprintf(w, "~ %s\n", id)
			text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
				A: difflib.SplitLines(old), B: difflib.SplitLines(newObjs[id]),
				FromFile: "old/" + id, ToFile: "new/" + id, Context: 3,
			})
			if err != nil {
				return false, err
			}
			fmt.Fprint(w, indent(text))
		}
	}
	for _, id := range oldOrder {
		if _, ok := newObjs[id]; !ok {
			changed = true
			fmt.Fprintf(w, "- %s\n", id)
		}
	}
	if !changed {
		fmt.Fprintln(w, "# no changes")
	}
	return changed, nil
}

// byID indexes manifests by kind/namespace/name, with the bundle annotations
// removed so a version bump shows only real changes.
func byID(manifests []string) (map[string]string, []string, error) {
	objs := make(map[string]string, len(manifests))
	order := make([]string, 0, len(manifests))
	for _, m := range manifests {
		n, err := yaml.Parse(m)
		if err != nil {
			return nil, nil, err
		}
		for _, k := range []string{render.AnnotationBundle, render.AnnotationPackage, render.AnnotationSource, render.AnnotationDigest} {
			if err := n.PipeE(yaml.ClearAnnotation(k)); err != nil {
				return nil, nil, err
			}
		}
		text, err := n.String()
		if err != nil {
			return nil, nil, err
		}
		id := n.GetKind() + " " + strings.TrimPrefix(n.GetNamespace()+"/"+n.GetName(), "/")
		objs[id] = text
		order = append(order, id)
	}
	return objs, order, nil
}

func indent(s string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString("    " + l)
		}
	}
	return b.String()
}
