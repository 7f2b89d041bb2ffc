package e2e

// The pod runner: runs a real operator binary the way the kubelet would run the container of a
// rendered Deployment, against the e2e control plane, for a kwok Pod of that Deployment (kwok
// pods run nothing; the runner is what runs their containers).
//
// API (kept small; the operators and webhooks suites use it):
//
//	p := runPod(t, dep, podOptions{Binaries: map[string]string{"source-controller": path}})
//	p.Pod, p.Namespace, p.ServiceAccount   the kwok Pod it runs as, its SA
//	p.Logs()                               all containers' output so far
//	p.Denials()                            RBAC denials found in the logs ("" lines = none)
//	p.Dial(port) / p.Forward(addr, port)   reach a port the process listens on in its network
//	                                       namespace (for webhooks: forward a Service address)
//	p.Listen(addr)                         serve something on the pod's own loopback
//	p.Exited()                             containers that stopped on their own
//	p.Path(pth)                            a path inside the pod's root, as seen from the test
//	p.Stop()                               also registered with t.Cleanup
//
// What it does, per container (init containers first, each to completion):
//   - command/args from the rendered container ($(VAR) expanded as the kubelet does); the binary
//     is Binaries[basename(command[0])] or, with no command (the image's entrypoint),
//     Binaries[last path element of the image, without tag]. Containers with no binary are not
//     run (logged): sidecars such as kube-rbac-proxy.
//   - env: envFrom (ConfigMaps, Secrets) then env, every valueFrom resolved: fieldRef from the
//     live kwok Pod (metadata.name/namespace/uid/labels['k']/annotations['k'], spec.nodeName,
//     spec.serviceAccountName, status.podIP/hostIP), resourceFieldRef from the container's limits
//     (node allocatable when unset, as the kubelet does), secretKeyRef/configMapKeyRef from the
//     live objects (waited for, unless optional).
//   - its own network, mount and root: the pod's "pause" process holds a new network namespace
//     (only its loopback: two pods may both listen on :8080; the API server is reached at the
//     same 127.0.0.1:<port> through a forwarder the test process runs into the namespace) and a
//     new mount namespace in which a per-pod root filesystem is assembled: the host's /usr
//     (/bin, /lib ... as the host links them), /dev, /proc, /sys and /etc's ssl, passwd, group,
//     hosts, resolv.conf bound in; /tmp, /run (/var/run), /root, /etc and the rest are the pod's
//     own directories. Containers are chrooted into it, so every mount path is materialised at
//     its real path (no path rewriting). The binaries are bound at /.e2e-bin.
//   - the service-account volume at /var/run/secrets/kubernetes.io/serviceaccount (token from a
//     TokenRequest for the rendered ServiceAccount, bound to the kwok Pod; ca.crt from the
//     namespace's kube-root-ca.crt; namespace) and KUBECONFIG (/var/run/olm-cmp-e2e/kubeconfig)
//     carrying that token: the process has exactly the rendered RBAC. KUBERNETES_SERVICE_HOST/PORT
//     (and _PORT_HTTPS, KUBERNETES_PORT) name the API server's address inside the pod, as the
//     kubelet sets them for rest.InClusterConfig.
//   - volumes: secret, configMap, projected (secret, configMap, downwardAPI,
//     serviceAccountToken), downwardAPI, emptyDir, with items and subPath, written as files at
//     the mount path inside the pod's root. ImageFiles adds files the image would carry (a
//     directory per path: crossplane's `core init` reads its CRDs from /crds).
//   - working dir: the container's workingDir (created), else /; HOME=/root. Output: one log
//     file per container under the pod's directory in the test's work dir.
//   - the kwok Pod's object is held (a finalizer) until Stop, as the kubelet holds a deleted Pod's
//     object until its containers are gone: a deleted Pod has a deletionTimestamp
//     (p.Terminating()), its token still works, and its processes stop with Stop.
//
// Not emulated: the Service links of other Services (enableServiceLinks), probes and restarts
// (p.Exited lists containers that stopped), resource limits, securityContext (runs as the test's
// user), image contents beyond the binary and ImageFiles, hostPath/PVC volumes (refused), mount
// paths under the host-bound directories (refused), and updates of mounted Secrets/ConfigMaps or
// token rotation after start.

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// podOptions says which binaries stand for which images/commands.
type podOptions struct {
	// Binaries maps a command name (basename of command[0]) or an image name (last path
	// element, no tag) to the binary to run.
	Binaries map[string]string
	// ImageFiles maps a directory the image carries to a host directory copied there.
	ImageFiles map[string]string
	// Wait bounds the wait for the kwok Pod and for non-optional Secrets/ConfigMaps (default 2m).
	Wait time.Duration
}

