package deploy_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/olm-cmp/olm-cmp/hack/sidecar"
)

// TestDeployedSidecarServes runs olm-cmp as the kustomize component and the
// Helm values deploy it, through hack/sidecar (the runner the Argo CD e2e
// uses too): chrooted in the root filesystem of the image `make image`
// builds (TestOCIImageMatchesDockerfile holds it equal to the
// Dockerfile's), in its own mount namespace with the root read-only, as the
// user the securityContext names, with the container's args (after the
// image's entrypoint, as Kubernetes does) and env, and its volumes as the
// kubelet mounts them (the default example, the Helm values, and the
// tenancy example with its optional per-project Secret absent). Each
// renders examples/demo through its plugin socket, as Argo CD asks it (so
// olm-cmp runs olm-cmp-check as installed, where it checks the demo's CRD).
// Without
// the optional registry Secret (an empty
// directory at /etc/olm-cmp/registry) it must serve, saying once that it
// pulls without credentials; with it, it serves quietly. The process is
// checked as the kernel sees it: uid and gid 999, no_new_privs, / read-only
// and /tmp writable. The one change to the args is --http-addr's port:
// :8080 on this shared machine becomes a free loopback port (the sidecar
// shares the host's network).
func TestDeployedSidecarServes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("runs the sidecar chrooted as uid 999 in a mount namespace, as its image runs: needs root")
	}
	cf, err := ociImage(t).ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	creds := `{"auths":{"registry.example.com":{"auth":"dXNlcjpwYXNz"}}}`
	for _, dep := range []struct {
		name string
		get  func() (*sidecar.Spec, error)
	}{
		{"kustomize", func() (*sidecar.Spec, error) { return sidecar.FromKustomize(".", "argocd") }},
		{"helm", func() (*sidecar.Spec, error) { return sidecar.FromHelmValues(".") }},
		// the tenancy component: its policy ConfigMap as shipped, each project's
		// credentials Secret (olm-cmp-tenant-registry) optional and absent
		{"kustomize-tenancy", func() (*sidecar.Spec, error) { return sidecar.FromKustomize(".", "argocd-tenancy") }},
	} {
		for _, secret := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/secret=%v", dep.name, secret), func(t *testing.T) {
				s, err := dep.get()
				if err != nil {
					t.Fatal(err)
				}
				secrets := map[string]map[string]string{}
				if secret {
					secrets["olm-cmp-registry"] = map[string]string{".dockerconfigjson": creds}
				}
				root := ociRoot(t)
				p, err := sidecar.Prepare(s, sidecar.Options{Root: root, Volumes: t.TempDir(), Image: cf.Config,
					Secrets: secrets, HTTPAddr: freeLoopback(t)})
				if err != nil {
					t.Fatal(err)
				}
				project := "default"
				if strings.HasSuffix(dep.name, "-tenancy") {
					project = "platform" // the shipped policy's project that may render directory bundles
				}
				logs := runSidecar(t, p, func(t *testing.T) { checkDemoRendered(t, p, project) })
				note := strings.Count(logs, "/etc/olm-cmp/registry/config.json does not exist: pulling without registry credentials until it does")
				if secret && note != 0 || !secret && note != 1 {
					t.Errorf("secret=%v: the missing-credentials note appears %d times; logs:\n%s", secret, note, logs)
				}
				if strings.HasSuffix(dep.name, "-tenancy") {
					// serve refuses to start on a policy it cannot load, so running
					// means the shipped policy, at the path its env names, loaded
					if b, err := os.ReadFile(p.HostPath("/etc/olm-cmp/tenancy/tenancy.yaml")); err != nil || !strings.Contains(string(b), "kind: TenancyPolicy") {
						t.Errorf("the olm-cmp-tenancy ConfigMap's policy is not in the volume: %.80q, %v", b, err)
					}
				}
				if secret {
					if b, err := os.ReadFile(p.HostPath("/etc/olm-cmp/registry/config.json")); err != nil || string(b) != creds {
						t.Errorf("the Secret's .dockerconfigjson is not config.json in the volume: %q, %v", b, err)
					}
				}
			})
		}
	}
}

// runSidecar starts the prepared container until it is ready (its
// readiness port answers /readyz, its plugin socket exists), checks the
// process as the kernel runs it, runs while (requests, as Argo CD makes
// them), and returns its logs after stopping it as the kubelet does
// (SIGTERM).
func runSidecar(t *testing.T, p *sidecar.Pod, while func(t *testing.T)) string {
	t.Helper()
	logf, err := os.CreateTemp("", "olm-cmp-sidecar-log")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(logf.Name())
	cmd := exec.Command(p.Argv[0], p.Argv[1:]...)
	cmd.Env, cmd.Stdout, cmd.Stderr = p.Env, logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := false
	t.Cleanup(func() { // a check that stopped the test early (t.Fatal) leaves no sidecar behind
		if !stopped {
			cmd.Process.Kill()
			<-done
		}
	})
	readLogs := func() string { b, _ := os.ReadFile(logf.Name()); return string(b) }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.WaitReady(ctx, done); err != nil {
		cmd.Process.Kill()
		stopped = true
		t.Fatalf("%v; logs:\n%s", err, readLogs())
	}
	checkProcess(t, cmd.Process.Pid)
	while(t)
	cmd.Process.Signal(syscall.SIGTERM)
	stopped = true
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

// checkProcess: the sidecar's process is olm-cmp (the wrapper exec'd it),
// runs as 999:999 with no capabilities and no_new_privs, and sees / mounted
// read-only and /tmp (its emptyDir) read-write, as the container spec says.
func checkProcess(t *testing.T, pid int) {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{}
	for _, l := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(l, ":")
		fields[k] = strings.Join(strings.Fields(v), " ")
	}
	for k, want := range map[string]string{"Name": "olm-cmp", "Uid": "999 999 999 999", "Gid": "999 999 999 999",
		"CapEff": "0000000000000000", "CapPrm": "0000000000000000", "NoNewPrivs": "1"} {
		if fields[k] != want {
			t.Errorf("sidecar process %s: %q, want %q", k, fields[k], want)
		}
	}
	mi, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
	if err != nil {
		t.Fatal(err)
	}
	opts := map[string]string{} // mount point as the process sees it -> per-mount options (the last mount there wins)
	for _, l := range strings.Split(string(mi), "\n") {
		f := strings.Fields(l)
		if len(f) > 5 {
			opts[f[4]] = f[5]
		}
	}
	for mp, want := range map[string]string{"/": "ro", "/tmp": "rw", "/var/cache/olm-cmp": "rw", "/home/argocd/cmp-server/plugins": "rw",
		"/etc/olm-cmp/trust": "ro", "/etc/olm-cmp/registry": "ro"} {
		if o := strings.Split(opts[mp], ","); o[0] != want {
			t.Errorf("sidecar sees %s mounted %q, want %s", mp, opts[mp], want)
		}
	}
}

// ociRoot extracts the image's root filesystem into a new directory.
func ociRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	if err := sidecar.Extract(ociImage(t), root); err != nil {
		t.Fatal(err)
	}
	return root
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
