// Package sidecar runs olm-cmp's container the way deploy/ installs it: the
// container spec (command, args, env, user, read-only root, volumes) from
// `kustomize build` of a deploy/kustomize example or from the Helm values,
// run chrooted in the root filesystem of the image hack/ociimage builds
// (`make image`), with its volumes mounted as the kubelet mounts them. It is
// test infrastructure, not part of the product binary: deploy/run_test.go
// and the Argo CD e2e (test/e2e) both run the sidecar through it, so there
// is one runner.
//
//	spec, _ := sidecar.FromKustomize("deploy", "argocd")
//	img, _ := ociimage.PlatformImage("bin/oci", "linux/amd64")
//	sidecar.Extract(img, root)
//	p, _ := sidecar.Prepare(spec, sidecar.Options{Root: root, Volumes: dir, Image: cfg})
//	cmd := exec.Command(p.Argv[0], p.Argv[1:]...); cmd.Env = p.Env  // the sidecar, pid and all
//	p.WaitReady(ctx, done)
//
// It needs root (chroot, a mount namespace), util-linux (unshare, mount,
// setpriv) and coreutils (env, chroot).
package sidecar

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

const (
	// UpstreamInstall is the Argo CD install the example overlays name (the
	// reference version); tests cannot fetch it, so RenderExample swaps in
	// deploy/testdata/argocd-standin.
	UpstreamInstall = "https://raw.githubusercontent.com/argoproj/argo-cd/v3.6.1/manifests/install.yaml"
	// StandIn is the stand-in's path from deploy/kustomize/examples/<x>/.
	StandIn = "../../../testdata/argocd-standin"
	// Container is the name of olm-cmp's container in argocd-repo-server.
	Container = "olm-cmp"
)

// Spec is olm-cmp's container in a deployment, with what the kubelet needs
// to run it: its pod's volumes and the ConfigMaps the deployment ships.
type Spec struct {
	Container  map[string]any
	Volumes    []any
	ConfigMaps map[string]map[string]string // name -> key -> value
}

// RenderExample is `kustomize build deploy/kustomize/examples/<name>`, with
// the upstream Argo CD install replaced by the local stand-in. deployDir is
// the repository's deploy/ directory.
func RenderExample(deployDir, name string) (resmap.ResMap, error) {
	fs, err := LoadDeploy(deployDir)
	if err != nil {
		return nil, err
	}
	kpath := "/deploy/kustomize/examples/" + name + "/kustomization.yaml"
	b, err := fs.ReadFile(kpath)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(string(b), UpstreamInstall) {
		return nil, fmt.Errorf("%s: does not reference the pinned upstream install %s", kpath, UpstreamInstall)
	}
	if err := fs.WriteFile(kpath, []byte(strings.Replace(string(b), UpstreamInstall, StandIn, 1))); err != nil {
		return nil, err
	}
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, filepath.Dir(kpath))
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", name, err)
	}
	return res, nil
}

// LoadDeploy copies deployDir into an in-memory filesystem at /deploy, where
// an overlay can be built against the stand-in.
func LoadDeploy(deployDir string) (filesys.FileSystem, error) {
	fs := filesys.MakeFsInMemory()
	err := filepath.Walk(deployDir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, err := filepath.Rel(deployDir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return fs.WriteFile(filepath.Join("/deploy", rel), b)
	})
	return fs, err
}

// FromKustomize is the olm-cmp container `kustomize build
// deploy/kustomize/examples/<example>` adds to argocd-repo-server, with the
// Deployment's volumes and the ConfigMaps the build emits.
func FromKustomize(deployDir, example string) (*Spec, error) {
	res, err := RenderExample(deployDir, example)
	if err != nil {
		return nil, err
	}
	s := &Spec{ConfigMaps: map[string]map[string]string{}}
	for _, r := range res.Resources() {
		m, err := r.Map()
		if err != nil {
			return nil, err
		}
		switch {
		case r.GetKind() == "ConfigMap":
			s.ConfigMaps[r.GetName()] = stringMap(m["data"])
		case r.GetKind() == "Deployment" && r.GetName() == "argocd-repo-server":
			ps, _ := Dig(m, "spec", "template", "spec").(map[string]any)
			s.Container = ByName(ps["containers"], Container)
			s.Volumes, _ = ps["volumes"].([]any)
		}
	}
	if s.Container == nil {
		return nil, fmt.Errorf("kustomize example %s: no %s container in argocd-repo-server", example, Container)
	}
	return s, nil
}

