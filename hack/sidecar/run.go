package sidecar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Options say what the cluster around the pod holds.
type Options struct {
	Root    string    // the image's root filesystem (Extract); bind-mounted, read-only when the spec says so
	Volumes string    // a directory outside Root where the pod's volumes are laid out
	Image   v1.Config // the image's config: entrypoint, cmd, env (the container's command, args and env override them)
	// Secrets are the Secrets that exist in the pod's namespace (name -> key
	// -> value). A volume of a Secret not here is an empty directory when the
	// volume is optional, and an error otherwise (the pod would not start).
	Secrets map[string]map[string]string
	// ConfigMaps are ConfigMaps beyond the ones the deployment ships, or
	// replacing them by name (a user's own trust policy).
	ConfigMaps map[string]map[string]string
	// HTTPAddr, when set, replaces the value of the container's --http-addr
	// (:8080 in the pod's own network) where the runner shares a network.
	HTTPAddr string
}

// Pod is a prepared sidecar: Argv and Env start it (the process that runs
// is olm-cmp itself: the wrapper execs it), and its volumes can change
// under it as the kubelet changes them.
type Pod struct {
	Argv, Env []string
	spec      *Spec
	opt       Options
	volDirs   map[string]string // volume name -> its directory on the host
	mounts    [][2]string       // container mount path -> host directory
	httpAddr  string
	socketDir string
}

// Prepare lays out the container's volumes under opt.Volumes as the
// kubelet does (an emptyDir an empty directory anyone may write to, a
// ConfigMap's or a Secret's keys, or their items, as files through the
// kubelet's ..data link, an absent optional Secret or ConfigMap an empty
// directory) and returns the command that runs the container: in a new
// mount namespace (unshare -m), the image root bind-mounted (read-only when
// securityContext.readOnlyRootFilesystem), /proc and a minimal /dev, each
// volume bound at its mountPath (ConfigMaps, Secrets and readOnly mounts
// read-only), then chroot into the root as securityContext's
// runAsUser:runAsGroup, with no_new_privs unless allowPrivilegeEscalation,
// the image's entrypoint (or the container's command), the container's args
// (or the image's cmd) and exactly the image's env overridden by the
// container's.
func Prepare(s *Spec, opt Options) (*Pod, error) {
	p := &Pod{spec: s, opt: opt, volDirs: map[string]string{}}
	if opt.Root == "" || opt.Volumes == "" {
		return nil, errors.New("sidecar: Options.Root and Options.Volumes are required")
	}
	c := s.Container
	argv := opt.Image.Entrypoint
	if c["command"] != nil {
		argv = Strings(c["command"])
	}
	args := append([]string{}, opt.Image.Cmd...)
	if c["args"] != nil {
		args = Strings(c["args"])
	}
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "--http-addr="):
			if opt.HTTPAddr != "" {
				args[i] = "--http-addr=" + opt.HTTPAddr
			}
			p.httpAddr = strings.TrimPrefix(args[i], "--http-addr=")
		case strings.HasPrefix(a, "--socket-dir="):
			p.socketDir = strings.TrimPrefix(a, "--socket-dir=")
		}
	}
	if strings.HasPrefix(p.httpAddr, ":") {
		p.httpAddr = "127.0.0.1" + p.httpAddr
	}
	if len(argv) == 0 {
		return nil, errors.New("sidecar: neither the container's command nor the image's entrypoint")
	}

	env := map[string]string{}
	for _, e := range opt.Image.Env {
		k, v, _ := strings.Cut(e, "=")
		env[k] = v
	}
	envs, _ := c["env"].([]any)
	for _, e := range envs {
		em, _ := e.(map[string]any)
		if em["valueFrom"] != nil {
			return nil, fmt.Errorf("sidecar: env %v: valueFrom is not simulated", em["name"])
		}
		name, _ := em["name"].(string)
		env[name], _ = em["value"].(string)
	}
	var envList []string
	for k, v := range env {
		envList = append(envList, k+"="+v)
	}
	sort.Strings(envList)

	sc, _ := c["securityContext"].(map[string]any)
	uid, gid := Int(sc["runAsUser"]), Int(sc["runAsGroup"])
	if uid < 0 {
		if _, err := fmt.Sscanf(opt.Image.User, "%d:%d", &uid, &gid); err != nil {
			return nil, fmt.Errorf("sidecar: no runAsUser and image user %q is not uid:gid", opt.Image.User)
		}
	}
	if gid < 0 {
		gid = uid
	}

	if err := p.layOut(); err != nil {
		return nil, err
	}
	root := opt.Root
	script := []string{"set -e", "mount --bind " + q(root) + " " + q(root),
		"mount -t proc proc " + q(root+"/proc"),
		"mount -t tmpfs -o mode=0755,nosuid tmpfs " + q(root+"/dev")}
	for _, d := range []string{"proc", "dev"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return nil, err
		}
	}
	for _, n := range []string{"null", "zero", "random", "urandom"} {
		script = append(script, "touch "+q(root+"/dev/"+n), "mount --bind /dev/"+n+" "+q(root+"/dev/"+n))
	}
	for _, m := range p.mounts {
		in := filepath.Join(root, m[0])
		if err := os.MkdirAll(in, 0o755); err != nil { // the runtime makes mount points
			return nil, err
		}
		script = append(script, "mount --bind "+q(m[1])+" "+q(in))
		if p.readOnly(m[0]) {
			script = append(script, "mount -o remount,bind,ro "+q(in))
		}
	}
	if sc["readOnlyRootFilesystem"] == true {
		script = append(script, "mount -o remount,bind,ro "+q(root))
	}
	run := []string{"exec", "env", "-i"}
	for _, e := range envList {
		run = append(run, q(e))
	}
	if sc["allowPrivilegeEscalation"] == false {
		run = append(run, "setpriv", "--no-new-privs", "--")
	}
	run = append(run, "chroot", fmt.Sprintf("--userspec=%d:%d", uid, gid), fmt.Sprintf("--groups=%d", gid), q(root))
	for _, a := range append(argv, args...) {
		run = append(run, q(a))
	}
	script = append(script, strings.Join(run, " "))
	p.Argv = []string{"unshare", "-m", "--propagation", "private", "--", "/bin/sh", "-c", strings.Join(script, "\n"), Container}
	p.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	return p, nil
}

