package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/cmpserver"
	"github.com/olm-cmp/olm-cmp/internal/engine"
	"github.com/olm-cmp/olm-cmp/internal/httpapi"
	"github.com/olm-cmp/olm-cmp/internal/serve"
)

// pluginLoader is the CLI's bundle loader (registryFlags.loader: --cache-dir,
// --registry-config, --insecure-registry or their OLM_CMP_* variables) with
// the cache directory created up front, so a bad cache directory fails at
// start, not on the first request.
func pluginLoader(f *registryFlags) (*bundle.ImageLoader, error) {
	f.resolve()
	if f.cacheDir != "" {
		if err := os.MkdirAll(f.cacheDir, 0o755); err != nil {
			return nil, fmt.Errorf("%s: %w", f.cacheDirFrom, err)
		}
	}
	return f.loader()
}

func defaultSocketDir() string {
	if d := os.Getenv("ARGOCD_PLUGINSOCKFILEPATH"); d != "" {
		return d
	}
	return cmpserver.DefaultSocketDir
}

// newPluginLogger builds the process logger: JSON lines by default, for the
// log pipelines sidecar logs go to.
func newPluginLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: use json or text", format)
}

// serveListenError words a plugin listener error in terms of the flag that
// set what failed.
func serveListenError(cmd *cobra.Command, err error, socketDir string) error {
	if errors.Is(err, cmpserver.ErrNoSocketDir) {
		from := "--socket-dir " + socketDir
		if !cmd.Flags().Changed("socket-dir") && os.Getenv("ARGOCD_PLUGINSOCKFILEPATH") != "" {
			from = "$ARGOCD_PLUGINSOCKFILEPATH " + socketDir
		}
		return fmt.Errorf("%s does not exist: mount the repo-server's plugins volume there (the repo-server finds plugin sockets only in it), or pass --create-socket-dir to create it", from)
	}
	if wde := (*cmpserver.WorkDirError)(nil); errors.As(err, &wde) {
		return fmt.Errorf("--work-dir %s (default $TMPDIR): %v: give an existing directory this user can write to", wde.Dir, wde.Err)
	}
	return err
}