// runningPod is one kwok Pod of a Deployment whose containers run as local processes.
type runningPod struct {
	t                   *testing.T
	Deployment          string
	Pod, Namespace, UID string
	ServiceAccount      string
	root                string // per-pod directory: rootfs/, logs/
	netns               *os.File
	procs               []*podProc
	listeners           []net.Listener
	stopOnce            sync.Once
	apiAddr             string // API server host:port, the same inside and out
	logs                []string
	pod, node           map[string]any
	skipped             []string // containers with no binary
	mu                  sync.Mutex
	exitErr             map[string]error
	stopping            bool
}

type podProc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// Path is where a path of the pod's root filesystem is, seen from the test process.
func (p *runningPod) Path(pth string) string { return p.inRoot(pth) }

// inRoot is a path inside the pod's root filesystem.
func (p *runningPod) inRoot(pth string) string {
	return filepath.Join(p.root, "rootfs", filepath.FromSlash(pth))
}

// hostBound are the host's directories a pod's root shares (read through bind mounts).
var hostBound = []string{"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "dev", "proc", "sys",
	"etc/ssl", "etc/ca-certificates", "etc/pki", "etc/passwd", "etc/group", "etc/hosts", "etc/resolv.conf", "etc/nsswitch.conf"}

// runPod starts the containers of one kwok Pod of the rendered Deployment dep.
func runPod(t *testing.T, dep Doc, opt podOptions) *runningPod {
	t.Helper()
	if opt.Wait == 0 {
		opt.Wait = 2 * time.Minute
	}
	if dep.Kind != "Deployment" {
		t.Fatalf("runPod: %s is not a Deployment", dep.Key())
	}
	p := &runningPod{t: t, Deployment: dep.Name, Namespace: dep.Namespace, exitErr: map[string]error{}}
	p.pod = p.findPod(dep, opt.Wait)
	p.Pod = str(p.pod, "metadata", "name")
	p.UID = str(p.pod, "metadata", "uid")
	p.ServiceAccount = str(p.pod, "spec", "serviceAccountName")
	if p.ServiceAccount == "" {
		p.ServiceAccount = "default"
	}
	var node map[string]any
	must(t, json.Unmarshal(mustKubectl(t, "get", "node", str(p.pod, "spec", "nodeName"), "-o", "json"), &node))
	p.node = node

	work := os.Getenv("E2E_WORK")
	if work == "" {
		work = t.TempDir()
	}
	var err error
	p.root, err = os.MkdirTemp(work, "pod-"+sanitize(p.Pod)+"-")
	must(t, err)
	must(t, os.MkdirAll(filepath.Join(p.root, "logs"), 0o755))
	for _, d := range []string{"run/secrets/kubernetes.io/serviceaccount", "run/olm-cmp-e2e", "tmp", "root", "etc", "var", ".e2e-bin"} {
		must(t, os.MkdirAll(p.inRoot(d), 0o755))
	}
	must(t, os.Chmod(p.inRoot("tmp"), 0o1777))
	must(t, os.Symlink("../run", p.inRoot("var/run")))
	for dir, src := range opt.ImageFiles {
		must(t, os.MkdirAll(p.inRoot(dir), 0o755))
		if out, err := exec.Command("cp", "-r", src+"/.", p.inRoot(dir)).CombinedOutput(); err != nil {
			t.Fatalf("pod %s: image files %s: %v %s", p.Pod, dir, err, out)
		}
	}

	// the service-account volume and the kubeconfig: a TokenRequest for the rendered SA, bound to the Pod
	token := p.token("", 3600)
	ca := p.rootCA(opt.Wait)
	sa := p.inRoot("run/secrets/kubernetes.io/serviceaccount")
	must(t, os.WriteFile(filepath.Join(sa, "token"), []byte(token), 0o644))
	must(t, os.WriteFile(filepath.Join(sa, "ca.crt"), []byte(ca), 0o644))
	must(t, os.WriteFile(filepath.Join(sa, "namespace"), []byte(p.Namespace), 0o644))
	server := strings.TrimSpace(string(mustKubectl(t, "config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}")))
	p.apiAddr = strings.TrimPrefix(server, "https://")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: %q, certificate-authority-data: %s}
users:
- name: sa
  user: {token: %q}
contexts:
- name: sa
  context: {cluster: e2e, user: sa, namespace: %q}
