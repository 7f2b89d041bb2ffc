package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/olm-cmp/olm-cmp/internal/cmpserver/pluginpb"
)

// TestServeLifecycle runs `olm-cmp serve` in-process: it listens on the
// socket plugin.yaml names, answers over gRPC and HTTP, and on shutdown (the
// command's context ending, as on SIGTERM) removes its socket.
func TestServeLifecycle(t *testing.T) {
	sockDir, err := os.MkdirTemp("", "olmcmp")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	cmd := newServeCmd()
	var logs bytes.Buffer
	cmd.SetErr(&logs)
	cmd.SetArgs([]string{"--config", "../../plugin.yaml", "--socket-dir", sockDir, "--http-addr", addr,
		"--work-dir", t.TempDir(), "--cache-dir", t.TempDir()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()

	sock := filepath.Join(sockDir, "olm-cmp-v1.sock")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if resp, err := http.Get("http://" + addr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("never ready; logs:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pluginpb.NewConfigManagementPluginServiceClient(conn).CheckPluginConfiguration(ctx, &emptypb.Empty{})
	conn.Close()
	if err != nil || !cfg.IsDiscoveryConfigured {
		t.Fatalf("CheckPluginConfiguration: %v %v", cfg, err)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `olm_cmp_requests_total{outcome="OK",rpc="CheckPluginConfiguration"} 1`) {
		t.Errorf("metrics:\n%s", body)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
	// JSON logs with the socket path, and nothing secret to log here.
	first, _, _ := strings.Cut(logs.String(), "\n")
	var line map[string]any
	if err := json.Unmarshal([]byte(first), &line); err != nil {
		t.Errorf("logs are not JSON lines: %q", first)
	}
	if !strings.Contains(logs.String(), sock) {
		t.Errorf("logs do not name the socket:\n%s", logs.String())
	}
}

// TestGenerateCommand runs `olm-cmp generate` as Argo CD's own cmp-server
// does: app directory, plugin env and parameters from the environment.
func TestGenerateCommand(t *testing.T) {
	app := "../../internal/cmpserver/testdata/repo/apps/tiny"
	t.Setenv("ARGOCD_APP_NAME", "tiny")
	t.Setenv("ARGOCD_ENV_NAMESPACE", "from-env")
	t.Setenv("ARGOCD_APP_PARAMETERS", `[{"name":"namespace","string":"from-param"}]`)
	run := func(args ...string) (string, string, error) {
		cmd := newGenerateCmd()
		var out, errOut bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		cmd.SetArgs(append(args, "--cache-dir", t.TempDir()))
		err := cmd.Execute()
		return out.String(), errOut.String(), err
	}
	out, _, err := run(app)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "name: from-param") || !strings.Contains(out, "kind: Deployment") {
		t.Errorf("output:\n%s", out)
	}
	out, _, err = run(app, "--announce")
	if err != nil || !strings.Contains(out, `"name":"namespace"`) || !strings.Contains(out, `"string":"from-env"`) {
		t.Errorf("announce: %v\n%s", err, out)
	}
	t.Setenv("ARGOCD_APP_PARAMETERS", `[{"name":"certificateProvider","string":"bogus"}]`)
	out, _, err = run(app)
	if err == nil || out != "" || !strings.Contains(err.Error(), "certificateProvider") {
		t.Errorf("error case: err=%v stdout=%q", err, out)
	}
}
