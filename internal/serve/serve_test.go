package serve

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/cmpserver"
	"github.com/olm-cmp/olm-cmp/internal/httpapi"
)

// server is a plugin server on a fresh socket directory, listening.
func server(t *testing.T) (*cmpserver.Server, net.Listener, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "serve") // a socket path must stay short
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	srv := cmpserver.NewServer(cmpserver.ServerOptions{SocketDir: dir, WorkDir: t.TempDir(), RequestTimeout: time.Minute})
	lis, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	return srv, lis, filepath.Join(dir, cmpserver.DefaultPluginConfig().SocketName())
}

// TestRunServesUntilCancelled: the probes listener answers while Run
// runs; cancelling the context stops every server, the socket goes, and
// Run returns nil.
func TestRunServesUntilCancelled(t *testing.T) {
	srv, lis, sock := server(t)
	// A free port, closed for Run to open: the logs are read only once
	// Run has returned.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var logs bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Server: srv, Listener: lis, HTTPAddr: addr,
			HTTP: httpapi.Options{Ready: srv.Ready}, ShutdownTimeout: 5 * time.Second,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	}()
	var resp *http.Response
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if resp, err = http.Get("http://" + addr + "/healthz"); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		cancel()
		<-done
		t.Fatalf("/healthz never answered: %v\n%s", err, logs.String())
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz: %s", resp.Status)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after cancel: %v", err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket %s still there after shutdown: %v", sock, err)
	}
	if !strings.Contains(logs.String(), "stopped") {
		t.Errorf("logs:\n%s", logs.String())
	}
}

// TestRunRefusesRemoteRender: a POST /v1/render listener on an address
// that is not loopback is refused unless allowed, naming the flag, and
// what Run was handed is closed.
func TestRunRefusesRemoteRender(t *testing.T) {
	srv, lis, _ := server(t)
	err := Run(context.Background(), Options{Server: srv, Listener: lis, RenderAddr: "0.0.0.0:0",
		Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))})
	if err == nil || !strings.HasPrefix(err.Error(), "--render-addr 0.0.0.0:0 is not a loopback address") {
		t.Errorf("Run: %v", err)
	}
	if _, err := lis.Accept(); err == nil {
		t.Error("the plugin listener is still open")
	}
}