current-context: sa
`, server, base64.StdEncoding.EncodeToString([]byte(ca)), token, p.Namespace)
	must(t, os.WriteFile(p.inRoot("run/olm-cmp-e2e/kubeconfig"), []byte(kc), 0o600))

	spec, _ := p.pod["spec"].(map[string]any)
	tmpl, _ := dep.Obj["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	// containers, volumes: from the live Pod (what the API server admitted); fall back to the template
	if spec == nil {
		spec = tmpl
	}
	vols := map[string]map[string]any{}
	for _, v := range list(spec["volumes"]) {
		vm, _ := v.(map[string]any)
		vols[str(vm, "name")] = vm
	}
	t.Cleanup(p.Stop)
	p.holdPod()
	p.startNetns(opt)
	for _, c := range list(spec["initContainers"]) {
		if pr := p.start(c.(map[string]any), vols, opt, true); pr != nil {
			select {
			case <-pr.done:
			case <-time.After(opt.Wait):
				t.Fatalf("pod %s/%s: init container %s did not finish in %v:\n%s", p.Namespace, p.Pod, pr.name, opt.Wait, tail(pr.log.Name(), 30))
			}
			if err := p.exit(pr.name); err != nil {
				t.Fatalf("pod %s/%s: init container %s failed (%v):\n%s", p.Namespace, p.Pod, pr.name, err, tail(pr.log.Name(), 30))
			}
		}
	}
	for _, c := range list(spec["containers"]) {
		p.start(c.(map[string]any), vols, opt, false)
	}
	if len(p.procs) == 0 {
		t.Fatalf("pod %s/%s: no container has a binary (Binaries %v)", p.Namespace, p.Pod, keys(opt.Binaries))
	}
	return p
}

// findPod waits for a Running, not terminating kwok Pod of the Deployment (by its selector).
func (p *runningPod) findPod(dep Doc, wait time.Duration) map[string]any {
	t := p.t
	sel, _ := dep.Obj["spec"].(map[string]any)["selector"].(map[string]any)["matchLabels"].(map[string]any)
	var parts []string
	for k, v := range sel {
		parts = append(parts, fmt.Sprintf("%s=%v", k, v))
	}
	sort.Strings(parts)
	deadline := time.Now().Add(wait)
	for {
		out, err := kubectl(t, "get", "pods", "-n", dep.Namespace, "-l", strings.Join(parts, ","), "-o", "json")
		if err == nil {
			var l struct{ Items []map[string]any }
			if json.Unmarshal(out, &l) == nil {
				sort.Slice(l.Items, func(i, j int) bool { return str(l.Items[i], "metadata", "name") < str(l.Items[j], "metadata", "name") })
				for _, it := range l.Items {
					if str(it, "status", "phase") == "Running" && str(it, "metadata", "deletionTimestamp") == "" {
						return it
					}
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Deployment %s/%s: no Running pod with labels %s after %v", dep.Namespace, dep.Name, strings.Join(parts, ","), wait)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// token is a TokenRequest for the Pod's ServiceAccount, bound to the Pod.
func (p *runningPod) token(audience string, seconds int) string {
	args := []string{"create", "token", p.ServiceAccount, "-n", p.Namespace, "--bound-object-kind", "Pod",
		"--bound-object-name", p.Pod, "--bound-object-uid", p.UID, "--duration", strconv.Itoa(seconds) + "s"}
	if audience != "" {
		args = append(args, "--audience", audience)
	}
	return strings.TrimSpace(string(mustKubectl(p.t, args...)))
}

// rootCA is the kube-root-ca.crt ConfigMap KCM publishes in every namespace (what the kubelet
// projects as ca.crt).
func (p *runningPod) rootCA(wait time.Duration) string {
	v, ok := p.objectKey("configmap", "kube-root-ca.crt", "ca.crt", false, wait)
	if !ok {
		p.t.Fatalf("namespace %s has no kube-root-ca.crt ConfigMap", p.Namespace)
	}
	return v
}

// objectKey reads one key of a live Secret or ConfigMap (decoded), waiting for it unless optional.
func (p *runningPod) objectKey(kind, name, key string, optional bool, wait time.Duration) (string, bool) {
	data, ok := p.objectData(kind, name, optional, wait)
	if !ok {
		return "", false
	}
	v, ok := data[key]
	if !ok && !optional {
		p.t.Fatalf("pod %s/%s: %s %s has no key %q (the kubelet would not start the container)", p.Namespace, p.Pod, kind, name, key)
	}
	return v, ok
}

func (p *runningPod) objectData(kind, name string, optional bool, wait time.Duration) (map[string]string, bool) {
	deadline := time.Now().Add(wait)
	for {
		out, err := kubectl(p.t, "get", kind, name, "-n", p.Namespace, "-o", "json", "--ignore-not-found")
		if err == nil && len(strings.TrimSpace(string(out))) > 0 {
			var o struct {
				Data       map[string]string `json:"data"`
				BinaryData map[string]string `json:"binaryData"`
			}
			must(p.t, json.Unmarshal(out, &o))
			res := map[string]string{}
			for k, v := range o.Data {
				if kind == "secret" {
					b, err := base64.StdEncoding.DecodeString(v)
					must(p.t, err)
					v = string(b)
				}
				res[k] = v
			}
			for k, v := range o.BinaryData {
				b, err := base64.StdEncoding.DecodeString(v)
				must(p.t, err)
				res[k] = string(b)
			}
			return res, true
		}
		if optional {
			return nil, false
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("pod %s/%s: %s %s not found after %v (the kubelet would not start the container)", p.Namespace, p.Pod, kind, name, wait)
		}
		time.Sleep(time.Second)
	}
}

// ---------------------------------------------------------------- containers

// start resolves one container and starts it; nil when no binary stands for it.
func (p *runningPod) start(c map[string]any, vols map[string]map[string]any, opt podOptions, init bool) *podProc {
	t := p.t
	name := str(c, "name")
	command := strs(c["command"])
	args := strs(c["args"])
	var bin string
	if len(command) > 0 {
		bin = opt.Binaries[path.Base(command[0])]
		args = append(command[1:], args...)
	} else {
		bin = opt.Binaries[imageName(str(c, "image"))]
	}
	if bin == "" {
		p.skipped = append(p.skipped, name)
		t.Logf("pod %s/%s: container %s (%s) not run: no binary built for it", p.Namespace, p.Pod, name, str(c, "image"))
		return nil
	}

	for _, m := range list(c["volumeMounts"]) {
		p.materialise(m.(map[string]any), vols, opt.Wait)
	}
	env := p.env(c, opt.Wait)
	vars := map[string]string{}
	for _, kv := range env {
		vars[kv[0]] = kv[1]
	}
	for i := range args {
		args[i] = expandVars(args[i], vars)
	}
	wd := "/"
	if w := str(c, "workingDir"); w != "" {
		p.checkOwnPath(w)
		must(t, os.MkdirAll(p.inRoot(w), 0o755))
		wd = w
	}
	// the kubelet always sets the API server's Service variables (rest.InClusterConfig reads them:
	// library-go's controllercmd, lws-operator's, has no other way in); here they name the
	// address the API server is forwarded to inside the pod
	host, port, _ := net.SplitHostPort(p.apiAddr)
	procEnv := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root",
		"HOSTNAME=" + p.Pod, "KUBECONFIG=/var/run/olm-cmp-e2e/kubeconfig",
		"KUBERNETES_SERVICE_HOST=" + host, "KUBERNETES_SERVICE_PORT=" + port, "KUBERNETES_SERVICE_PORT_HTTPS=" + port,
		"KUBERNETES_PORT=tcp://" + p.apiAddr}
	for _, kv := range env {
		procEnv = append(procEnv, kv[0]+"="+kv[1])
	}
	inBin := path.Join("/.e2e-bin", p.binDir(filepath.Dir(bin)), filepath.Base(bin))

	logPath := filepath.Join(p.root, "logs", name+".log")
	lf, err := os.Create(logPath)
	must(t, err)
	fmt.Fprintf(lf, "# %s %s\n", inBin, strings.Join(args, " "))
	// join the pod's network + mount namespaces (held by the pause process), chroot, cd, exec;
	// env -C, not a shell: dash drops variables whose names are not shell identifiers, which
	// the kubelet passes (dynatrace-operator's `modules.json`)
	cmd := exec.Command("nsenter", append([]string{"-t", strconv.Itoa(p.procs0()), "-n", "-m", "--",
		"chroot", p.inRoot("/"), "/usr/bin/env", "-C", wd, inBin}, args...)...)
	cmd.Env = procEnv
	cmd.Stdout, cmd.Stderr = lf, lf
	// killed with the test process even when it dies without cleanup
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	must(t, cmd.Start())
	pr := &podProc{name: name, cmd: cmd, done: make(chan struct{}), log: lf}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.exitErr[name] = err
		if !init && !p.stopping {
			t.Logf("pod %s/%s: container %s exited (%v)", p.Namespace, p.Pod, name, err)
		}
		p.mu.Unlock()
		close(pr.done)
	}()
	if run := os.Getenv("E2E_RUN"); run != "" {
		// down.sh stops it if the test binary dies (its command line contains the binary's name)
		f := filepath.Join(run, "pids", filepath.Base(bin)+".pid")
		if _, err := os.Stat(f); err != nil {
			_ = os.WriteFile(f, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
		}
	}
	p.procs = append(p.procs, pr)
	p.logs = append(p.logs, logPath)
	kind := "container"
	if init {
		kind = "init container"
	}
	t.Logf("pod %s/%s (SA %s): %s %s: %s %s", p.Namespace, p.Pod, p.ServiceAccount, kind, name, filepath.Base(bin), strings.Join(args, " "))
	return pr
}

func (p *runningPod) exit(name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitErr[name]
}

// Exited reports the containers that have stopped (with their error) while not being stopped.
func (p *runningPod) Exited() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, pr := range p.procs {
		select {
		case <-pr.done:
			if pr.cmd != nil && !p.isInit(pr) {
				out = append(out, fmt.Sprintf("%s (%v)", pr.name, p.exitErr[pr.name]))
			}
		default:
		}
	}
	return out
}

func (p *runningPod) isInit(pr *podProc) bool {
	for _, c := range list(p.pod["spec"].(map[string]any)["initContainers"]) {
		if str(c.(map[string]any), "name") == pr.name {
			return true
		}
	}
	return false
}

// env resolves envFrom then env (later wins), each valueFrom the way the kubelet does.
func (p *runningPod) env(c map[string]any, wait time.Duration) [][2]string {
	t := p.t
	var out [][2]string
	idx := map[string]int{}
	set := func(k, v string) {
		if i, ok := idx[k]; ok {
			out[i][1] = v
			return
		}
		idx[k] = len(out)
		out = append(out, [2]string{k, v})
	}
	for _, ef := range list(c["envFrom"]) {
		e := ef.(map[string]any)
		prefix := str(e, "prefix")
		for kind, field := range map[string]string{"configmap": "configMapRef", "secret": "secretRef"} {
			ref, ok := e[field].(map[string]any)
			if !ok {
				continue
			}
			opt, _ := ref["optional"].(bool)
			data, _ := p.objectData(kind, str(ref, "name"), opt, wait)
			for _, k := range sortStrings(keys(data)) {
				set(prefix+k, data[k])
			}
		}
	}
	vars := map[string]string{}
	for _, ev := range list(c["env"]) {
		e := ev.(map[string]any)
		name := str(e, "name")
		vf, ok := e["valueFrom"].(map[string]any)
		if !ok {
			for _, kv := range out {
				vars[kv[0]] = kv[1]
			}
			set(name, expandVars(str(e, "value"), vars))
			continue
		}
		switch {
		case vf["fieldRef"] != nil:
			set(name, p.field(str(vf, "fieldRef", "fieldPath")))
		case vf["resourceFieldRef"] != nil:
			set(name, p.resourceField(c, vf["resourceFieldRef"].(map[string]any)))
		case vf["secretKeyRef"] != nil || vf["configMapKeyRef"] != nil:
			kind, ref := "secret", vf["secretKeyRef"]
			if ref == nil {
				kind, ref = "configmap", vf["configMapKeyRef"]
			}
			r := ref.(map[string]any)
			opt, _ := r["optional"].(bool)
			if v, ok := p.objectKey(kind, str(r, "name"), str(r, "key"), opt, wait); ok {
				set(name, v)
			}
		default:
			t.Fatalf("pod %s/%s: env %s: valueFrom %v is not emulated", p.Namespace, p.Pod, name, vf)
		}
	}
	return out
}

var fieldIndex = regexp.MustCompile(`^metadata\.(labels|annotations)\['([^']+)'\]$`)

