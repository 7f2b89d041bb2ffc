// Shared by test/argocd (Argo CD v2) and test/argocd-v3 (symlinked there).
// Nothing in this file imports Argo CD: everything version-specific lives in
// argocd_adapter_test.go of each module.

package cmptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"sigs.k8s.io/yaml"
)

// Set once by TestMain.
var (
	repoRoot  string // the main module (github.com/olm-cmp/olm-cmp)
	binDir    string // holds the freshly built olm-cmp
	olmCmpBin string // binDir/olm-cmp
	buildErr  error  // why olm-cmp could not be built
	pluginCfg pluginYAML
	cfgErr    error
)

// pluginYAML is the part of <repo>/plugin.yaml the tests need.
type pluginYAML struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version  string `json:"version"`
		Generate struct {
			Command []string `json:"command"`
			Args    []string `json:"args"`
		} `json:"generate"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"spec"`
}

// socketName is the file name Argo CD dials for a named plugin: <name>-<version>.sock.
func (p pluginYAML) socketName() string { return p.pluginName() + ".sock" }

// pluginName is what an Application puts in spec.source.plugin.name.
func (p pluginYAML) pluginName() string {
	if p.Spec.Version == "" {
		return p.Metadata.Name
	}
	return p.Metadata.Name + "-" + p.Spec.Version
}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	// Argo CD logs through logrus; its info lines would drown the test output.
	logrus.SetLevel(logrus.WarnLevel)

	var err error
	repoRoot, err = findRepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "olm-cmp-argocd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)

	binDir = filepath.Join(tmp, "bin")
	olmCmpBin = filepath.Join(binDir, "olm-cmp")
	buildErr = buildOlmCmp(olmCmpBin)

	if data, err := os.ReadFile(filepath.Join(repoRoot, "plugin.yaml")); err != nil {
		cfgErr = fmt.Errorf("reading the plugin config: %w", err)
	} else if err := yaml.Unmarshal(data, &pluginCfg); err != nil {
		cfgErr = fmt.Errorf("parsing %s/plugin.yaml: %w", repoRoot, err)
	} else if pluginCfg.Metadata.Name == "" {
		cfgErr = fmt.Errorf("%s/plugin.yaml has no metadata.name", repoRoot)
	}

	// The classic cmpserver runs plugin.yaml's generate command (olm-cmp
	// generate) with its own environment: put the fresh binary first on PATH.
	os.Setenv("PATH", binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	// Argo CD's cmpserver wipes and uses $ARGOCD_CMP_WORKDIR/_cmp_server.
	os.Setenv("ARGOCD_CMP_WORKDIR", filepath.Join(tmp, "cmp-workdir"))
	if err := os.MkdirAll(filepath.Join(tmp, "cmp-workdir"), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// findRepoRoot walks up from the test's directory to the main module.
func findRepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(data), []byte("module github.com/olm-cmp/olm-cmp\n")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod of module github.com/olm-cmp/olm-cmp above %s", dir)
		}
	}
}

