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
	"runtime"
	"strconv"
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

	"github.com/olm-cmp/olm-cmp/hack/ociimage"
	"github.com/olm-cmp/olm-cmp/hack/sidecar"
)

// argoCD is one running Argo CD (application-controller + repo-server from Argo CD's own code,
// built by test/argocd/build-argocd.sh), with redis-server and olm-cmp's sidecar as local
// processes, an in-process registry on loopback and a file:// Git repository. The sidecar runs
// as deploy/ installs it (startSidecar).
type argoCD struct {
	t       *testing.T
	e       env
	bin     string // Argo CD binaries (argocd-* symlinks, crds/, git-verify-wrapper.sh for 3.x)
	reg     string // registry host:port
	sockDir string // plugin sockets: the host directory of the sidecar's plugins volume
	plugin  string // the plugin name Applications give (socket name)
	git     string // the Git work tree behind file://
	home    string
	env     []string // Argo CD's environment
	runDir  string   // pids here are stopped by down.sh even if the test dies
	stop    func()   // stops the olm-cmp sidecar
	pod     *sidecar.Pod
}

// argoOptions are what differs between the Argo CD lines and cases. The sidecar fields are
// what a user gives the olm-cmp container in the cluster, nothing else: the Secrets and
// ConfigMaps that exist in argocd (mounted where the shipped container spec names them, or
// where sidecar adds a volume), and their own patch of the container.
type argoOptions struct {
	v3 bool              // Argo CD 3.x flags and PATH
	cm map[string]string // extra argocd-cm data (resource customizations)
	// example is the deploy/kustomize/examples overlay whose olm-cmp container runs: "argocd"
	// when empty, "argocd-tenancy" for the tenancy component on top.
	example string
	// configMaps: ConfigMaps that exist, by name, replacing the shipped one of that name
	// (olm-cmp-trust: {trust.yaml: ..., key files}: the trust policy, as users install theirs)
	// or mounted by a volume sidecar adds.
	configMaps map[string]map[string]string
	// secrets: Secrets that exist (name -> key -> value). olm-cmp-registry's .dockerconfigjson
	// is the sidecar's registry credentials; without it the optional volume is empty.
	secrets map[string]map[string]string
	// sidecar patches the container spec after startArgoCD's own settings, as a kustomize patch
	// of the Deployment would: s.AddVolume for another ConfigMap or Secret, s.SetEnv, s.AddArgs.
	sidecar func(s *sidecar.Spec)
}

