package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/olm-cmp/olm-cmp/internal/diff"
	"github.com/olm-cmp/olm-cmp/internal/output"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/safety"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// Exit statuses of diff (docs/diff.md).
const (
	diffNoChanges   = 0
	diffChanges     = 1
	diffUnsafe      = 2
	diffRenderError = 3
)

// diffFlags are diff's own flags.
type diffFlags struct {
	toVersion, toBundle, gitBase string
	output, failOn               string
	exitCode                     bool
	// appsFrom are the Argo CD manifests whose Application (or
	// ApplicationSet element) naming DIR passes the plugin parameters.
	appsFrom []string
}

func newDiffCmd() *cobra.Command {
	var (
		to specFlags
		rf registryFlags
		cf clusterFlags
		df diffFlags
	)
	cmd := &cobra.Command{
		Use:   "diff FROM_DIR TO_DIR | diff DIR (--to-version V | --to-bundle REF | --git-base REV)",
		Short: "Review a version bump: safety findings, then objects added, removed (pruned) and changed",
		Long: `Diff renders two specs and compares the manifests object by object:
  diff FROM_DIR TO_DIR          two source directories, each with its olm-cmp.yaml
  diff DIR --to-version V       the same spec with another version (image tag or catalog range)
  diff DIR --to-bundle REF      the same spec with another bundle (image or directory)
  diff DIR --git-base REV       DIR as it was at Git revision REV (e.g. origin/main) -> DIR now
The spec flags (--namespace, --bundle…) change the TO side. --apps-from FILE|DIR
applies the plugin parameters of the Argo CD application naming DIR (with
--git-base, FROM's as they were at REV). The CRD upgrade-safety
and upgrade-graph findings come first, then added, removed (what Argo CD prunes)
and changed objects, each change summarised (CRD versions and fields, images,
RBAC rules) before its diff. OLM's hashed RBAC names are paired by ServiceAccount.
Exit status: 0 no changes, 1 changes, 2 safety findings at --fail-on or worse,
3 the comparison failed (a bad spec, a registry error). See docs/diff.md.`,
		Args:        cobra.MaximumNArgs(2),
		Annotations: map[string]string{annotationFailureStatus: fmt.Sprint(diffRenderError)},
		RunE: func(cmd *cobra.Command, args []string) error {
			failOn, err := df.check(args, to.anyChanged(cmd.Flags()))
			if err != nil {
				return err
			}
			r, err := rf.renderer()
			if err != nil {
				return err
			}
			from, to, cleanup, err := df.sides(cmd, args, &to).Requests(cmd.Context())
			defer cleanup()
			if err != nil {
				return err
			}
			// One cluster (the flag's, else KUBE_API_VERSIONS'): both
			// sides are rendered for it.
			if err := cf.apply(to); err != nil {
				return err
			}
			if from != nil {
				from.APIVersions = to.APIVersions
			}
			stderr := cmd.ErrOrStderr()
			report, err := diff.Renders(cmd.Context(), r, from, to, diff.RenderOptions{
				GitBase: df.gitBase,
				// TO's findings under their own severity, as render prints them.
				RenderedTO: func(res *render.Result) { output.PrintNotes(stderr, res, false, true, "") },
				Unmatched:  func(unmatched []string) { printWarnings(stderr, unmatched) },
			})
			if err != nil {
				return err
			}
			// Written whole or not at all: a deadline that passed while the
			// report was built stops it here, never while it is written.
			if err := cmd.Context().Err(); err != nil {
				return fmt.Errorf("comparing the renders: %w", err)
			}
			if err := writeReport(cmd, report, df.output); err != nil {
				return err
			}
			if code := diffStatus(report, failOn); code != diffNoChanges {
				return &exitError{code: code}
			}
			return nil
		},
	}
	to.register(cmd.Flags())
	rf.register(cmd.Flags())
	rf.registerTenancy(cmd.Flags(), true)
	cf.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&df.toVersion, "to-version", "", "TO is DIR's spec with this version: an image tag, or a catalog version range")
	f.StringVar(&df.toBundle, "to-bundle", "", "TO is DIR's spec with this bundle: an image reference or a directory (relative to the working directory)")
	f.StringVar(&df.gitBase, "git-base", "", "FROM is DIR as it was at this Git revision (a branch, tag or commit of the repository holding DIR); TO is DIR now")
	f.StringVarP(&df.output, "output", "o", "text", "text, markdown (a pull-request comment) or json (docs/diff.md)")
	f.StringVar(&df.failOn, "fail-on", "error", "the least severe safety finding that makes the exit status 2: error or warning")
	f.StringArrayVar(&df.appsFrom, "apps-from", nil, "read Applications and ApplicationSets from these files or directories of the repository (repeatable): each side renders DIR with the plugin parameters and env of the application naming DIR, --git-base's FROM side with them as they were at REV")
	f.BoolVar(&df.exitCode, "exit-code", false, "")
	_ = f.MarkDeprecated("exit-code", "diff always exits 1 when the renders differ")
	return cmd
}