// readOnly: ConfigMap and Secret volumes are always read-only, as the
// kubelet mounts them; other mounts when the volumeMount says so.
func (p *Pod) readOnly(mountPath string) bool {
	for _, m := range p.spec.Container["volumeMounts"].([]any) {
		mm := m.(map[string]any)
		if mm["mountPath"] != mountPath {
			continue
		}
		v := ByName(p.spec.Volumes, mm["name"].(string))
		return mm["readOnly"] == true || v["configMap"] != nil || v["secret"] != nil
	}
	return false
}

// layOut creates each mounted volume's directory under opt.Volumes.
func (p *Pod) layOut() error {
	mounts, _ := p.spec.Container["volumeMounts"].([]any)
	for _, m := range mounts {
		mm, _ := m.(map[string]any)
		name, _ := mm["name"].(string)
		mountPath, _ := mm["mountPath"].(string)
		if mm["subPath"] != nil {
			return fmt.Errorf("sidecar: volumeMount %s: subPath is not simulated", name)
		}
		v := ByName(p.spec.Volumes, name)
		if v == nil {
			return fmt.Errorf("sidecar: volumeMount %s: no such volume in the pod", name)
		}
		dir := filepath.Join(p.opt.Volumes, name)
		if _, done := p.volDirs[name]; !done {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			p.volDirs[name] = dir
			if v["emptyDir"] != nil {
				if err := os.Chmod(dir, 0o777); err != nil { // as the kubelet makes it
					return err
				}
			} else if err := p.fill(name, v); err != nil {
				return err
			}
		}
		p.mounts = append(p.mounts, [2]string{mountPath, dir})
	}
	return nil
}

// fill writes a ConfigMap or Secret volume's files from what exists now.
func (p *Pod) fill(name string, v map[string]any) error {
	var data map[string]string
	var ok bool
	var kind, obj string
	src := map[string]any{}
	switch {
	case v["configMap"] != nil:
		src, _ = v["configMap"].(map[string]any)
		kind, obj = "ConfigMap", fmt.Sprint(src["name"])
		if data, ok = p.opt.ConfigMaps[obj]; !ok {
			data, ok = p.spec.ConfigMaps[obj]
		}
	case v["secret"] != nil:
		src, _ = v["secret"].(map[string]any)
		kind, obj = "Secret", fmt.Sprint(src["secretName"])
		data, ok = p.opt.Secrets[obj]
	default:
		return fmt.Errorf("sidecar: volume %s: only emptyDir, configMap and secret volumes are simulated: %v", name, v)
	}
	files := map[string]string{}
	if !ok {
		if src["optional"] != true {
			return fmt.Errorf("sidecar: volume %s: %s %s does not exist and is not optional: the pod would never start", name, kind, obj)
		}
		// an absent optional object: the kubelet mounts an empty directory
		return emptyDir(p.volDirs[name])
	} else if items, _ := src["items"].([]any); len(items) > 0 {
		for _, it := range items {
			im, _ := it.(map[string]any)
			key, _ := im["key"].(string)
			val, has := data[key]
			if !has {
				if src["optional"] == true {
					continue
				}
				return fmt.Errorf("sidecar: volume %s: %s %s has no key %s", name, kind, obj, key)
			}
			files[fmt.Sprint(im["path"])] = val
		}
	} else {
		files = data
	}
	return writeAtomic(p.volDirs[name], files)
}