// FromHelmValues is the olm-cmp container deploy/helm/values.yaml adds
// (repoServer.extraContainers), with repoServer.volumes, the chart's own
// `plugins` emptyDir, and the ConfigMaps of extraObjects.
func FromHelmValues(deployDir string) (*Spec, error) {
	b, err := os.ReadFile(filepath.Join(deployDir, "helm", "values.yaml"))
	if err != nil {
		return nil, err
	}
	var values map[string]any
	if err := yaml.Unmarshal(b, &values); err != nil {
		return nil, fmt.Errorf("deploy/helm/values.yaml: %w", err)
	}
	s := &Spec{ConfigMaps: map[string]map[string]string{}}
	s.Container = ByName(Dig(values, "repoServer", "extraContainers"), Container)
	if s.Container == nil {
		return nil, fmt.Errorf("deploy/helm/values.yaml: no %s in repoServer.extraContainers", Container)
	}
	vols, _ := Dig(values, "repoServer", "volumes").([]any)
	s.Volumes = append(append([]any{}, vols...), map[string]any{"name": "plugins", "emptyDir": map[string]any{}})
	objs, _ := values["extraObjects"].([]any)
	for _, o := range objs {
		om, _ := o.(map[string]any)
		if om["kind"] == "ConfigMap" {
			name, _ := Dig(om, "metadata", "name").(string)
			s.ConfigMaps[name] = stringMap(om["data"])
		}
	}
	return s, nil
}

// AddVolume adds a volume to the pod and mounts it in the container at
// mountPath, as a user's patch of the Deployment does (a second trust
// ConfigMap, per-project registry Secrets). volume is a Pod volume without
// its name, e.g. {"secret": {"secretName": "x"}}.
func (s *Spec) AddVolume(name, mountPath string, volume map[string]any, readOnly bool) {
	v := map[string]any{"name": name}
	for k, val := range volume {
		v[k] = val
	}
	s.Volumes = append(s.Volumes, v)
	mounts, _ := s.Container["volumeMounts"].([]any)
	s.Container["volumeMounts"] = append(mounts, map[string]any{"name": name, "mountPath": mountPath, "readOnly": readOnly})
}

// SetEnv sets one env variable of the container (replacing its value if
// the spec has it), as a user's patch does.
func (s *Spec) SetEnv(name, value string) {
	env, _ := s.Container["env"].([]any)
	for _, e := range env {
		if em, _ := e.(map[string]any); em["name"] == name {
			em["value"] = value
			return
		}
	}
	s.Container["env"] = append(env, map[string]any{"name": name, "value": value})
}

// AddArgs appends flags to the container's args, as a user's patch does.
func (s *Spec) AddArgs(args ...string) {
	cur, _ := s.Container["args"].([]any)
	for _, a := range args {
		cur = append(cur, a)
	}
	s.Container["args"] = cur
}

// Args is the container's args.
func (s *Spec) Args() []string { return Strings(s.Container["args"]) }

// Dig follows keys through nested objects; nil where one is missing.
func Dig(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// ByName is the element of a list of objects whose name is name, or nil.
func ByName(list any, name string) map[string]any {
	items, _ := list.([]any)
	for _, it := range items {
		if m, _ := it.(map[string]any); m["name"] == name {
			return m
		}
	}
	return nil
}

// Strings is a YAML list of strings.
func Strings(v any) []string {
	items, _ := v.([]any)
	var out []string
	for _, it := range items {
		s, _ := it.(string)
		out = append(out, s)
	}
	return out
}

// Int is a YAML number, -1 when v is none.
func Int(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	case float64:
		return int(n)
	}
	return -1
}

func stringMap(v any) map[string]string {
	out := map[string]string{}
	m, _ := v.(map[string]any)
	for k, val := range m {
		out[k], _ = val.(string)
	}
	return out
}