// field is a downward-API fieldRef of the live kwok Pod.
func (p *runningPod) field(fp string) string {
	if m := fieldIndex.FindStringSubmatch(fp); m != nil {
		return str(p.pod, "metadata", m[1], m[2])
	}
	switch fp {
	case "metadata.name", "metadata.namespace", "metadata.uid":
		return str(p.pod, "metadata", strings.TrimPrefix(fp, "metadata."))
	case "spec.nodeName", "spec.serviceAccountName":
		if fp == "spec.serviceAccountName" {
			return p.ServiceAccount
		}
		return str(p.pod, "spec", "nodeName")
	case "status.podIP", "status.hostIP":
		return str(p.pod, "status", strings.TrimPrefix(fp, "status."))
	case "status.podIPs", "status.hostIPs":
		var ips []string
		for _, ip := range list(p.pod["status"].(map[string]any)[strings.TrimPrefix(fp, "status.")]) {
			ips = append(ips, str(ip.(map[string]any), "ip"))
		}
		return strings.Join(ips, ",")
	case "metadata.labels", "metadata.annotations":
		m, _ := p.pod["metadata"].(map[string]any)[strings.TrimPrefix(fp, "metadata.")].(map[string]any)
		var lines []string
		for _, k := range sortStrings(keys(m)) {
			lines = append(lines, fmt.Sprintf("%s=%q", k, m[k]))
		}
		return strings.Join(lines, "\n")
	}
	p.t.Fatalf("pod %s/%s: fieldRef %q is not emulated", p.Namespace, p.Pod, fp)
	return ""
}