// startArgoCD starts everything but the Applications; processes stop at test cleanup.
func startArgoCD(t *testing.T, e env, bin string, opt argoOptions) *argoCD {
	t.Helper()
	if _, err := os.Stat(filepath.Join(bin, "argocd")); err != nil {
		t.Skipf("Argo CD not built (%v): run test/argocd/build-argocd.sh", err)
	}
	redis, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed (test/argocd/build-argocd.sh installs it)")
	}
	a := &argoCD{t: t, e: e, bin: bin, runDir: os.Getenv("E2E_RUN")}
	w := e.work
	a.reg = serveRegistry(t)
	a.startSidecar(opt)

	// ---- redis, repo-server, application-controller
	startProc(t, a.runDir, "redis-server", nil, redis, "--bind", "127.0.0.1", "--port", "6379", "--save", "", "--appendonly", "no")
	waitTCP(t, "127.0.0.1:6379", 30*time.Second)
	a.home = filepath.Join(w, "argocd-home")
	for _, d := range []string{"tls", "ssh", "gpg"} {
		must(t, os.MkdirAll(filepath.Join(a.home, d), 0o700))
	}
	a.env = []string{"HOME=" + a.home, "ARGOCD_PLUGINSOCKFILEPATH=" + a.sockDir, "ARGOCD_GPG_ENABLED=false",
		"ARGOCD_TLS_DATA_PATH=" + filepath.Join(a.home, "tls"), "ARGOCD_SSH_DATA_PATH=" + filepath.Join(a.home, "ssh"),
		"ARGOCD_GNUPGHOME=" + filepath.Join(a.home, "gpg"), "ARGOCD_SYNC_WAVE_DELAY=1",
		// the in-cluster destination (https://kubernetes.default.svc) from $KUBECONFIG: Argo CD's
		// own switch for running its components outside a pod
		"ARGOCD_FAKE_IN_CLUSTER=true"}
	repoArgs := []string{"--address", "127.0.0.1", "--port", "8081", "--metrics-address", "127.0.0.1", "--metrics-port", "8084",
		"--redis", "127.0.0.1:6379", "--disable-tls", "--loglevel", "info"}
	repoEnv := a.env
	if opt.v3 {
		// what Argo CD 3.x's image gives its repo-server: git-verify-wrapper.sh on PATH (it runs
		// for every revision), and no client CA when TLS is off (3.x refuses the default path
		// together with --disable-tls)
		repoArgs = append(repoArgs, "--client-ca-path", "")
		repoEnv = append(append([]string{}, a.env...), "PATH="+bin+":"+os.Getenv("PATH"))
	}
	startProc(t, a.runDir, "argocd-repo-server", repoEnv, filepath.Join(bin, "argocd-repo-server"), repoArgs...)
	waitTCP(t, "127.0.0.1:8081", time.Minute)

	mustKubectl(t, "apply", "--server-side", "-f", filepath.Join(bin, "crds"))
	waitEstablished(t, "applications.argoproj.io")
	waitEstablished(t, "appprojects.argoproj.io")
	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	base := filepath.Join(w, "argocd-base.yaml")
	must(t, os.WriteFile(base, []byte(fmt.Sprintf(argoBase, hex.EncodeToString(secret))), 0o644))
	mustKubectl(t, "apply", "--server-side", "-f", base)
	if len(opt.cm) > 0 {
		patch, err := json.Marshal(map[string]any{"data": opt.cm})
		must(t, err)
		mustKubectl(t, "-n", "argocd", "patch", "configmap", "argocd-cm", "--type=merge", "-p", string(patch))
	}
	startProc(t, a.runDir, "argocd-application-controller", a.env, filepath.Join(bin, "argocd-application-controller"),
		"--kubeconfig", os.Getenv("KUBECONFIG"), "--namespace", "argocd",
		"--repo-server", "127.0.0.1:8081", "--repo-server-plaintext", "--redis", "127.0.0.1:6379",
		"--status-processors", "4", "--operation-processors", "4", "--app-resync", strconv.Itoa(appResync), "--app-resync-jitter", "0",
		"--metrics-port", "8082", "--loglevel", "info")

	a.git = filepath.Join(w, "git")
	must(t, os.MkdirAll(a.git, 0o755))
	gitRun(t, a.git, "init", "-q", "-b", "main")
	return a
}