// SetSecret creates or changes a Secret, and every volume of it, as the
// kubelet updates a mounted Secret (a new ..data directory swapped in).
func (p *Pod) SetSecret(name string, data map[string]string) error {
	if p.opt.Secrets == nil {
		p.opt.Secrets = map[string]map[string]string{}
	}
	p.opt.Secrets[name] = data
	return p.refill("secret", "secretName", name)
}

// SetConfigMap is SetSecret for a ConfigMap.
func (p *Pod) SetConfigMap(name string, data map[string]string) error {
	if p.opt.ConfigMaps == nil {
		p.opt.ConfigMaps = map[string]map[string]string{}
	}
	p.opt.ConfigMaps[name] = data
	return p.refill("configMap", "name", name)
}

func (p *Pod) refill(kind, key, obj string) error {
	for vname := range p.volDirs {
		v := ByName(p.spec.Volumes, vname)
		if Dig(v, kind, key) == obj {
			if err := p.fill(vname, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// HostPath is where a path of the container is on the host: in the volume
// mounted there, else in the image root.
func (p *Pod) HostPath(containerPath string) string {
	best, dir := "", ""
	for _, m := range p.mounts {
		if (containerPath == m[0] || strings.HasPrefix(containerPath, m[0]+"/")) && len(m[0]) > len(best) {
			best, dir = m[0], m[1]
		}
	}
	if best == "" {
		return filepath.Join(p.opt.Root, containerPath)
	}
	return filepath.Join(dir, strings.TrimPrefix(containerPath, best))
}

// SocketDir is the host directory of the container's --socket-dir (the
// plugins volume argocd-repo-server shares).
func (p *Pod) SocketDir() string { return p.HostPath(p.socketDir) }

// HTTPAddr is host:port of the container's --http-addr.
func (p *Pod) HTTPAddr() string { return p.httpAddr }

// WaitReady waits until the readiness endpoint answers 200 and a plugin
// socket exists in the socket directory, as argocd-repo-server needs; exited
// reports the process's end (nil when it is not watched).
func (p *Pod) WaitReady(ctx context.Context, exited <-chan error) error {
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		ready := false
		if resp, err := client.Get("http://" + p.httpAddr + "/readyz"); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			ready = resp.StatusCode == http.StatusOK
		}
		socks, _ := filepath.Glob(filepath.Join(p.SocketDir(), "*.sock"))
		if ready && len(socks) > 0 {
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("the sidecar exited before it was ready: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("the sidecar was not ready (GET http://%s/readyz, a socket in %s): %w", p.httpAddr, p.SocketDir(), ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// writeAtomic lays files out in dir as the kubelet's atomic writer does for
// ConfigMap and Secret volumes: the files in a timestamped directory, ..data
// a link to it, each top-level name a link through ..data. Called again, it
// swaps ..data to a new directory (one rename: a reader sees the old set or
// the new), links new names, unlinks the names gone and removes the old
// directory.
func writeAtomic(dir string, files map[string]string) error {
	ts := filepath.Join(dir, time.Now().UTC().Format("..2006_01_02_15_04_05.000000000"))
	if err := os.Mkdir(ts, 0o755); err != nil {
		return err
	}
	top := map[string]bool{}
	for name, content := range files {
		p := filepath.Join(ts, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
		top[strings.SplitN(name, "/", 2)[0]] = true
	}
	old, _ := os.Readlink(filepath.Join(dir, "..data"))
	tmp := filepath.Join(dir, "..data_tmp")
	os.Remove(tmp)
	if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		return err
	}
	for name := range top {
		link := filepath.Join(dir, name)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join("..data", name), link); err != nil {
			return err
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "..") && !top[e.Name()] {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	if old != "" {
		return os.RemoveAll(filepath.Join(dir, old))
	}
	return nil
}

// emptyDir removes everything in dir.
func emptyDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// q quotes s for sh.
func q(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