// resourceField is a resourceFieldRef: the container's limit (requests.* for requests), or the
// node's allocatable when no limit is set; divided by the divisor and rounded up.
func (p *runningPod) resourceField(c map[string]any, ref map[string]any) string {
	res := str(ref, "resource")
	if cn := str(ref, "containerName"); cn != "" && cn != str(c, "name") {
		for _, o := range append(list(p.pod["spec"].(map[string]any)["containers"]), list(p.pod["spec"].(map[string]any)["initContainers"])...) {
			if str(o.(map[string]any), "name") == cn {
				c = o.(map[string]any)
			}
		}
	}
	kind, what, _ := strings.Cut(res, ".")
	q := str(c, "resources", kind, what)
	if q == "" {
		q = str(p.node, "status", "allocatable", what)
	}
	div := 1.0
	if d, ok := ref["divisor"]; ok {
		div = quantity(p.t, fmt.Sprint(d))
	}
	if div == 0 { // the API server defaults the divisor to "0", which means 1
		div = 1
	}
	v := math.Ceil(quantity(p.t, q) / div)
	return strconv.FormatInt(int64(v), 10)
}

// quantity parses a Kubernetes quantity (the forms resources use).
func quantity(t *testing.T, q string) float64 {
	suffixes := []struct {
		s string
		m float64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"m", 1e-3}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}}
	for _, s := range suffixes {
		if strings.HasSuffix(q, s.s) {
			f, err := strconv.ParseFloat(strings.TrimSuffix(q, s.s), 64)
			if err != nil {
				t.Fatalf("quantity %q: %v", q, err)
			}
			return f * s.m
		}
	}
	f, err := strconv.ParseFloat(q, 64)
	if err != nil {
		t.Fatalf("quantity %q: %v", q, err)
	}
	return f
}

