package e2e

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"sigs.k8s.io/yaml"
)

// TestArgoCD runs a real Argo CD (application-controller + repo-server from Argo CD's own
// code, built by test/argocd/build-argocd.sh) with redis-server and `olm-cmp serve` as local
// processes against the e2e control plane. The Git repository is a local file:// repository
// holding examples/lws-operator, its bundle served as an image by an in-process registry on
// loopback. It asserts the Application goes Synced + Healthy with the sync applied in our wave
// order, then commits a version bump and asserts the re-sync to the new version.
func TestArgoCD(t *testing.T) {
	e := setup(t)
	argoBin := os.Getenv("ARGOCD_BIN")
	if argoBin == "" {
		argoBin = filepath.Join(os.Getenv("HOME"), ".cache", "olm-cmp", "argocd", "bin")
	}
	if _, err := os.Stat(filepath.Join(argoBin, "argocd")); err != nil {
		t.Skipf("Argo CD not built (%v): run test/argocd/build-argocd.sh", err)
	}
	redis, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed (test/argocd/build-argocd.sh installs it)")
	}
	bundleDir := filepath.Join(e.shared, "bundles", "leader-worker-set-1.0.0")
	if _, err := os.Stat(bundleDir); err != nil {
		t.Skipf("%s missing: the Argo CD suite uses the shared lws-operator bundle", bundleDir)
	}
	w := e.work
	runDir := os.Getenv("E2E_RUN") // pids here are stopped by down.sh even if this test dies

	// ---- registry with lws-operator-bundle:1.0 and :1.0.1 (a synthetic bump of 1.0.0)
	regAddr := serveRegistry(t)
	repo := regAddr + "/leader-worker-set/lws-operator-bundle"
	pushBundle(t, bundleDir, repo+":1.0", "1.0.0")
	pushBundle(t, bundleDir, repo+":1.0.1", "1.0.1")

	// ---- olm-cmp serve
	sockDir := filepath.Join(w, "plugins")
	must(t, os.MkdirAll(sockDir, 0o755))
	// the loopback registry speaks plain HTTP: olm-cmp refuses that unless told (opt-in)
	serveArgs := []string{"serve", "--socket-dir", sockDir, "--cache-dir", filepath.Join(w, "olm-cmp-cache"),
		"--http-addr", "127.0.0.1:18080", "--insecure-registry", regAddr}
	if _, err := os.Stat(filepath.Join(e.repo, "plugin.yaml")); err == nil {
		serveArgs = append(serveArgs, "--config", filepath.Join(e.repo, "plugin.yaml"))
	}
	stopServe := startProc(t, runDir, "olm-cmp", nil, e.olmCmp, serveArgs...)
	waitHTTP(t, "http://127.0.0.1:18080/readyz", time.Minute)
	plugin := pluginName(t, sockDir)
	t.Logf("olm-cmp serve ready, plugin socket %s.sock", plugin)

	// ---- redis, repo-server, application-controller
	startProc(t, runDir, "redis-server", nil, redis, "--bind", "127.0.0.1", "--port", "6379", "--save", "", "--appendonly", "no")
	waitTCP(t, "127.0.0.1:6379", 30*time.Second)
	home := filepath.Join(w, "argocd-home")
	for _, d := range []string{"tls", "ssh", "gpg"} {
		must(t, os.MkdirAll(filepath.Join(home, d), 0o700))
	}
	argoEnv := []string{"HOME=" + home, "ARGOCD_PLUGINSOCKFILEPATH=" + sockDir, "ARGOCD_GPG_ENABLED=false",
		"ARGOCD_TLS_DATA_PATH=" + filepath.Join(home, "tls"), "ARGOCD_SSH_DATA_PATH=" + filepath.Join(home, "ssh"),
		"ARGOCD_GNUPGHOME=" + filepath.Join(home, "gpg"), "ARGOCD_SYNC_WAVE_DELAY=1",
		// the in-cluster destination (https://kubernetes.default.svc) from $KUBECONFIG: Argo CD's
		// own switch for running its components outside a pod
		"ARGOCD_FAKE_IN_CLUSTER=true"}
	startProc(t, runDir, "argocd-repo-server", argoEnv, filepath.Join(argoBin, "argocd-repo-server"),
		"--address", "127.0.0.1", "--port", "8081", "--metrics-address", "127.0.0.1", "--metrics-port", "8084", "--redis", "127.0.0.1:6379", "--disable-tls", "--loglevel", "info")
	waitTCP(t, "127.0.0.1:8081", time.Minute)

	mustKubectl(t, "apply", "--server-side", "-f", filepath.Join(argoBin, "crds"))
	waitEstablished(t, "applications.argoproj.io")
	waitEstablished(t, "appprojects.argoproj.io")
	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	base := filepath.Join(w, "argocd-base.yaml")
	must(t, os.WriteFile(base, []byte(fmt.Sprintf(argoBase, hex.EncodeToString(secret))), 0o644))
	mustKubectl(t, "apply", "--server-side", "-f", base)
	startProc(t, runDir, "argocd-application-controller", argoEnv, filepath.Join(argoBin, "argocd-application-controller"),
		"--kubeconfig", os.Getenv("KUBECONFIG"), "--namespace", "argocd",
		"--repo-server", "127.0.0.1:8081", "--repo-server-plaintext", "--redis", "127.0.0.1:6379",
		"--status-processors", "2", "--operation-processors", "2", "--app-resync", "30",
		"--metrics-port", "8082", "--loglevel", "info")

	// ---- Git repository: examples/lws-operator, pointed at the loopback registry
	git := filepath.Join(w, "git")
	appDir := filepath.Join(git, "examples", "lws-operator")
	copyDir(t, filepath.Join(e.repo, "examples", "lws-operator"), appDir)
	specPath := filepath.Join(appDir, "olm-cmp.yaml")
	setSpec(t, specPath, map[string]string{"bundle": repo, "version": "1.0"})
	gitRun(t, git, "init", "-q", "-b", "main")
	gitRun(t, git, "add", "-A")
	gitRun(t, git, "commit", "-q", "-m", "lws-operator 1.0")
	rev1 := strings.TrimSpace(gitRun(t, git, "rev-parse", "HEAD"))

	// rendered waves, to check Argo CD's order against
	renderWaves := func() map[string]int {
		m := map[string]int{}
		for _, d := range e.render(t, appDir, "--insecure-registry", regAddr, "--cache-dir", filepath.Join(w, "render-cache")) {
			m[d.Group()+"/"+d.Kind+"/"+d.Namespace+"/"+d.Name] = d.Wave
		}
		return m
	}
	wantWave := renderWaves()

	// ---- the Application from examples/, pointed at the file:// repository
	var app map[string]any
	b, err := os.ReadFile(filepath.Join(e.repo, "examples", "lws-operator", "argocd", "application.yaml"))
	must(t, err)
	must(t, yaml.Unmarshal(b, &app))
	src := app["spec"].(map[string]any)["source"].(map[string]any)
	src["repoURL"] = "file://" + git
	src["plugin"] = map[string]any{"name": plugin}
	delete(app["metadata"].(map[string]any), "finalizers")
	ab, _ := yaml.Marshal(app)
	appFile := filepath.Join(w, "application.yaml")
	must(t, os.WriteFile(appFile, ab, 0o644))
	start := time.Now()
	mustKubectl(t, "apply", "-f", appFile)

	st := waitApp(t, "lws-operator", rev1, 6*time.Minute)
	t.Logf("lws-operator 1.0: Synced + Healthy at %s in %v", rev1[:8], time.Since(start).Round(time.Second))
	checkSyncOrder(t, st, wantWave)

	// ---- version bump in Git -> re-sync to the new version
	setSpec(t, specPath, map[string]string{"version": "1.0.1"})
	gitRun(t, git, "commit", "-q", "-am", "lws-operator 1.0.1")
	rev2 := strings.TrimSpace(gitRun(t, git, "rev-parse", "HEAD"))
	start = time.Now()
	mustKubectl(t, "-n", "argocd", "annotate", "application", "lws-operator", "argocd.argoproj.io/refresh=normal", "--overwrite")
	st = waitApp(t, "lws-operator", rev2, 6*time.Minute)
	t.Logf("lws-operator 1.0.1: re-synced + Healthy at %s in %v", rev2[:8], time.Since(start).Round(time.Second))
	checkSyncOrder(t, st, renderWaves())
	img := strings.TrimSpace(string(mustKubectl(t, "-n", "openshift-lws-operator", "get", "deploy", "-o", "jsonpath={.items[*].spec.template.spec.containers[*].image}")))
	if !strings.Contains(img, ":1.0.1") {
		t.Errorf("after the bump the operator runs %q, want the 1.0.1 image", img)
	}

	// ---- classic mode, once: Argo CD's own argocd-cmp-server on the same socket name runs
	// plugin.yaml's `olm-cmp generate`; a Git change (back to 1.0) must sync through it.
	stopServe()
	if _, err := os.Stat(filepath.Join(sockDir, plugin+".sock")); err == nil {
		t.Fatalf("olm-cmp serve left its socket behind after SIGTERM")
	}
	cfgDir := filepath.Join(w, "cmp-config")
	must(t, os.MkdirAll(cfgDir, 0o755))
	// the repository's plugin.yaml, plus the opt-in for the plain-HTTP loopback registry
	pb, err := os.ReadFile(filepath.Join(e.repo, "plugin.yaml"))
	must(t, err)
	var pcfg map[string]any
	must(t, yaml.Unmarshal(pb, &pcfg))
	gen := pcfg["spec"].(map[string]any)["generate"].(map[string]any)
	args, _ := gen["args"].([]any)
	gen["args"] = append(args, "--insecure-registry", regAddr, "--cache-dir", filepath.Join(w, "classic-cache"))
	pb, err = yaml.Marshal(pcfg)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(cfgDir, "plugin.yaml"), pb, 0o644))
	cmpWork := filepath.Join(w, "cmp-work")
	must(t, os.MkdirAll(cmpWork, 0o755))
	startProc(t, runDir, "argocd-cmp-server", []string{"ARGOCD_PLUGINSOCKFILEPATH=" + sockDir, "ARGOCD_CMP_WORKDIR=" + cmpWork,
		"HOME=" + home, "PATH=" + filepath.Dir(e.olmCmp) + ":" + os.Getenv("PATH")},
		filepath.Join(argoBin, "argocd-cmp-server"), "--config-dir-path", cfgDir, "--loglevel", "info")
	if got := pluginName(t, sockDir); got != plugin {
		t.Fatalf("argocd-cmp-server listens as %q, olm-cmp serve as %q: plugin.yaml and serve disagree", got, plugin)
	}
	setSpec(t, specPath, map[string]string{"version": "1.0"})
	gitRun(t, git, "commit", "-q", "-am", "lws-operator back to 1.0 (classic mode)")
	rev3 := strings.TrimSpace(gitRun(t, git, "rev-parse", "HEAD"))
	start = time.Now()
	mustKubectl(t, "-n", "argocd", "annotate", "application", "lws-operator", "argocd.argoproj.io/refresh=normal", "--overwrite")
	st = waitApp(t, "lws-operator", rev3, 6*time.Minute)
	t.Logf("classic mode: synced + Healthy at %s in %v", rev3[:8], time.Since(start).Round(time.Second))
	img = strings.TrimSpace(string(mustKubectl(t, "-n", "openshift-lws-operator", "get", "deploy", "-o", "jsonpath={.items[*].spec.template.spec.containers[*].image}")))
	if !strings.Contains(img, ":1.0.0") {
		t.Errorf("classic mode: operator runs %q, want the 1.0.0 image", img)
	}
	checkSyncOrder(t, st, wantWave)
}

