package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/olm-cmp/olm-cmp/internal/cmpserver"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/verify"
)

func newGenerateCmd() *cobra.Command {
	var (
		lf       registryFlags
		announce bool
		strict   bool
	)
	cmd := &cobra.Command{
		Use:   "generate [DIR | DIR/olm-cmp.yaml]",
		Short: "Render as the generate command of Argo CD's own cmp-server (classic plugin mode)",
		Long: `generate is the plugin command for Argo CD's stock argocd-cmp-server sidecar
(plugin.yaml spec.generate). It renders DIR (default: the current directory,
which the cmp-server sets to the application path) from olm-cmp.yaml, the
plugin env (ARGOCD_ENV_<field>) and the plugin parameters
(ARGOCD_APP_PARAMETERS, else PARAM_*), with the same precedence as
'olm-cmp serve': parameters > plugin env > olm-cmp.yaml. KUBE_API_VERSIONS
drops objects the cluster cannot serve, with a warning (an error when a kept
object needs one).

The YAML stream goes to stdout only when the render succeeded; warnings and
errors go to stderr, and an error exits non-zero with nothing on stdout.

With --announce it prints the parameter announcements as JSON instead
(plugin.yaml spec.parameters.dynamic).

The registry flags have environment equivalents, so a plain-HTTP or
self-signed registry, credentials or a cache directory can be set on the
sidecar container without editing plugin.yaml's args: OLM_CMP_INSECURE_REGISTRIES
(comma-separated), OLM_CMP_REGISTRY_CONFIG, OLM_CMP_CACHE_DIR, and the trust
policy images are verified against, OLM_CMP_TRUST_POLICY, and the tenancy
policy, OLM_CMP_TENANCY_POLICY (the project is the repo-server's
ARGOCD_APP_PROJECT_NAME, never the plugin env). A flag wins over its variable.`,
		Args: cobra.MaximumNArgs(1),
		// Usage on stdout would corrupt the manifest stream Argo CD reads;
		// main prints the error to stderr.
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := render.SourceDirArg(firstArg(args))
			if err != nil {
				return err
			}
			if announce {
				return cmpserver.AnnounceJSON(dir, os.Environ(), cmd.OutOrStdout())
			}
			loader, err := pluginLoader(&lf)
			if err != nil && !lf.explicitCacheDir() {
				// The stock sidecar may have a read-only home: a default
				// cache that cannot be created is skipped, not fatal.
				lf.cacheDir = ""
				loader, err = pluginLoader(&lf)
			}
			if err != nil {
				return err
			}
			verifier, err := lf.verifier(loader)
			if err != nil {
				return err
			}
			var trust func() (*verify.Verifier, error)
			if verifier != nil {
				trust = func() (*verify.Verifier, error) { return verifier, nil }
			}
			tenants, err := lf.tenantRenderers(loader, trust)
			if err != nil {
				return err
			}
			// The project is the repo-server's ARGOCD_APP_PROJECT_NAME
			// (cmpserver.ParseEnv): never a flag, never the plugin env.
			pick := cmpserver.Fixed(&render.Renderer{Loader: loader, Verifier: verifier})
			if tenants != nil {
				pick = func(project string) (*render.Renderer, error) {
					r, _, err := tenants.For(project)
					return r, err
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			// As started: os.Environ drops a second ARGOCD_APP_PROJECT_NAME,
			// which ParseEnv refuses.
			env := cmpserver.Environ()
			if strict {
				// The plugin env form of spec.strict: a parameter still wins.
				env = append(env, "ARGOCD_ENV_strict=true")
			}
			// Generate writes stdout only once the render has succeeded.
			return cmpserver.Generate(ctx, pick, dir, env, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	lf.register(cmd.Flags())
	lf.registerTenancy(cmd.Flags(), false)
	cmd.Flags().BoolVar(&announce, "announce", false, "print the parameter announcements (JSON) instead of rendering")
	cmd.Flags().BoolVar(&strict, "strict", false, "fail on every requirements finding not accepted and every spec entry that matches nothing (as the plugin env strict=true; a strict parameter wins)")
	return cmd
}
