package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/healthcheck"
)

func newHealthChecksCmd() *cobra.Command {
	var (
		rf     registryFlags
		cf     clusterFlags
		output string
	)
	cmd := &cobra.Command{
		Use:   "health-checks DIR...",
		Short: "Print Argo CD health checks (argocd-cm entries) for the custom resources of the operators DIR... install",
		Long: `Health-checks renders each DIR/olm-cmp.yaml as render would and prints, for every
CRD its bundle owns, an Argo CD health check (Lua) built from the status schema
of the CRD's storage version: the argocd-cm key
resource.customizations.health.<group>_<Kind>. The checks read status.conditions
(Ready/Available/Healthy True: Healthy; Degraded/Failed/Error/Stalled True:
Degraded; Progressing/Reconciling/Upgrading/Pending True, or a readiness
condition not True: Progressing), status.phase or status.state (Running, Ready,
Succeeded…: Healthy; Failed, Error…: Degraded; another value: Progressing) and
status.observedGeneration (Progressing while behind metadata.generation).
The rule: docs/plugin.md, "Generated health checks".

stderr lists each owned kind that gets no check and why: "cannot judge" (its
schema has none of those fields) or "skipped" (olm-cmp ships a hand-written
check, Argo CD has a built-in one, or the CSV marks the kind internal).
-o yaml (default) is an argocd-cm patch (kustomize, kubectl patch --patch-file),
-o helm the argo-cd chart's configs.cm values, -o json the ConfigMap as JSON.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := healthcheck.Render(nil, output); err != nil {
				return err
			}
			r, err := rf.renderer()
			if err != nil {
				return err
			}
			var sources []healthcheck.Source
			for _, dir := range args {
				req, err := loadRequest(cmd, dir, nil)
				if err != nil {
					return err
				}
				if err := cf.apply(&req); err != nil {
					return err
				}
				// The CRDs are what matters here: a finding that fails a
				// strict render (shown by render and inspect) does not
				// change them.
				req.Spec.Strict = false
				_, b, res, err := r.Stepwise(cmd.Context(), req)
				if err != nil {
					return err
				}
				s, err := healthcheck.NewSource(dir, b.CSV, res.Manifests)
				if err != nil {
					return err
				}
				sources = append(sources, s)
			}
			rep, err := healthcheck.Plan(sources)
			if err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			for _, o := range rep.Outcomes {
				fmt.Fprintln(stderr, echo.Text(o.Line()))
			}
			if len(rep.Checks) == 0 && len(rep.Outcomes) == 0 {
				return fmt.Errorf("no health check to print: the bundles own no CustomResourceDefinition")
			}
			if len(rep.Checks) == 0 {
				return fmt.Errorf("no health check to print: every kind the bundles own is listed above as skipped or cannot judge")
			}
			out, err := healthcheck.Render(rep.Checks, output)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	rf.register(cmd.Flags())
	cf.register(cmd.Flags())
	cmd.Flags().StringVarP(&output, "output", "o", healthcheck.FormatYAML, "yaml (an argocd-cm patch), json (the same ConfigMap) or helm (argo-cd chart values: configs.cm)")
	return cmd
}