const argoBase = `apiVersion: v1
kind: Namespace
metadata:
  name: argocd
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
  labels: {app.kubernetes.io/part-of: argocd}
data:
  timeout.reconciliation: 20s
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-rbac-cm
  namespace: argocd
  labels: {app.kubernetes.io/part-of: argocd}
---
apiVersion: v1
kind: Secret
metadata:
  name: argocd-secret
  namespace: argocd
  labels: {app.kubernetes.io/part-of: argocd}
stringData:
  server.secretkey: %s
---
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: default
  namespace: argocd
spec:
  sourceRepos: ['*']
  destinations: [{server: '*', namespace: '*'}]
  clusterResourceWhitelist: [{group: '*', kind: '*'}]
`

type appState struct {
	Status struct {
		Sync struct {
			Status   string `json:"status"`
			Revision string `json:"revision"`
		} `json:"sync"`
		Health struct {
			Status string `json:"status"`
		} `json:"health"`
		Conditions []struct {
			Type, Message string
		} `json:"conditions"`
		OperationState struct {
			Phase      string `json:"phase"`
			Message    string `json:"message"`
			SyncResult struct {
				Revision  string `json:"revision"`
				Resources []struct {
					Group, Version, Kind, Namespace, Name string
					Status, Message, SyncPhase            string
				} `json:"resources"`
			} `json:"syncResult"`
		} `json:"operationState"`
	} `json:"status"`
}

