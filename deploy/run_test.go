package deploy_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sidecar is the olm-cmp container of a deployment, with what the kubelet
// needs to run it: its pod's volumes and the ConfigMaps the deployment
// ships.
type sidecar struct {
	container  map[string]any
	volumes    []any
	configMaps map[string]map[string]any // name -> data
}

// kustomizeSidecar is the container `kustomize build deploy/kustomize/examples/argocd` adds.
func kustomizeSidecar(t *testing.T) sidecar {
	res := renderExample(t, "argocd")
	s := sidecar{configMaps: map[string]map[string]any{}}
	for _, r := range res.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case r.GetKind() == "ConfigMap":
			data, _ := m["data"].(map[string]any)
			s.configMaps[r.GetName()] = data
		case r.GetKind() == "Deployment" && r.GetName() == "argocd-repo-server":
			ps := podSpec(t, m)
			s.container = byName(t, ps["containers"], "olm-cmp")
			s.volumes, _ = ps["volumes"].([]any)
		}
	}
	if s.container == nil {
		t.Fatal("kustomize example: no olm-cmp container")
	}
	return s
}

// helmSidecar is the container deploy/helm/values.yaml adds, with the
// chart's own `plugins` emptyDir.
func helmSidecar(t *testing.T) sidecar {
	values := readHelmValues(t)
	s := sidecar{configMaps: map[string]map[string]any{}}
	s.container = byName(t, dig(t, values, "repoServer", "extraContainers"), "olm-cmp")
	vols, _ := dig(t, values, "repoServer", "volumes").([]any)
	s.volumes = append(append([]any{}, vols...), map[string]any{"name": "plugins", "emptyDir": map[string]any{}})
	for _, o := range values["extraObjects"].([]any) {
		om := o.(map[string]any)
		if om["kind"] == "ConfigMap" {
			s.configMaps[dig(t, om, "metadata", "name").(string)], _ = om["data"].(map[string]any)
		}
	}
	if s.container == nil {
		t.Fatal("Helm values: no olm-cmp container")
	}
	return s
}

// writeAtomic lays files out in dir as the kubelet's atomic writer does for
// ConfigMap and Secret volumes: the files live in a timestamped directory,
// ..data links to it, and each name links through ..data.
func writeAtomic(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	ts := "..2026_01_01_00_00_00.000000001"
	if err := os.MkdirAll(filepath.Join(dir, ts), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, ts, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(ts, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// mountVolumes creates, under root, what the kubelet mounts at each of the
// container's volumeMounts: an emptyDir as an empty directory anyone may
// write to, a ConfigMap's data as files, a Secret's items as files, and an
// absent optional Secret as an empty directory. secrets are the Secrets that
// exist (name -> key -> value).
func mountVolumes(t *testing.T, root string, s sidecar, secrets map[string]map[string]string) {
	t.Helper()
	for _, m := range s.container["volumeMounts"].([]any) {
		mm := m.(map[string]any)
		name, path := mm["name"].(string), mm["mountPath"].(string)
		if mm["subPath"] != nil {
			t.Fatalf("volumeMount %s: subPath is not simulated", name)
		}
		v := byName(t, s.volumes, name)
		if v == nil {
			t.Fatalf("volumeMount %s: no such volume", name)
		}
		dir := filepath.Join(root, path)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{}
		switch {
		case v["emptyDir"] != nil:
			if err := os.Chmod(dir, 0o1777); err != nil {
				t.Fatal(err)
			}
			continue
		case v["configMap"] != nil:
			cm := dig(t, v, "configMap", "name").(string)
			data, ok := s.configMaps[cm]
			if !ok {
				if dig(t, v, "configMap", "optional") != true {
					t.Fatalf("volume %s: ConfigMap %s is not shipped with the deployment and not optional: the pod would never start", name, cm)
				}
				continue
			}
			for k, val := range data {
				files[k] = val.(string)
			}
		case v["secret"] != nil:
			sec := dig(t, v, "secret", "secretName").(string)
			data, ok := secrets[sec]
			if !ok {
				if dig(t, v, "secret", "optional") != true {
					t.Fatalf("volume %s: Secret %s does not exist and is not optional: the pod would never start", name, sec)
				}
				continue // the kubelet mounts an empty directory
			}
			items, _ := dig(t, v, "secret", "items").([]any)
			for _, it := range items {
				im := it.(map[string]any)
				files[im["path"].(string)] = data[im["key"].(string)]
			}
		default:
			t.Fatalf("volume %s: kind not simulated: %v", name, v)
		}
		writeAtomic(t, dir, files)
	}
}

// TestDeployedSidecarServes runs olm-cmp as the kustomize component and the
// Helm values deploy it: chrooted in the root filesystem of the image `make
// image` builds (TestOCIImageMatchesDockerfile holds it equal to the
// Dockerfile's), as the user the securityContext names, with
// the container's args (after the image's entrypoint, as Kubernetes does)
// and env, and its volumes as the kubelet mounts them. Without the optional
// registry Secret (an empty directory at /etc/olm-cmp/registry) it must
// serve, saying once that it pulls without credentials; with it, it serves
// quietly. The one change to the args is --http-addr's port: :8080 on this
// shared machine becomes a free loopback port (the chroot shares the host's
// network).
func TestDeployedSidecarServes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("runs the sidecar chrooted as uid 999, as its image does: needs root")
	}
	img := parseDockerfile(t)
	ociImage(t)
	creds := `{"auths":{"registry.example.com":{"auth":"dXNlcjpwYXNz"}}}`
	for _, dep := range []struct {
		name string
		get  func(*testing.T) sidecar
	}{{"kustomize", kustomizeSidecar}, {"helm", helmSidecar}} {
		for _, secret := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/secret=%v", dep.name, secret), func(t *testing.T) {
				s := dep.get(t)
				root := ociRoot(t)
				secrets := map[string]map[string]string{}
				if secret {
					secrets["olm-cmp-registry"] = map[string]string{".dockerconfigjson": creds}
				}
				mountVolumes(t, root, s, secrets)
				logs := runSidecar(t, root, img, s.container)
				note := strings.Count(logs, "/etc/olm-cmp/registry/config.json does not exist: pulling without registry credentials until it does")
				if secret && note != 0 || !secret && note != 1 {
					t.Errorf("secret=%v: the missing-credentials note appears %d times; logs:\n%s", secret, note, logs)
				}
			})
		}
	}
}