// startSidecar runs olm-cmp's container as deploy/kustomize/examples/argocd (or opt.example)
// installs it
// (hack/sidecar, the runner deploy/run_test.go uses): the container spec from `kustomize build`
// of that example, chrooted in the root filesystem of the image run.sh built with hack/ociimage
// (make image's build, $E2E_OCI_LAYOUT), uid 999, read-only root in its own mount namespace,
// ConfigMaps and Secrets mounted as files as the kubelet does. Its plugins volume is the socket
// directory argocd-repo-server is given. One setting is the test's: the loopback registry
// speaks plain HTTP, so OLM_CMP_INSECURE_REGISTRIES names it, the env a user sets for such a
// registry. The args stay as shipped (--http-addr=:8080: the suite has its own network).
func (a *argoCD) startSidecar(opt argoOptions) {
	t := a.t
	layoutDir := os.Getenv("E2E_OCI_LAYOUT")
	if layoutDir == "" {
		t.Skip("E2E_OCI_LAYOUT not set: run.sh builds the image (hack/ociimage) for the Argo CD suites")
	}
	example := opt.example
	if example == "" {
		example = "argocd"
	}
	spec, err := sidecar.FromKustomize(filepath.Join(a.e.repo, "deploy"), example)
	must(t, err)
	spec.SetEnv("OLM_CMP_INSECURE_REGISTRIES", a.reg)
	if opt.sidecar != nil {
		opt.sidecar(spec)
	}
	img, err := ociimage.PlatformImage(layoutDir, "linux/"+runtime.GOARCH)
	must(t, err)
	cf, err := img.ConfigFile()
	must(t, err)
	root := filepath.Join(a.e.work, "olm-cmp-root")
	must(t, os.RemoveAll(root))
	must(t, sidecar.Extract(img, root))
	vols := filepath.Join(a.e.work, "olm-cmp-volumes")
	must(t, os.RemoveAll(vols))
	a.pod, err = sidecar.Prepare(spec, sidecar.Options{Root: root, Volumes: vols, Image: cf.Config,
		Secrets: opt.secrets, ConfigMaps: opt.configMaps})
	must(t, err)
	a.stop = startProc(t, a.runDir, "olm-cmp", a.pod.Env, a.pod.Argv[0], a.pod.Argv[1:]...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	must(t, a.pod.WaitReady(ctx, nil))
	a.sockDir = a.pod.SocketDir()
	a.plugin = pluginName(t, a.sockDir)
	t.Logf("olm-cmp sidecar of deploy/kustomize/examples/%s ready (image %s, %s), plugin socket %s.sock", example, layoutDir, strings.Join(spec.Args(), " "), a.plugin)
}

// appResync is the controller's --app-resync (seconds): the periodic comparison a stable
// Application must survive.
const appResync = 30

// commit commits everything in the Git work tree and returns the revision.
func (a *argoCD) commit(msg string) string {
	gitRun(a.t, a.git, "add", "-A")
	gitRun(a.t, a.git, "commit", "-q", "--allow-empty", "-m", msg)
	return strings.TrimSpace(gitRun(a.t, a.git, "rev-parse", "HEAD"))
}

// application writes and applies the Application from examples/<example>/argocd/application.yaml
// (or, when example is "", one made the same way), pointed at path in the file:// repository.
func (a *argoCD) application(name, example, path, namespace string) {
	t := a.t
	var app map[string]any
	if example != "" {
		b, err := os.ReadFile(filepath.Join(a.e.repo, "examples", example, "argocd", "application.yaml"))
		must(t, err)
		must(t, yaml.Unmarshal(b, &app))
	} else {
		app = map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
			"metadata": map[string]any{"name": name, "namespace": "argocd"},
			"spec": map[string]any{"project": "default", "source": map[string]any{"targetRevision": "main"},
				"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": namespace},
				"syncPolicy": map[string]any{"automated": map[string]any{"prune": true, "selfHeal": true},
					"retry": map[string]any{"limit": 5, "backoff": map[string]any{"duration": "10s", "factor": 2, "maxDuration": "3m"}}}}}
	}
	app["metadata"].(map[string]any)["name"] = name
	src := app["spec"].(map[string]any)["source"].(map[string]any)
	src["repoURL"] = "file://" + a.git
	src["path"] = path
	src["plugin"] = map[string]any{"name": a.plugin}
	delete(app["metadata"].(map[string]any), "finalizers")
	ab, err := yaml.Marshal(app)
	must(t, err)
	f := filepath.Join(a.e.work, "application-"+name+".yaml")
	must(t, os.WriteFile(f, ab, 0o644))
	mustKubectl(t, "apply", "-f", f)
}