// check validates the flag combination and returns --fail-on's severity.
// specChanged says whether a spec flag (which changes TO) was given.
func (df *diffFlags) check(args []string, specChanged bool) (safety.Severity, error) {
	switch df.output {
	case "text", "markdown", "json":
	default:
		return "", fmt.Errorf("--output %q: use text, markdown or json", df.output)
	}
	var failOn safety.Severity
	switch df.failOn {
	case "error":
		failOn = safety.Error
	case "warning":
		failOn = safety.Warning
	default:
		return "", fmt.Errorf("--fail-on %q: use error or warning", df.failOn)
	}
	if len(args) == 2 && (df.toVersion != "" || df.toBundle != "" || df.gitBase != "") {
		return "", fmt.Errorf("diff FROM_DIR TO_DIR compares two directories: --to-version, --to-bundle and --git-base take one DIR")
	}
	if len(args) < 2 && df.toVersion == "" && df.toBundle == "" && df.gitBase == "" && !specChanged {
		// Else DIR is compared with itself, and "no changes" would pass a
		// CI job that forgot its --git-base.
		return "", fmt.Errorf("diff DIR has nothing to compare DIR with: give the TO side with --to-version V, --to-bundle REF or a spec flag (--namespace, --bundle…), the FROM side with --git-base REV, or two directories (diff FROM_DIR TO_DIR)")
	}
	if df.gitBase != "" && (df.toVersion != "" || df.toBundle != "") {
		return "", fmt.Errorf("--git-base compares DIR at a Git revision with DIR now: edit DIR instead of adding --to-version or --to-bundle")
	}
	return failOn, nil
}

// sides are the sides args and the flags name: the spec flags (to) apply
// to TO.
func (df *diffFlags) sides(cmd *cobra.Command, args []string, to *specFlags) diff.Sides {
	fs, stderr := cmd.Flags(), cmd.ErrOrStderr()
	sd := diff.Sides{
		Dir:       ".",
		ToVersion: df.toVersion, ToBundle: df.toBundle, GitBase: df.gitBase,
		AppsFrom: df.appsFrom,
		Load: func(dir string, flags bool) (render.Request, error) {
			if flags {
				return loadRequest(cmd, dir, to)
			}
			return loadRequest(cmd, dir, nil)
		},
		Notes: stderr,
	}
	if len(args) > 0 {
		sd.Dir = args[0]
	}
	if len(args) == 2 {
		sd.ToDir = args[1]
	}
	if to.anyChanged(fs) {
		sd.Reflag = func(s *spec.Spec) error {
			notes, err := to.apply(fs, s)
			if err != nil {
				return err
			}
			printWarnings(stderr, notes)
			return nil
		}
	}
	return sd
}

func writeReport(cmd *cobra.Command, r *diff.Report, output string) error {
	w := cmd.OutOrStdout()
	switch output {
	case "json":
		return r.WriteJSON(w)
	case "markdown":
		return r.WriteMarkdown(w)
	}
	return r.WriteText(w)
}

// diffStatus is the exit status of a report: 2 when a finding not
// acknowledged (spec.acknowledge) is at least as severe as failOn, 1 for
// other changes, 0 for none.
func diffStatus(r *diff.Report, failOn safety.Severity) int {
	for _, f := range r.Safety {
		if f.Fails(failOn) {
			return diffUnsafe
		}
	}
	if r.HasChanges() {
		return diffChanges
	}
	return diffNoChanges
}