// waitApp waits until the Application is Synced and Healthy at revision with a successful
// sync operation of that revision.
func waitApp(t *testing.T, name, rev string, timeout time.Duration) appState {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var st appState
	last := ""
	for {
		out, err := kubectl(t, "-n", "argocd", "get", "application", name, "-o", "json")
		if err == nil {
			st = appState{}
			_ = json.Unmarshal(out, &st)
			s := st.Status
			now := fmt.Sprintf("sync=%s health=%s op=%s rev=%.8s %s", s.Sync.Status, s.Health.Status, s.OperationState.Phase, s.Sync.Revision, s.OperationState.Message)
			if now != last {
				t.Logf("  %s", now)
				last = now
			}
			if s.Sync.Status == "Synced" && s.Health.Status == "Healthy" && s.Sync.Revision == rev &&
				s.OperationState.Phase == "Succeeded" && s.OperationState.SyncResult.Revision == rev {
				return st
			}
			for _, c := range s.Conditions {
				if strings.Contains(c.Type, "Error") {
					t.Logf("  condition %s: %s", c.Type, c.Message)
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Application %s not Synced+Healthy at %.8s after %v; last: %s", name, rev, timeout, last)
		}
		time.Sleep(time.Second)
	}
}

// checkSyncOrder: the operation's resource results are in execution order; their sync waves (from
// our render) must never decrease, and every wave of the render must appear.
func checkSyncOrder(t *testing.T, st appState, want map[string]int) {
	t.Helper()
	prev, seen := -1<<31, map[int]int{}
	var order []string
	for _, r := range st.Status.OperationState.SyncResult.Resources {
		k := r.Group + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name
		wv, ok := want[k]
		if !ok {
			k2 := r.Group + "/" + r.Kind + "//" + r.Name // cluster-scoped objects may carry a namespace in results
			if wv, ok = want[k2]; !ok {
				t.Errorf("synced %s is not in the render", k)
				continue
			}
		}
		if r.Status != "Synced" {
			t.Errorf("%s: %s %s", k, r.Status, r.Message)
		}
		if wv < prev {
			t.Errorf("wave order broken: %s (wave %d) synced after wave %d", k, wv, prev)
		}
		prev = wv
		seen[wv]++
		order = append(order, fmt.Sprintf("%d:%s/%s", wv, r.Kind, r.Name))
	}
	t.Logf("sync order (wave:kind/name): %s", strings.Join(order, " "))
	for k, wv := range want {
		if seen[wv] == 0 {
			t.Errorf("wave %d (e.g. %s) missing from the sync result", wv, k)
		}
	}
}

// ---------------------------------------------------------------- registry

func serveRegistry(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	srv := &http.Server{Handler: registry.New(registry.Logger(nilLogger())), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

// pushBundle pushes a registry+v1 bundle image (manifests/ + metadata/ in one layer, the bundle
// labels on the config). version != the CSV's rewrites the CSV's version and the operator image
// tags, making a synthetic newer bundle.
func pushBundle(t *testing.T, dir, ref, version string) {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if !strings.HasPrefix(rel, "manifests/") && !strings.HasPrefix(rel, "metadata/") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "kind: ClusterServiceVersion") {
			s := string(b)
			s = regexp.MustCompile(`(?m)^(\s*version:\s*)1\.0\.0\s*$`).ReplaceAllString(s, "${1}"+version)
			s = strings.ReplaceAll(s, "leader-worker-set.v1.0.0", "leader-worker-set.v"+version)
			// the git bundle has image placeholders that the real image build substitutes
			s = strings.ReplaceAll(s, "${OPERATOR_IMAGE}", "registry.redhat.io/leader-worker-set/lws-rhel9-operator:"+version)
			s = strings.ReplaceAll(s, "${OPERAND_IMAGE}", "registry.redhat.io/leader-worker-set/lws-rhel9:"+version)
			b = []byte(s)
		}
		files[rel] = b
		return nil
	})
	must(t, err)
	img, err := crane.Image(files)
	must(t, err)
	cf, err := img.ConfigFile()
	must(t, err)
	cf = cf.DeepCopy()
	cf.Config.Labels = map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1": "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":  "metadata/",
		"operators.operatorframework.io.bundle.package.v1":   "leader-worker-set",
	}
	cf.OS, cf.Architecture = "linux", "amd64"
	var cimg v1.Image
	cimg, err = mutate.ConfigFile(img, cf)
	must(t, err)
	must(t, crane.Push(cimg, ref))
	d, _ := cimg.Digest()
	t.Logf("pushed %s (%s)", ref, d)
}