// refresh asks Argo CD to compare again (normal) or to regenerate the manifests too (hard).
func refresh(t *testing.T, name, kind string) {
	mustKubectl(t, "-n", "argocd", "annotate", "application", name, "argocd.argoproj.io/refresh="+kind, "--overwrite")
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
	Metadata struct {
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Status struct {
		Sync struct {
			Status   string `json:"status"`
			Revision string `json:"revision"`
		} `json:"sync"`
		Health struct {
			Status string `json:"status"`
		} `json:"health"`
		ReconciledAt string `json:"reconciledAt"`
		Resources    []struct {
			Group, Kind, Namespace, Name string
			Status                       string `json:"status"`
		} `json:"resources"`
		History    []json.RawMessage `json:"history"`
		Conditions []struct {
			Type, Message string
		} `json:"conditions"`
		OperationState struct {
			Phase     string `json:"phase"`
			Message   string `json:"message"`
			StartedAt string `json:"startedAt"`
			Operation struct {
				Sync struct {
					Resources []struct{ Kind, Name string } `json:"resources"`
				} `json:"sync"`
			} `json:"operation"`
			SyncResult struct {
				Revision  string `json:"revision"`
				Resources []struct {
					Group, Version, Kind, Namespace, Name string
					Status, Message, SyncPhase, HookPhase string
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
				if run := os.Getenv("E2E_RUN"); run != "" { // for the post-mortem of a kept work dir
					_ = os.WriteFile(filepath.Join(run, "logs", fmt.Sprintf("application-%s-%.8s.json", name, rev)), out, 0o644)
				}
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
	var order, hooks, pruned []string
	for _, r := range st.Status.OperationState.SyncResult.Resources {
		k := r.Group + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name
		if r.SyncPhase != "" && r.SyncPhase != "Sync" { // a resource hook: it runs after the waves
			if r.HookPhase != "Succeeded" {
				t.Errorf("%s hook %s: %s %s", r.SyncPhase, k, r.HookPhase, r.Message)
			}
			hooks = append(hooks, r.SyncPhase+":"+r.Kind+"/"+r.Name)
			continue
		}
		if len(hooks) > 0 {
			t.Errorf("%s synced after the hooks %v", k, hooks)
		}
		if r.Status == "Pruned" { // an object of the previous render (a bump renames hashed RBAC)
			if _, kept := want[k]; kept {
				t.Errorf("%s pruned, but the render has it", k)
			}
			pruned = append(pruned, r.Kind+"/"+r.Name)
			continue
		}
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
	t.Logf("sync order of %d results (wave:kind/name): %s, then hooks %v; pruned %v", len(st.Status.OperationState.SyncResult.Resources), strings.Join(order, " "), hooks, pruned)
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

// pushBundle pushes a registry+v1 bundle image: manifests/ + metadata/ in one layer, and the
// bundle's metadata/annotations.yaml as the image's labels (as a bundle image is built).
// rewrite, if not nil, edits the CSV's text first (a synthetic version, substituted images);
// opts go to the push (credentials for a private registry).
func pushBundle(t *testing.T, dir, ref string, rewrite func(csv string) string, opts ...crane.Option) {
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
		if rewrite != nil && strings.Contains(string(b), "kind: ClusterServiceVersion") {
			b = []byte(rewrite(string(b)))
		}
		files[rel] = b
		return nil
	})
	must(t, err)
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	must(t, yaml.Unmarshal(files["metadata/annotations.yaml"], &meta))
	if len(meta.Annotations) == 0 {
		t.Fatalf("%s: metadata/annotations.yaml has no annotations", dir)
	}
	img, err := crane.Image(files)
	must(t, err)
	cf, err := img.ConfigFile()
	must(t, err)
	cf = cf.DeepCopy()
	cf.Config.Labels = meta.Annotations
	cf.OS, cf.Architecture = "linux", "amd64"
	var cimg v1.Image
	cimg, err = mutate.ConfigFile(img, cf)
	must(t, err)
	must(t, crane.Push(cimg, ref, opts...))
	d, _ := cimg.Digest()
	t.Logf("pushed %s (%s)", ref, d)
}

// lwsAt makes the lws-operator 1.0.0 bundle from Git what its published image at version is:
// the CSV's version and name, and the image placeholders the image build substitutes.
func lwsAt(version string) func(string) string {
	return func(s string) string {
		s = regexp.MustCompile(`(?m)^(\s*version:\s*)1\.0\.0\s*$`).ReplaceAllString(s, "${1}"+version)
		s = strings.ReplaceAll(s, "leader-worker-set.v1.0.0", "leader-worker-set.v"+version)
		s = strings.ReplaceAll(s, "${OPERATOR_IMAGE}", "registry.redhat.io/leader-worker-set/lws-rhel9-operator:"+version)
		return strings.ReplaceAll(s, "${OPERAND_IMAGE}", "registry.redhat.io/leader-worker-set/lws-rhel9:"+version)
	}
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