var varRef = regexp.MustCompile(`\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)`)

// expandVars is the kubelet's $(VAR) expansion: defined variables are replaced, undefined ones
// stay as written, $$ is a literal $.
func expandVars(s string, vars map[string]string) string {
	return varRef.ReplaceAllStringFunc(s, func(m string) string {
		if m == "$$" {
			return "$"
		}
		if v, ok := vars[m[2:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// ---------------------------------------------------------------- volumes

// materialise writes one volume mount's content at its mount path inside the pod's root.
func (p *runningPod) materialise(m map[string]any, vols map[string]map[string]any, wait time.Duration) {
	t := p.t
	mp := path.Clean(str(m, "mountPath"))
	p.checkOwnPath(mp)
	host := p.inRoot(mp)
	v, ok := vols[str(m, "name")]
	if !ok {
		t.Fatalf("pod %s/%s: volumeMount %s names no volume", p.Namespace, p.Pod, str(m, "name"))
	}
	files := p.volumeFiles(v, wait) // relative path -> content; nil for emptyDir
	if sp := str(m, "subPath"); sp != "" {
		if files == nil { // a directory of an emptyDir
			must(t, os.MkdirAll(host, 0o777))
			return
		}
		content, ok := files[sp]
		if !ok {
			t.Fatalf("pod %s/%s: subPath %s not in volume %s", p.Namespace, p.Pod, sp, str(m, "name"))
		}
		must(t, os.MkdirAll(filepath.Dir(host), 0o755))
		must(t, os.WriteFile(host, []byte(content), 0o644))
		return
	}
	must(t, os.MkdirAll(host, 0o777))
	for rel, content := range files {
		f := filepath.Join(host, filepath.FromSlash(rel))
		must(t, os.MkdirAll(filepath.Dir(f), 0o755))
		must(t, os.WriteFile(f, []byte(content), 0o644))
	}
}

// checkOwnPath refuses a path inside a directory the pod's root shares with the host.
func (p *runningPod) checkOwnPath(pth string) {
	rel := strings.TrimPrefix(path.Clean(pth), "/")
	for _, h := range hostBound {
		if rel == h || strings.HasPrefix(rel, h+"/") {
			p.t.Fatalf("pod %s/%s: path %s is inside /%s, which the pod runner shares with the host (not emulated)", p.Namespace, p.Pod, pth, h)
		}
	}
}

// volumeFiles is the content of a volume as relative path -> bytes (nil for emptyDir).
func (p *runningPod) volumeFiles(v map[string]any, wait time.Duration) map[string]string {
	t := p.t
	files := map[string]string{}
	fromObject := func(kind string, src map[string]any) {
		name := str(src, "name")
		if kind == "secret" && name == "" {
			name = str(src, "secretName")
		}
		opt, _ := src["optional"].(bool)
		data, ok := p.objectData(kind, name, opt, wait)
		if !ok {
			return
		}
		items := list(src["items"])
		if len(items) == 0 {
			for k, val := range data {
				files[k] = val
			}
			return
		}
		for _, it := range items {
			im := it.(map[string]any)
			val, ok := data[str(im, "key")]
			if !ok && !opt {
				t.Fatalf("pod %s/%s: %s %s has no key %q", p.Namespace, p.Pod, kind, name, str(im, "key"))
			}
			files[str(im, "path")] = val
		}
	}
	downward := func(src map[string]any) {
		for _, it := range list(src["items"]) {
			im := it.(map[string]any)
			if fr, ok := im["fieldRef"].(map[string]any); ok {
				files[str(im, "path")] = p.field(str(fr, "fieldPath"))
			} else {
				t.Fatalf("pod %s/%s: downwardAPI item %v is not emulated", p.Namespace, p.Pod, im)
			}
		}
	}
	switch {
	case v["emptyDir"] != nil:
		return nil
	case v["secret"] != nil:
		fromObject("secret", v["secret"].(map[string]any))
	case v["configMap"] != nil:
		fromObject("configmap", v["configMap"].(map[string]any))
	case v["downwardAPI"] != nil:
		downward(v["downwardAPI"].(map[string]any))
	case v["projected"] != nil:
		for _, s := range list(str2(v["projected"], "sources")) {
			sm := s.(map[string]any)
			switch {
			case sm["secret"] != nil:
				fromObject("secret", sm["secret"].(map[string]any))
			case sm["configMap"] != nil:
				fromObject("configmap", sm["configMap"].(map[string]any))
			case sm["downwardAPI"] != nil:
				downward(sm["downwardAPI"].(map[string]any))
			case sm["serviceAccountToken"] != nil:
				st := sm["serviceAccountToken"].(map[string]any)
				secs := 3600
				if e, ok := st["expirationSeconds"].(float64); ok {
					secs = int(e)
				}
				files[str(st, "path")] = p.token(str(st, "audience"), secs)
			default:
				t.Fatalf("pod %s/%s: projected source %v is not emulated", p.Namespace, p.Pod, sm)
			}
		}
	default:
		t.Fatalf("pod %s/%s: volume %s: only secret, configMap, projected, downwardAPI and emptyDir are emulated", p.Namespace, p.Pod, str(v, "name"))
	}
	return files
}

// ---------------------------------------------------------------- network namespace

// startNetns starts the pod's "pause" process: it holds a new network namespace (loopback up)
// and a new mount namespace with the pod's root filesystem assembled (host directories bound in,
// the binaries' directories at /.e2e-bin/N); every container joins both with nsenter and
// chroots into the root. The test process forwards 127.0.0.1:<apiserver port> inside it to the
// API server.
func (p *runningPod) startNetns(opt podOptions) {
	t := p.t
	var binds []string // host path, path inside the root
	for _, h := range hostBound {
		fi, err := os.Lstat("/" + h)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink("/" + h)
			must(t, err)
			must(t, os.Symlink(target, p.inRoot(h)))
			continue
		case fi.IsDir():
			must(t, os.MkdirAll(p.inRoot(h), 0o755))
		default:
			must(t, os.WriteFile(p.inRoot(h), nil, 0o644))
		}
		binds = append(binds, "/"+h, p.inRoot(h))
	}
	for _, b := range sortStrings(keys(opt.Binaries)) {
		dir := filepath.Dir(opt.Binaries[b])
		in := p.inRoot(path.Join("/.e2e-bin", p.binDir(dir)))
		if _, err := os.Stat(in); err == nil {
			continue
		}
		must(t, os.MkdirAll(in, 0o755))
		binds = append(binds, dir, in)
	}
	lf, err := os.Create(filepath.Join(p.root, "logs", "pause.log"))
	must(t, err)
	script := `set -e
ip link set lo up
while [ $# -gt 0 ]; do mount --rbind "$1" "$2"; shift 2; done
echo ready
exec sleep 86400`
	cmd := exec.Command("unshare", append([]string{"-n", "-m", "--propagation", "private", "--", "/bin/sh", "-c", script, "sh"}, binds...)...)
	cmd.Stdout, cmd.Stderr = lf, lf
	// killed with the test process even when it dies without cleanup
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	must(t, cmd.Start())
	pr := &podProc{name: "pause", cmd: cmd, done: make(chan struct{}), log: lf}
	go func() { _ = cmd.Wait(); close(pr.done) }()
	p.procs = append([]*podProc{pr}, p.procs...)
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(lf.Name())
		if strings.Contains(string(b), "ready") {
			break
		}
		select {
		case <-pr.done:
			t.Fatalf("pod %s/%s: cannot make its network namespace (unshare -n -m): %s", p.Namespace, p.Pod, b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s/%s: network namespace not ready: %s", p.Namespace, p.Pod, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.netns, err = os.Open(fmt.Sprintf("/proc/%d/ns/net", cmd.Process.Pid))
	must(t, err)
	// the API server, at the same address inside
	ln := p.listenInside(p.apiAddr)
	go forward(ln, func() (net.Conn, error) { return net.Dial("tcp", p.apiAddr) })
}

func (p *runningPod) procs0() int { return p.procs[0].cmd.Process.Pid }

// binDir names a host directory of binaries inside /.e2e-bin (a stable short hash).
func (p *runningPod) binDir(dir string) string {
	h := fnv.New32a()
	h.Write([]byte(dir))
	return fmt.Sprintf("%08x", h.Sum32())
}

// inNetns runs f on a thread switched into the pod's network namespace.
func (p *runningPod) inNetns(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // not unlocked: the thread dies with the goroutine if switching back fails
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			errc <- err
			return
		}
		defer self.Close()
		if err := setns(p.netns); err != nil {
			errc <- err
			return
		}
		ferr := f()
		if err := setns(self); err != nil {
			errc <- err
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

func setns(f *os.File) error {
	return unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)
}

func (p *runningPod) listenInside(addr string) net.Listener {
	var ln net.Listener
	must(p.t, p.inNetns(func() (err error) { ln, err = net.Listen("tcp", addr); return }))
	p.listeners = append(p.listeners, ln)
	return ln
}

// Listen listens on addr inside the pod's network namespace (a stand-in for a server the pod
// would reach, such as a Helm repository, served by the test process on the pod's loopback).
func (p *runningPod) Listen(addr string) net.Listener { return p.listenInside(addr) }

// Dial connects to 127.0.0.1:port inside the pod's network namespace.
func (p *runningPod) Dial(port int) (net.Conn, error) {
	var c net.Conn
	err := p.inNetns(func() (err error) {
		c, err = net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 5*time.Second)
		return
	})
	return c, err
}

// Forward listens on addr in the test's network namespace (a Service's ClusterIP:port once that
// address is on the loopback, say) and forwards each connection to the pod's 127.0.0.1:port.
func (p *runningPod) Forward(addr string, port int) {
	ln, err := net.Listen("tcp", addr)
	must(p.t, err)
	p.listeners = append(p.listeners, ln)
	go forward(ln, func() (net.Conn, error) { return p.Dial(port) })
}

func forward(ln net.Listener, dial func() (net.Conn, error)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			u, err := dial()
			if err != nil {
				return
			}
			defer u.Close()
			go func() { _, _ = io.Copy(u, c); u.(*net.TCPConn).CloseWrite() }()
			_, _ = io.Copy(c, u)
		}()
	}
}

// ---------------------------------------------------------------- logs, stop

// Logs is every container's output so far.
func (p *runningPod) Logs() string {
	var b strings.Builder
	for _, l := range p.logs {
		data, _ := os.ReadFile(l)
		fmt.Fprintf(&b, "==> %s <==\n%s\n", filepath.Base(l), data)
	}
	return b.String()
}

// LogFiles are the containers' log files.
func (p *runningPod) LogFiles() []string { return append([]string(nil), p.logs...) }

var denial = regexp.MustCompile(`(?i)forbidden`)

// Denials are the log lines that report an authorization failure (the API server's
// "... is forbidden: User \"system:serviceaccount:NS:SA\" cannot VERB resource \"R\" ...").
func (p *runningPod) Denials() []string {
	var out []string
	for _, l := range p.logs {
		f, err := os.Open(l)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if denial.MatchString(sc.Text()) {
				out = append(out, filepath.Base(l)+": "+sc.Text())
			}
		}
		f.Close()
	}
	return out
}

// Stop stops every container (SIGTERM, SIGKILL after 10 s) and the namespace holder.
func (p *runningPod) Stop() {
	p.stopOnce.Do(func() {
		p.mu.Lock()
		p.stopping = true
		p.mu.Unlock()
		for _, ln := range p.listeners {
			ln.Close()
		}
		for i := len(p.procs) - 1; i >= 0; i-- {
			pr := p.procs[i]
			_ = syscall.Kill(-pr.cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-pr.done:
			case <-time.After(10 * time.Second):
				_ = syscall.Kill(-pr.cmd.Process.Pid, syscall.SIGKILL)
				<-pr.done
			}
			pr.log.Close()
		}
		if p.netns != nil {
			p.netns.Close()
		}
		p.releasePod()
		if p.t.Failed() {
			for _, l := range p.logs {
				p.t.Logf("%s (tail):\n%s", l, tail(l, 40))
			}
		}
	})
}

// podFinalizer holds a run Pod's object until its processes have stopped, as the kubelet does: a
// deleted Pod keeps its object (deletionTimestamp set) until the kubelet reports its containers
// gone, and only then does the token bound to it stop working. kwok would remove it at once, and an
// operator stopping on its rolled-out Pod could no longer release its leader lease (its
// successor then waits for the lease to expire).
const podFinalizer = "e2e.olm-cmp.dev/pod-runner"

func (p *runningPod) holdPod() {
	patch := fmt.Sprintf(`{"metadata":{"finalizers":[%q]}}`, podFinalizer)
	if _, err := kubectl(p.t, "patch", "pod", p.Pod, "-n", p.Namespace, "--type=merge", "-p", patch); err != nil {
		p.t.Fatalf("pod %s/%s: cannot hold it for its processes: %v", p.Namespace, p.Pod, err)
	}
}

func (p *runningPod) releasePod() {
	if p.Pod == "" {
		return
	}
	_, _ = kubectl(p.t, "patch", "pod", p.Pod, "-n", p.Namespace, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
}

// Terminating reports whether the Pod is being deleted (the kubelet's signal to stop it) or gone.
func (p *runningPod) Terminating() bool {
	o := getJSON(p.t, "pod", p.Pod, "-n", p.Namespace)
	return o == nil || str(o, "metadata", "deletionTimestamp") != ""
}

// ---------------------------------------------------------------- small helpers

func list(v any) []any { l, _ := v.([]any); return l }

func str2(v any, k string) any {
	m, _ := v.(map[string]any)
	return m[k]
}

func strs(v any) []string {
	var out []string
	for _, x := range list(v) {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// imageName is the last path element of an image reference, without tag or digest.
func imageName(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	base := path.Base(ref)
	if i := strings.Index(base, ":"); i >= 0 {
		base = base[:i]
	}
	return base
}