// ---------------------------------------------------------------- processes

// startProc starts a server in its own process group, records its PID in runDir/pids (so
// down.sh stops it if the test dies) and stops it at cleanup.
func startProc(t *testing.T, runDir, name string, env []string, bin string, args ...string) (stop func()) {
	t.Helper()
	logDir := filepath.Join(runDir, "logs")
	if runDir == "" {
		logDir = t.TempDir()
	}
	must(t, os.MkdirAll(logDir, 0o755))
	lf, err := os.Create(filepath.Join(logDir, name+".log"))
	must(t, err)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	must(t, cmd.Start())
	pidFile := ""
	if runDir != "" {
		pidFile = filepath.Join(runDir, "pids", name+".pid")
		_ = os.WriteFile(pidFile, []byte(fmt.Sprint(cmd.Process.Pid)), 0o644)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	var once sync.Once
	stop = func() { once.Do(func() { stopProc(t, cmd, done, lf, pidFile, name, logDir) }) }
	t.Cleanup(stop)
	return stop
}

func stopProc(t *testing.T, cmd *exec.Cmd, done chan struct{}, lf *os.File, pidFile, name, logDir string) {
	{
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		lf.Close()
		if pidFile != "" {
			os.Remove(pidFile)
		}
		if t.Failed() {
			t.Logf("%s log (tail):\n%s", name, tail(filepath.Join(logDir, name+".log"), 40))
		}
	}
}

func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

func waitTCP(t *testing.T, addr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not listening after %v", addr, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func waitHTTP(t *testing.T, url string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after %v (%v)", url, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// pluginName is the socket olm-cmp serve created (<name>[-<version>].sock), without .sock:
// what an Application names in spec.source.plugin.name.
func pluginName(t *testing.T, dir string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		m, _ := filepath.Glob(filepath.Join(dir, "*.sock"))
		if len(m) == 1 {
			return strings.TrimSuffix(filepath.Base(m[0]), ".sock")
		}
		if time.Now().After(deadline) {
			t.Fatalf("olm-cmp serve: want one socket in %s, got %v", dir, m)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ---------------------------------------------------------------- files and git

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(to), 0o755))
	if out, err := exec.Command("cp", "-r", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp -r %s %s: %v %s", from, to, err, out)
	}
}

// setSpec sets top-level spec fields of an olm-cmp.yaml, keeping the rest of the file.
func setSpec(t *testing.T, path string, fields map[string]string) {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	var f map[string]any
	must(t, yaml.Unmarshal(b, &f))
	spec := f["spec"].(map[string]any)
	for k, v := range fields {
		spec[k] = v
	}
	out, err := yaml.Marshal(f)
	must(t, err)
	must(t, os.WriteFile(path, out, 0o644))
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@olm-cmp.invalid",
		"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@olm-cmp.invalid", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
