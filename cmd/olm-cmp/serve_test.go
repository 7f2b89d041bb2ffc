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
	// POST /v1/render is off unless --render-addr asks for it; it is never on
	// the probe and metrics listener.
	if resp, err := http.Post("http://"+addr+"/v1/render", "application/yaml", strings.NewReader("bundle: quay.io/x/y:1\nnamespace: x\n")); err != nil || resp.StatusCode != 404 {
		t.Errorf("POST /v1/render on --http-addr: %v %v", resp, err)
	} else {
		resp.Body.Close()
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

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// runServe runs `olm-cmp serve args...` until ready (its --http-addr answers
// /readyz); the returned stop ends it and returns its error.
func runServe(t *testing.T, httpAddr string, args ...string) (stop func() error, logs *bytes.Buffer) {
	t.Helper()
	cmd := newServeCmd()
	logs = &bytes.Buffer{}
	cmd.SetErr(logs)
	cmd.SetArgs(append([]string{"--config", "../../plugin.yaml", "--http-addr", httpAddr, "--cache-dir", t.TempDir()}, args...))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	stop = func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("serve did not stop")
			return nil
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-done:
			cancel()
			t.Fatalf("serve stopped: %v; logs:\n%s", err, logs.String())
		default:
		}
		if resp, err := http.Get("http://" + httpAddr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return stop, logs
			}
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("never ready; logs:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeRenderListener: with --render-addr, POST /v1/render answers on
// its own loopback listener, and refuses a spec naming a path on the server.
// The server starts although a file holds the name of the old fixed work
// directory ($TMPDIR/olm-cmp), and creates a missing socket directory when
// --create-socket-dir asks for it.
func TestServeRenderListener(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	if err := os.WriteFile(filepath.Join(tmp, "olm-cmp"), []byte("in the way"), 0o600); err != nil {
		t.Fatal(err)
	}
	base, err := os.MkdirTemp("", "olmcmp")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	sockDir := filepath.Join(base, "new", "plugins")
	httpAddr, renderAddr := freeAddr(t), freeAddr(t)
	stop, logs := runServe(t, httpAddr, "--socket-dir", sockDir, "--create-socket-dir", "--render-addr", renderAddr)
	for body, want := range map[string]string{
		"catalog: /etc\npackage: test\nnamespace: x\n": `spec.catalog \"/etc\": POST /v1/render reads catalog images only`,
		"catalog: /\npackage: test\nnamespace: x\n":    `spec.catalog \"/\": POST /v1/render reads catalog images only`,
		"bundle: ./x\nnamespace: x\n":                  `spec.bundle \"./x\": POST /v1/render renders image bundles only`,
	} {
		resp, err := http.Post("http://"+renderAddr+"/v1/render", "application/yaml", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b), want) {
			t.Errorf("%q: %d %s, want 400 with %s", body, resp.StatusCode, b, want)
		}
	}
	if resp, err := http.Get("http://" + renderAddr + "/metrics"); err != nil || resp.StatusCode != 404 {
		t.Errorf("/metrics on --render-addr: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	work, _ := filepath.Glob(filepath.Join(tmp, "olm-cmp-*"))
	if len(work) != 1 {
		t.Errorf("work directories in $TMPDIR: %v, want one olm-cmp-* directory", work)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve: %v\n%s", err, logs.String())
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "olm-cmp-*")); len(left) != 0 {
		t.Errorf("work directory left after shutdown: %v", left)
	}
	if b, err := os.ReadFile(filepath.Join(tmp, "olm-cmp")); err != nil || string(b) != "in the way" {
		t.Errorf("the file at the old work directory path was touched: %q %v", b, err)
	}
}

// TestServeRefusesBadSetup: each misconfiguration stops serve at start with
// one line naming the flag, and creates nothing.
func TestServeRefusesBadSetup(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexistent", "x", "y")
	sockDir, err := os.MkdirTemp("", "olmcmp")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	tenancyPolicy := filepath.Join(t.TempDir(), "tenancy.yaml")
	os.WriteFile(tenancyPolicy, []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: TenancyPolicy\nunlistedProjects: deny\nprojects:\n- name: a\n  images: [quay.io/a]\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--socket-dir", sockDir, "--render-addr", "127.0.0.1:0", "--tenancy-policy", tenancyPolicy}, "--render-addr with a tenancy policy: POST /v1/render names no Argo CD project and would render with the sidecar's credentials past the policy; leave --render-addr out, and use olm-cmp render --project NAME --tenancy-policy FILE to see what a project renders (docs/tenancy.md)"},
		{[]string{"--socket-dir", sockDir, "--tenancy-policy", filepath.Join(sockDir, "missing.yaml")}, "tenancy policy missing.yaml: file does not exist"},
		{[]string{"--socket-dir", missing}, "--socket-dir " + missing + " does not exist: mount the repo-server's plugins volume there (the repo-server finds plugin sockets only in it), or pass --create-socket-dir to create it"},
		{[]string{"--socket-dir", sockDir, "--work-dir", missing}, "--work-dir " + missing + " (default $TMPDIR): does not exist: give an existing directory this user can write to"},
		{[]string{"--socket-dir", sockDir, "--render-addr", "0.0.0.0:0"}, `--render-addr 0.0.0.0:0 is not a loopback address: POST /v1/render renders with this server's registry credentials; bind it to 127.0.0.1, or pass --render-addr-allow-remote to expose it`},
		{[]string{"--socket-dir", sockDir, "--render-addr", ":0"}, `--render-addr :0 is not a loopback address`},
		{[]string{"--socket-dir", sockDir, "--request-timeout", "0s"}, "--request-timeout 0s: give a positive duration, e.g. 5m"},
		{[]string{"--socket-dir", sockDir, "--render-timeout", "-1s"}, "--render-timeout -1s: give a positive duration, e.g. 60s"},
	} {
		cmd := newServeCmd()
		var logs bytes.Buffer
		cmd.SetErr(&logs)
		cmd.SetArgs(append([]string{"--config", "../../plugin.yaml", "--http-addr", "", "--cache-dir", t.TempDir()}, c.args...))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- cmd.ExecuteContext(ctx) }()
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			cancel()
			<-done
			t.Errorf("%v: serve started", c.args)
		}
		cancel()
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line starting %q", c.args, err, c.want)
		}
		if _, err := os.Stat(filepath.Dir(filepath.Dir(missing))); !os.IsNotExist(err) {
			t.Errorf("%v: created %s", c.args, filepath.Dir(filepath.Dir(missing)))
		}
		if left, _ := os.ReadDir(sockDir); len(left) != 0 {
			t.Errorf("%v: left %v in the socket directory", c.args, left)
		}
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