// runSidecar starts the container in root until its readiness probe's
// port answers /readyz and its plugin socket exists, and returns its logs
// after stopping it as the kubelet does (SIGTERM).
func runSidecar(t *testing.T, root string, img *dockerImage, c map[string]any) string {
	t.Helper()
	argv := img.Entrypoint
	if c["command"] != nil {
		argv = toStrings(c["command"])
	}
	args := img.Cmd
	if c["args"] != nil {
		args = toStrings(c["args"])
	}
	port := ""
	if p := byName(t, c["ports"], dig(t, c, "readinessProbe", "httpGet", "port").(string)); p != nil {
		port = fmt.Sprint(toInt(p["containerPort"]))
	}
	addr := freeLoopback(t)
	rewritten := false
	for i, a := range args {
		if a == "--http-addr=:"+port {
			args[i], rewritten = "--http-addr="+addr, true
		}
	}
	if !rewritten {
		t.Fatalf("args %v: no --http-addr=:%s for the readiness probe's port", args, port)
	}
	env := map[string]string{"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	for k, v := range img.Env {
		env[k] = v
	}
	for _, e := range c["env"].([]any) {
		em := e.(map[string]any)
		env[em["name"].(string)] = em["value"].(string)
	}
	var envList []string
	for k, v := range env {
		envList = append(envList, k+"="+v)
	}
	sort.Strings(envList)
	uid := uint32(toInt(dig(t, c, "securityContext", "runAsUser")))
	gid := uint32(toInt(dig(t, c, "securityContext", "runAsGroup")))

	cmd := exec.Command(argv[0], append(argv[1:], args...)...)
	// The kernel finds argv[0] after the chroot: inside the image's root.
	cmd.Env, cmd.Dir = envList, "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	logf, err := os.CreateTemp("", "olm-cmp-sidecar-log")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(logf.Name())
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	readLogs := func() string { b, _ := os.ReadFile(logf.Name()); return string(b) }
	sock := filepath.Join(root, socketDir, "olm-cmp-v1.sock")
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-done:
			t.Fatalf("%s exited: %v; logs:\n%s", strings.Join(append(argv, args...), " "), err, readLogs())
		default:
		}
		ready := false
		if resp, err := http.Get("http://" + addr + "/readyz"); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			ready = resp.StatusCode == http.StatusOK
		}
		if _, err := os.Stat(sock); ready && err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			t.Fatalf("not ready in 30s (socket %s); logs:\n%s", sock, readLogs())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v; logs:\n%s", err, readLogs())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Errorf("did not stop in 30s after SIGTERM")
	}
	return readLogs()
}

func freeLoopback(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
