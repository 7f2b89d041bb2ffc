// Command demoregistry serves the demo operator's bundle versions and its
// catalog from an in-process OCI registry on localhost (internal/
// demoregistry), so that olm-cmp's registry commands can be tried offline.
// Run it from the repository root; it serves until interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/olm-cmp/olm-cmp/internal/demoregistry"
)

func main() {
	addr := flag.String("addr", "localhost:5000", "address to serve the registry on (plain HTTP)")
	root := flag.String("root", ".", "the olm-cmp repository (its examples/demo and examples/demo-catalog)")
	flag.Parse()
	if err := run(*addr, *root); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(addr, root string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%w (another registry on that port? choose one with -addr)", err)
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(devNull{}, "", 0))), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	pushed, err := demoregistry.Populate(addr, root)
	if err != nil {
		srv.Close()
		return err
	}
	fmt.Printf("demo registry on %s (plain HTTP, until Ctrl-C), holding:\n  %s\n", addr, strings.Join(pushed, "\n  "))
	fmt.Printf("olm-cmp talks plain HTTP to it once told: export OLM_CMP_INSECURE_REGISTRIES=%s\n", addr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	if err := srv.Shutdown(context.Background()); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// devNull drops the registry's request log.
type devNull struct{}

func (devNull) Write(p []byte) (int, error) { return len(p), nil }