func newServeCmd() *cobra.Command {
	var (
		lf                registryFlags
		configPath        string
		socketDir         string
		createSocketDir   bool
		httpAddr          string
		renderAddr        string
		renderAllowRemote bool
		renderTimeout     time.Duration
		renderMaxBody     int64
		requestTimeout    time.Duration
		workDir           string
		logFormat         string
		logLevel          string
		cacheEntries      int
		cacheBytes        int64
		maxTarball        int64
		maxExtract        int64
		shutdownTimeout   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the Argo CD config-management plugin protocol on a unix socket",
		Long: `serve runs olm-cmp as an Argo CD config-management plugin sidecar of
argocd-repo-server. It listens on <socket-dir>/<name>-<version>.sock (name and
version from plugin.yaml), renders applications whose directory holds
olm-cmp.yaml, and keeps rendered output and pulled bundles cached between
requests. The spec is olm-cmp.yaml, overridden by the Application's plugin env
(ARGOCD_ENV_<field>) and then its plugin parameters (named after spec fields).
Manifests go to the repo-server as compact JSON. Discovery (MatchRepository)
is offered when plugin.yaml has a spec.discover section, as with Argo CD's
own cmp-server; without one, only Applications that name the plugin use it.

An HTTP listener (--http-addr, loopback by default; the sidecar manifests
pass :8080 for the kubelet's probes) serves /healthz, /readyz and /metrics.
POST /v1/render (YAML, image bundles and catalogs only) is off unless
--render-addr names a loopback address for it. Limits and timeouts:
docs/operations.md; the plugin: docs/plugin.md.`,
		Args: cobra.NoArgs,
		// Usage on stdout would corrupt the manifest stream Argo CD reads;
		// main prints the error to stderr.
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if requestTimeout <= 0 {
				return fmt.Errorf("--request-timeout %s: give a positive duration, e.g. 5m", requestTimeout)
			}
			if renderTimeout <= 0 {
				return fmt.Errorf("--render-timeout %s: give a positive duration, e.g. 60s", renderTimeout)
			}
			log, err := newPluginLogger(cmd.ErrOrStderr(), logFormat, logLevel)
			if err != nil {
				return err
			}
			cfg, err := cmpserver.LoadPluginConfig(configPath, cmd.Flags().Changed("config"))
			if err != nil {
				return err
			}
			lf.note = func(msg string) { log.Info(msg) }
			loader, err := pluginLoader(&lf)
			if err != nil {
				return err
			}
			policy, err := lf.policySource(loader)
			if err != nil {
				return err
			}
			metrics := engine.NewMetrics()
			loader.Observer = metrics
			tenants, err := lf.tenantRenderers(loader, policy.Getter())
			if err != nil {
				return err
			}
			if tenants != nil && renderAddr != "" {
				return fmt.Errorf("--render-addr with a tenancy policy: POST /v1/render names no Argo CD project and would render with the sidecar's credentials past the policy; leave --render-addr out, and use olm-cmp render --project NAME --tenancy-policy FILE to see what a project renders (docs/tenancy.md)")
			}
			// One engine for gRPC and HTTP: one cache, one render per key.
			eng := engine.NewEngine(engine.EngineOptions{
				Loader:     loader,
				Verifier:   policy.Getter(),
				Tenancy:    engine.TenantsOf(tenants),
				MaxEntries: cacheEntries,
				MaxBytes:   cacheBytes,
				Metrics:    metrics,
			})
			srv := cmpserver.NewServer(cmpserver.ServerOptions{
				Config:          cfg,
				SocketDir:       socketDir,
				CreateSocketDir: createSocketDir,
				WorkDir:         workDir,
				RequestTimeout:  requestTimeout,
				Renderer:        eng,
				Limits:          cmpserver.Limits{MaxCompressed: maxTarball, MaxExtracted: maxExtract},
				ReadyDirs:       []string{lf.cacheDir},
				Logger:          log,
				Metrics:         metrics,
			})

			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()

			lis, err := srv.Listen()
			if err != nil {
				return serveListenError(cmd, err, socketDir)
			}
			return serve.Run(ctx, serve.Options{
				Server:            srv,
				Listener:          lis,
				HTTPAddr:          httpAddr,
				RenderAddr:        renderAddr,
				RenderAllowRemote: renderAllowRemote,
				HTTP: httpapi.Options{
					Renderer: eng,
					Gatherer: metrics.Registry,
					Ready:    srv.Ready,
					Observer: metrics,
					Logger:   log,
					MaxBody:  renderMaxBody,
					Timeout:  renderTimeout,
				},
				ShutdownTimeout: shutdownTimeout,
				Logger:          log,
			})
		},
	}
	lf.register(cmd.Flags())
	lf.registerTenancy(cmd.Flags(), false)
	f := cmd.Flags()
	f.StringVar(&configPath, "config", cmpserver.DefaultConfigPath,
		"plugin.yaml (ConfigManagementPlugin) naming the socket; built-in name olm-cmp, version v1 when the default path is absent")
	f.StringVar(&socketDir, "socket-dir", defaultSocketDir(),
		"directory of the plugin socket, which must exist (default $ARGOCD_PLUGINSOCKFILEPATH, else "+cmpserver.DefaultSocketDir+")")
	f.BoolVar(&createSocketDir, "create-socket-dir", false, "create --socket-dir (and its parents) when it does not exist")
	f.StringVar(&httpAddr, "http-addr", httpapi.DefaultAddr,
		`address of the /healthz, /readyz and /metrics listener ("" disables it); the sidecar passes :8080 for the kubelet's probes`)
	f.StringVar(&renderAddr, "render-addr", "",
		`address of the POST /v1/render debugging listener, e.g. 127.0.0.1:8081 (default "": off); loopback only unless --render-addr-allow-remote`)
	f.BoolVar(&renderAllowRemote, "render-addr-allow-remote", false,
		"let --render-addr bind a non-loopback address: anyone who reaches it renders with this server's registry credentials")
	f.DurationVar(&renderTimeout, "render-timeout", httpapi.DefaultTimeout, "longest a POST /v1/render request may take")
	f.Int64Var(&renderMaxBody, "render-max-body-bytes", httpapi.DefaultMaxBody, "largest POST /v1/render request body")
	f.DurationVar(&requestTimeout, "request-timeout", cmpserver.DefaultRequestTimeout,
		"longest a plugin request may take when the repo-server sets no deadline (Argo CD sets one: its repo-server timeout)")
	f.StringVar(&workDir, "work-dir", "",
		"existing directory under which the server makes its private work directory, with a fresh one per request, removed when it ends (default $TMPDIR, else /tmp)")
	f.StringVar(&logFormat, "log-format", "json", "log format: json or text")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.IntVar(&cacheEntries, "cache-entries", 256, "rendered-output cache size in entries (negative disables the cache)")
	f.Int64Var(&cacheBytes, "cache-max-bytes", 256<<20, "rendered-output cache size in bytes of manifests")
	f.Int64Var(&maxTarball, "max-tarball-bytes", 512<<20, "largest repository tarball accepted from the repo-server")
	f.Int64Var(&maxExtract, "max-extract-bytes", 1<<30, "largest total size of a repository's extracted files")
	f.DurationVar(&shutdownTimeout, "shutdown-timeout", 25*time.Second,
		"on SIGTERM, how long in-flight requests may finish before they are cancelled (keep below the pod's terminationGracePeriodSeconds)")
	return cmd
}
