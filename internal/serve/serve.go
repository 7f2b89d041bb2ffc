// Package serve runs olm-cmp as the Argo CD plugin sidecar (`olm-cmp
// serve`): the config-management plugin's gRPC server on its socket and the
// HTTP listeners beside it (probes and metrics; POST /v1/render when asked
// for), until the context ends or a server fails; then in-flight requests
// get the shutdown timeout. The servers are built by their packages
// (cmpserver, httpapi) over one engine; this package only runs them.
package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/cmpserver"
	"github.com/olm-cmp/olm-cmp/internal/httpapi"
)

// Options are what Run runs.
type Options struct {
	// Server is the plugin's gRPC server, listening on Listener (its
	// Listen's).
	Server   *cmpserver.Server
	Listener net.Listener
	// HTTPAddr is the probes and metrics listener's address (--http-addr;
	// "": none); RenderAddr POST /v1/render's (--render-addr; "": off),
	// loopback only unless RenderAllowRemote.
	HTTPAddr, RenderAddr string
	RenderAllowRemote    bool
	// HTTP configures both HTTP handlers (its Timeout bounds a render).
	HTTP httpapi.Options
	// ShutdownTimeout is how long in-flight requests may finish once the
	// context ends.
	ShutdownTimeout time.Duration
	Logger          *slog.Logger
}

// httpListener is one HTTP listener, with its server.
type httpListener struct {
	name string
	lis  net.Listener
	srv  *http.Server
}

// Run opens the HTTP listeners and serves until ctx ends (nil) or a server
// fails (its error). A listener that cannot be opened closes everything
// and is the error, naming its flag.
func Run(ctx context.Context, o Options) error {
	log, srv, lis := o.Logger, o.Server, o.Listener
	var listeners []httpListener
	closeAll := func() {
		lis.Close()
		for _, l := range listeners {
			l.lis.Close()
		}
		srv.Shutdown(context.Background())
	}
	if o.HTTPAddr != "" {
		hl, err := net.Listen("tcp", o.HTTPAddr)
		if err != nil {
			closeAll()
			return fmt.Errorf("--http-addr %s: %w", o.HTTPAddr, err)
		}
		listeners = append(listeners, httpListener{"probes and metrics", hl,
			httpapi.NewServer(httpapi.OpsHandler(o.HTTP), httpapi.OpsWriteTimeout)})
	}
	if o.RenderAddr != "" {
		rl, err := httpapi.ListenLoopback(o.RenderAddr, o.RenderAllowRemote)
		if errors.Is(err, httpapi.ErrNotLoopback) {
			closeAll()
			return fmt.Errorf("--render-addr %s is not a loopback address: POST /v1/render renders with this server's registry credentials; bind it to 127.0.0.1, or pass --render-addr-allow-remote to expose it", o.RenderAddr)
		}
		if err != nil {
			closeAll()
			return fmt.Errorf("--render-addr %s: %w", o.RenderAddr, err)
		}
		listeners = append(listeners, httpListener{"render", rl,
			httpapi.NewServer(httpapi.RenderHandler(o.HTTP), o.HTTP.Timeout+httpapi.OpsWriteTimeout)})
	}
	errc := make(chan error, 1+len(listeners))
	for _, l := range listeners {
		log.Info("serving HTTP", "listener", l.name, "addr", l.lis.Addr().String())
		go func() {
			if err := l.srv.Serve(l.lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("http (%s): %w", l.name, err)
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
		log.Info("shutting down: finishing in-flight requests", "timeout", o.ShutdownTimeout.String())
	case runErr = <-errc:
		log.Error("server failed", "error", runErr)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.ShutdownTimeout)
	defer cancel()
	srv.Shutdown(sctx)
	for _, l := range listeners {
		_ = l.srv.Shutdown(sctx)
	}
	log.Info("stopped")
	return runErr
}
