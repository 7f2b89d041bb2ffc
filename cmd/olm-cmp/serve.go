package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/cmpserver"
	"github.com/olm-cmp/olm-cmp/internal/engine"
	"github.com/olm-cmp/olm-cmp/internal/httpapi"
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

func newServeCmd() *cobra.Command {
	var (
		lf              registryFlags
		configPath      string
		socketDir       string
		httpAddr        string
		workDir         string
		logFormat       string
		logLevel        string
		cacheEntries    int
		cacheBytes      int64
		maxTarball      int64
		maxExtract      int64
		shutdownTimeout time.Duration
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

An HTTP listener (loopback by default) serves /healthz, /readyz, /metrics and
POST /v1/render (YAML). See docs/plugin.md.`,
		Args: cobra.NoArgs,
		// Usage on stdout would corrupt the manifest stream Argo CD reads;
		// main prints the error to stderr.
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newPluginLogger(cmd.ErrOrStderr(), logFormat, logLevel)
			if err != nil {
				return err
			}
			cfg, err := cmpserver.LoadPluginConfig(configPath, cmd.Flags().Changed("config"))
			if err != nil {
				return err
			}
			loader, err := pluginLoader(&lf)
			if err != nil {
				return err
			}
			metrics := engine.NewMetrics()
			loader.Observer = metrics
			// One engine for gRPC and HTTP: one cache, one render per key.
			eng := engine.NewEngine(engine.EngineOptions{
				Loader:     loader,
				MaxEntries: cacheEntries,
				MaxBytes:   cacheBytes,
				Metrics:    metrics,
			})
			srv := cmpserver.NewServer(cmpserver.ServerOptions{
				Config:    cfg,
				SocketDir: socketDir,
				WorkDir:   workDir,
				Renderer:  eng,
				Limits:    cmpserver.Limits{MaxCompressed: maxTarball, MaxExtracted: maxExtract},
				ReadyDirs: []string{lf.cacheDir},
				Logger:    log,
				Metrics:   metrics,
			})

			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()

			lis, err := srv.Listen()
			if err != nil {
				return err
			}
			errc := make(chan error, 2)
			var httpSrv *http.Server
			if httpAddr != "" {
				hl, err := net.Listen("tcp", httpAddr)
				if err != nil {
					lis.Close()
					return fmt.Errorf("--http-addr: %w", err)
				}
				httpSrv = &http.Server{
					Handler: httpapi.New(httpapi.Options{
						Renderer: eng,
						Gatherer: metrics.Registry,
						Ready:    srv.Ready,
						Observer: metrics,
						Logger:   log,
					}),
					ReadHeaderTimeout: 10 * time.Second,
				}
				log.Info("serving HTTP", "addr", hl.Addr().String())
				go func() {
					if err := httpSrv.Serve(hl); err != nil && !errors.Is(err, http.ErrServerClosed) {
						errc <- fmt.Errorf("http: %w", err)
					}
				}()
			}
			go func() {
				if err := srv.Serve(lis); err != nil {
					errc <- fmt.Errorf("grpc: %w", err)
				}
			}()

			var runErr error
			select {
			case <-ctx.Done():
				log.Info("shutting down: finishing in-flight requests", "timeout", shutdownTimeout.String())
			case runErr = <-errc:
				log.Error("server failed", "error", runErr)
			}
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
			defer cancel()
			srv.Shutdown(sctx)
			if httpSrv != nil {
				_ = httpSrv.Shutdown(sctx)
			}
			log.Info("stopped")
			return runErr
		},
	}
	lf.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&configPath, "config", cmpserver.DefaultConfigPath,
		"plugin.yaml (ConfigManagementPlugin) naming the socket; built-in name olm-cmp, version v1 when the default path is absent")
	f.StringVar(&socketDir, "socket-dir", defaultSocketDir(),
		"directory of the plugin socket (default $ARGOCD_PLUGINSOCKFILEPATH, else "+cmpserver.DefaultSocketDir+")")
	f.StringVar(&httpAddr, "http-addr", httpapi.DefaultAddr, `address of the health, metrics and debug-render HTTP listener ("" disables it)`)
	f.StringVar(&workDir, "work-dir", filepath.Join(os.TempDir(), "olm-cmp"), "directory where each request's repository is extracted (removed after the request)")
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