// buildOlmCmp builds ./cmd/olm-cmp of the main module with the main module's
// own go.mod (this module's dependency versions never meet it).
func buildOlmCmp(out string) error {
	cmd := exec.Command("go", "build", "-o", out, "./cmd/olm-cmp")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/olm-cmp in %s: %v\n%s", repoRoot, err, stderr.String())
	}
	// olm-cmp-check beside it: olm-cmp runs it for the API server's checks.
	check := exec.Command("go", "build", "-o", filepath.Join(filepath.Dir(out), "olm-cmp-check"), "./cmd/olm-cmp-check")
	check.Dir, check.Env, check.Stderr = repoRoot, cmd.Env, &stderr
	if err := check.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/olm-cmp-check in %s: %v\n%s", repoRoot, err, stderr.String())
	}
	fmt.Fprintf(os.Stderr, "built olm-cmp in %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// requireBinary fails the test when olm-cmp or plugin.yaml is unusable.
func requireBinary(t testing.TB) {
	t.Helper()
	if buildErr != nil {
		t.Fatalf("olm-cmp must build for these tests: %v", buildErr)
	}
	if cfgErr != nil {
		t.Fatalf("plugin.yaml: %v", cfgErr)
	}
}

// ---------------------------------------------------------------------------
// olm-cmp serve

// nativeServer is a running `olm-cmp serve`.
type nativeServer struct {
	socketDir string
	socket    string
	cacheDir  string
	cmd       *exec.Cmd
	logs      *syncBuffer
	exited    chan struct{}
	waitErr   error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// tail returns the last n bytes of the server log, for failure messages.
func (s *nativeServer) tail(n int) string {
	l := s.logs.String()
	if len(l) > n {
		l = "…" + l[len(l)-n:]
	}
	return l
}

// startNative starts `olm-cmp serve` on a fresh socket dir and waits until the
// socket accepts connections. The server is stopped (SIGTERM, then SIGKILL)
// when the test ends.
func startNative(t testing.TB, extraArgs ...string) *nativeServer {
	t.Helper()
	requireBinary(t)
	dir := shortTempDir(t)
	s := &nativeServer{
		socketDir: filepath.Join(dir, "plugins"),
		cacheDir:  filepath.Join(dir, "cache"),
		logs:      &syncBuffer{},
		exited:    make(chan struct{}),
	}
	s.socket = filepath.Join(s.socketDir, pluginCfg.socketName())
	for _, d := range []string{s.socketDir, s.cacheDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	args := append([]string{"serve",
		"--socket-dir", s.socketDir,
		"--http-addr", "127.0.0.1:0",
		"--cache-dir", s.cacheDir,
		"--config", filepath.Join(repoRoot, "plugin.yaml"),
	}, extraArgs...)
	s.cmd = exec.Command(olmCmpBin, args...)
	s.cmd.Stdout = s.logs
	s.cmd.Stderr = s.logs
	// The server must not find the socket dir through the environment we set
	// for Argo CD's client: only through the flag.
	s.cmd.Env = withoutEnv(os.Environ(), "ARGOCD_PLUGINSOCKFILEPATH")
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting olm-cmp serve: %v", err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() { s.stop(t) })

	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-s.exited:
			t.Fatalf("olm-cmp %s exited before listening: %v\n%s", strings.Join(args, " "), s.waitErr, s.tail(4000))
		default:
		}
		if c, err := net.Dial("unix", s.socket); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			ls, _ := os.ReadDir(s.socketDir)
			var names []string
			for _, e := range ls {
				names = append(names, e.Name())
			}
			t.Fatalf("olm-cmp serve: no connectable %s after 30s (socket dir holds %v)\n%s", s.socket, names, s.tail(4000))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s
}

func (s *nativeServer) stop(t testing.TB) {
	select {
	case <-s.exited:
	default:
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
			// Graceful shutdown removes the socket, so the repo-server does
			// not dial a dead plugin.
			if _, err := os.Lstat(s.socket); err == nil {
				t.Errorf("olm-cmp serve left %s behind after SIGTERM", s.socket)
			}
		case <-time.After(15 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
			t.Errorf("olm-cmp serve did not exit within 15s of SIGTERM\n%s", s.tail(4000))
		}
	}
	if t.Failed() {
		t.Logf("olm-cmp serve log:\n%s", s.tail(8000))
	}
}

// shortTempDir is a temp dir with a short path: unix socket paths are limited
// to 108 bytes and t.TempDir() paths embed the (long) test name.
func shortTempDir(t testing.TB) string {
	d, err := os.MkdirTemp("", "ocmp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func withoutEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// Requests, independent of the Argo CD version.

// Plugin is spec.source.plugin of an Application; nil means no plugin block at all.
type Plugin struct {
	Name   string
	Env    [][2]string // ApplicationSourcePlugin.Env, in order
	Params []Param
}

// Param is one ApplicationSourcePluginParameter.
type Param struct {
	Name   string
	String *string
	Array  []string
	Map    map[string]string
}

func strp(s string) *string { return &s }

// GenRequest is what the repo-server needs to generate an app's manifests.
type GenRequest struct {
	RepoRoot string
	AppPath  string // relative to RepoRoot
	AppName  string
	Plugin   *Plugin
}

// Announcement is a decoded ParameterAnnouncement (Argo CD's type, copied field by field).
type Announcement struct {
	Name, Title, Tooltip, ItemType, CollectionType string
	Required                                       bool
	String                                         string
	Array                                          []string
	Map                                            map[string]string
}

// ---------------------------------------------------------------------------
// Manifests

// obj is one generated manifest.
type obj struct {
	APIVersion, Kind, Name, Namespace string
	Raw                               map[string]any
}

func (o obj) String() string {
	if o.Namespace != "" {
		return fmt.Sprintf("%s/%s %s/%s", o.APIVersion, o.Kind, o.Namespace, o.Name)
	}
	return fmt.Sprintf("%s/%s %s", o.APIVersion, o.Kind, o.Name)
}

func decodeManifests(t testing.TB, manifests []string) []obj {
	t.Helper()
	var out []obj
	for i, m := range manifests {
		var raw map[string]any
		if err := json.Unmarshal([]byte(m), &raw); err != nil {
			t.Fatalf("manifest %d is not JSON: %v\n%s", i, err, m)
		}
		o := obj{Raw: raw}
		o.APIVersion, _ = raw["apiVersion"].(string)
		o.Kind, _ = raw["kind"].(string)
		if md, ok := raw["metadata"].(map[string]any); ok {
			o.Name, _ = md["name"].(string)
			o.Namespace, _ = md["namespace"].(string)
		}
		out = append(out, o)
	}
	return out
}

func findObj(objs []obj, kind, name string) (obj, bool) {
	for _, o := range objs {
		if o.Kind == kind && (name == "" || o.Name == name) {
			return o, true
		}
	}
	return obj{}, false
}

func kindsOf(objs []obj) []string {
	var ks []string
	for _, o := range objs {
		ks = append(ks, o.String())
	}
	sort.Strings(ks)
	return ks
}

// path digs into nested maps/slices: path(o, "spec", "template", "spec", "containers", 0, "image").
func path(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			s, ok := v.([]any)
			if !ok || k >= len(s) {
				return nil
			}
			v = s[k]
		}
	}
	return v
}

// ---------------------------------------------------------------------------
// Fixture repositories

// repoBuilder writes a throw-away "Git checkout" the repo-server would hand to a plugin.
type repoBuilder struct {
	t    testing.TB
	root string
}

func newRepo(t testing.TB) *repoBuilder {
	t.Helper()
	return &repoBuilder{t: t, root: t.TempDir()}
}

func (r *repoBuilder) file(rel, content string) *repoBuilder {
	r.t.Helper()
	p := filepath.Join(r.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
	return r
}

// copyDir copies a directory tree (regular files only) into the repo.
func (r *repoBuilder) copyDir(src, rel string) *repoBuilder {
	r.t.Helper()
	if err := copyTree(src, filepath.Join(r.root, rel)); err != nil {
		r.t.Fatal(err)
	}
	return r
}

func copyTree(src, dst string) error {
	return filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// demoBundleDir is the lead's demo bundle shipped in the repository.
func demoBundleDir() string { return filepath.Join(repoRoot, "examples", "demo", "bundle") }

// olmCmpYAML writes an olm-cmp.yaml with the given spec lines (already indented by two).
func olmCmpYAML(name string, specLines ...string) string {
	return "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata:\n  name: " + name + "\nspec:\n  " +
		strings.Join(specLines, "\n  ") + "\n"
}

// greeterRepo is a repository with
//
//	apps/greeter: olm-cmp.yaml (bundle ./bundle, namespace file-ns, pull secret
//	              file-secret), the demo bundle, and one extra manifest;
//	apps/plain:   plain YAML and no olm-cmp.yaml (discovery must say no);
//	apps/broken:  olm-cmp.yaml whose bundle has no ClusterServiceVersion.
func greeterRepo(t testing.TB) string {
	t.Helper()
	r := newRepo(t)
	r.file("README.md", "fixture repository\n")
	r.file("apps/greeter/olm-cmp.yaml", olmCmpYAML("greeter-operator",
		"bundle: ./bundle",
		"namespace: file-ns",
		"imagePullSecrets: [file-secret]",
	))
	r.copyDir(demoBundleDir(), "apps/greeter/bundle")
	r.file("apps/greeter/greeter-extra.yaml", `apiVersion: greeter.example.com/v1alpha1
kind: Greeter
metadata:
  name: from-git
spec:
  message: extra manifest next to olm-cmp.yaml
`)
	r.file("apps/plain/configmap.yaml", `apiVersion: v1
kind: ConfigMap
metadata:
  name: plain
data:
  a: b
`)
	r.file("apps/broken/olm-cmp.yaml", olmCmpYAML("broken",
		"bundle: ./bundle",
		"namespace: broken-ns",
	))
	r.copyDir(filepath.Join(demoBundleDir(), "metadata"), "apps/broken/bundle/metadata")
	crds, _ := filepath.Glob(filepath.Join(demoBundleDir(), "manifests", "*_greeters.yaml"))
	if len(crds) != 1 {
		t.Fatalf("demo bundle: expected one *_greeters.yaml CRD, found %v", crds)
	}
	data, err := os.ReadFile(crds[0])
	if err != nil {
		t.Fatal(err)
	}
	r.file("apps/broken/bundle/manifests/"+filepath.Base(crds[0]), string(data))
	return r.root
}

// ---------------------------------------------------------------------------
// Misc

func ctxTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func isDeadline(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "DeadlineExceeded") || strings.Contains(s, "deadline exceeded")
}
