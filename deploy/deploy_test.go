// Package deploy_test renders the kustomize components and example overlays in deploy/ with
// kustomize's Go API and checks the olm-cmp sidecar they add to argocd-repo-server; it also
// checks the Helm values define the same container.
package deploy_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/yaml"

	"github.com/olm-cmp/olm-cmp/hack/sidecar"
)

const (
	upstreamInstall = sidecar.UpstreamInstall
	socketDir       = "/home/argocd/cmp-server/plugins"
)

// renderExample renders deploy/kustomize/examples/<name> against the stand-in.
func renderExample(t *testing.T, name string) resmap.ResMap {
	t.Helper()
	res, err := sidecar.RenderExample(".", name)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// buildExample renders deploy/kustomize/examples/<name> against the stand-in and returns its
// argocd-repo-server Deployment.
func buildExample(t *testing.T, name string) map[string]any {
	t.Helper()
	var dep map[string]any
	for _, r := range renderExample(t, name).Resources() {
		if r.GetKind() == "Deployment" && r.GetName() == "argocd-repo-server" {
			m, err := r.Map()
			if err != nil {
				t.Fatal(err)
			}
			dep = m
			if ns := r.GetNamespace(); ns != "argocd" {
				t.Errorf("repo-server namespace %q, want argocd", ns)
			}
		}
	}
	if dep == nil {
		t.Fatalf("%s: no Deployment/argocd-repo-server in the output", name)
	}
	return dep
}

func podSpec(t *testing.T, dep map[string]any) map[string]any {
	return dig(t, dep, "spec", "template", "spec").(map[string]any)
}

func dig(t *testing.T, v any, path ...string) any {
	t.Helper()
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: not an object", strings.Join(path, "."))
		}
		v = m[p]
	}
	return v
}

func byName(t *testing.T, list any, name string) map[string]any {
	t.Helper()
	items, _ := list.([]any)
	for _, it := range items {
		if m, _ := it.(map[string]any); m["name"] == name {
			return m
		}
	}
	return nil
}

func mounts(c map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	ms, _ := c["volumeMounts"].([]any)
	for _, m := range ms {
		mm := m.(map[string]any)
		out[mm["mountPath"].(string)] = mm
	}
	return out
}

func checkSecurity(t *testing.T, c map[string]any) {
	t.Helper()
	sc, _ := c["securityContext"].(map[string]any)
	want := map[string]any{"runAsNonRoot": true, "runAsUser": 999, "runAsGroup": 999,
		"readOnlyRootFilesystem": true, "allowPrivilegeEscalation": false}
	for k, v := range want {
		got := sc[k]
		if f, ok := got.(float64); ok {
			got = int(f)
		}
		if int64v, ok := got.(int64); ok {
			got = int(int64v)
		}
		if got != v {
			t.Errorf("securityContext.%s = %v, want %v", k, sc[k], v)
		}
	}
	if drop := dig(t, sc, "capabilities", "drop"); !reflect.DeepEqual(drop, []any{"ALL"}) {
		t.Errorf("capabilities.drop = %v, want [ALL]", drop)
	}
}

// checkCommon: the stock repo-server container and its volumes are untouched, the shared
// plugins volume is still an emptyDir.
func checkCommon(t *testing.T, ps map[string]any) {
	t.Helper()
	if byName(t, ps["containers"], "argocd-repo-server") == nil {
		t.Error("argocd-repo-server container lost")
	}
	if v := byName(t, ps["volumes"], "plugins"); v == nil || v["emptyDir"] == nil {
		t.Errorf("plugins volume must stay the upstream emptyDir, got %v", v)
	}
	if v := byName(t, ps["volumes"], "olm-cmp-registry"); v == nil {
		t.Error("no olm-cmp-registry volume")
	} else if s := dig(t, v, "secret").(map[string]any); s["secretName"] != "olm-cmp-registry" || s["optional"] != true {
		t.Errorf("olm-cmp-registry must be the optional Secret olm-cmp-registry, got %v", s)
	}
}

func TestKustomizeNative(t *testing.T) {
	ps := podSpec(t, buildExample(t, "argocd"))
	checkCommon(t, ps)
	c := byName(t, ps["containers"], "olm-cmp")
	if c == nil {
		t.Fatal("no olm-cmp container")
	}
	if !strings.HasPrefix(c["image"].(string), "ghcr.io/olm-cmp/olm-cmp:") {
		t.Errorf("image %v", c["image"])
	}
	args := strings.Join(toStrings(c["args"]), " ")
	for _, want := range []string{"serve", "--socket-dir=" + socketDir, "--cache-dir=/var/cache/olm-cmp",
		"--registry-config=/etc/olm-cmp/registry/config.json", "--http-addr=:8080"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	// serve binds loopback by default: the probes need the explicit address
	// above. The render endpoint (it renders with the sidecar's registry
	// credentials) is never exposed by the shipped manifests, nor is a socket
	// directory created where the plugins volume should be mounted.
	for _, refused := range []string{"--render-addr", "--create-socket-dir"} {
		if strings.Contains(args, refused) {
			t.Errorf("args %q include %s", args, refused)
		}
	}
	if c["command"] != nil {
		t.Errorf("native mode must use the image entrypoint, got command %v", c["command"])
	}
	m := mounts(c)
	for path, vol := range map[string]string{socketDir: "plugins", "/var/cache/olm-cmp": "olm-cmp-cache",
		"/tmp": "olm-cmp-tmp", "/etc/olm-cmp/registry": "olm-cmp-registry"} {
		if m[path] == nil || m[path]["name"] != vol {
			t.Errorf("mount %s: got %v, want volume %s", path, m[path], vol)
		}
	}
	// The root filesystem is read-only: the cache and every request's work
	// directory ($TMPDIR) live in emptyDirs.
	for _, name := range []string{"olm-cmp-cache", "olm-cmp-tmp"} {
		if v := byName(t, ps["volumes"], name); v == nil || v["emptyDir"] == nil {
			t.Errorf("%s must be an emptyDir, got %v", name, v)
		}
	}
	if e := byName(t, c["env"], "TMPDIR"); e == nil || e["value"] != "/tmp" {
		t.Errorf("TMPDIR must be /tmp (the olm-cmp-tmp emptyDir), got %v", e)
	}
	probe := dig(t, c, "readinessProbe", "httpGet").(map[string]any)
	if probe["path"] != "/readyz" || probe["port"] != "olm-cmp-http" {
		t.Errorf("readiness probe %v", probe)
	}
	if p := byName(t, c["ports"], "olm-cmp-http"); p == nil || toInt(p["containerPort"]) != 8080 {
		t.Errorf("port olm-cmp-http: %v", p)
	}
	checkSecurity(t, c)
}

func TestKustomizeClassic(t *testing.T) {
	ps := podSpec(t, buildExample(t, "argocd-classic"))
	checkCommon(t, ps)
	c := byName(t, ps["containers"], "olm-cmp")
	if c == nil {
		t.Fatal("no olm-cmp container")
	}
	if cmd := toStrings(c["command"]); !reflect.DeepEqual(cmd, []string{"/var/run/argocd/argocd-cmp-server"}) {
		t.Errorf("classic mode runs argocd-cmp-server, got %v", cmd)
	}
	m := mounts(c)
	if m[socketDir]["name"] != "plugins" || m["/var/run/argocd"]["name"] != "var-files" {
		t.Errorf("mounts %v", m)
	}
	pm := m["/home/argocd/cmp-server/config/plugin.yaml"]
	if pm == nil || pm["subPath"] != "plugin.yaml" {
		t.Fatalf("plugin.yaml mount: %v", pm)
	}
	v := byName(t, ps["volumes"], pm["name"].(string))
	cmName, _ := dig(t, v, "configMap", "name").(string)
	if !strings.HasPrefix(cmName, "olm-cmp-plugin-") {
		t.Errorf("plugin.yaml volume must reference the generated (hashed) ConfigMap, got %q", cmName)
	}
	checkSecurity(t, c)

	// the ConfigMap's plugin.yaml is the repository's plugin.yaml (when it exists)
	own, err := os.ReadFile("kustomize/components/olm-cmp-classic/plugin.yaml")
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.ReadFile("../plugin.yaml")
	if err != nil {
		t.Skipf("../plugin.yaml not present yet: %v", err)
	}
	// Byte for byte: the comments say what each mode reads, and two copies
	// that explain the file differently are one wrong.
	if !bytes.Equal(own, root) {
		t.Errorf("deploy/kustomize/components/olm-cmp-classic/plugin.yaml differs from plugin.yaml (comments included): copy plugin.yaml over it:\n%s\nvs\n%s", own, root)
	}
}

// TestHelmValues: the chart values add the same sidecar and volumes as the kustomize component.
func TestHelmValues(t *testing.T) {
	values := readHelmValues(t)
	hc := byName(t, dig(t, values, "repoServer", "extraContainers"), "olm-cmp")
	if hc == nil {
		t.Fatal("repoServer.extraContainers has no olm-cmp")
	}
	checkSecurity(t, hc)
	ps := podSpec(t, buildExample(t, "argocd"))
	kc := byName(t, ps["containers"], "olm-cmp")
	if !reflect.DeepEqual(normalize(t, hc), normalize(t, kc)) {
		t.Errorf("Helm extraContainers[olm-cmp] differs from the kustomize sidecar:\nhelm: %v\nkustomize: %v", hc, kc)
	}
	vols, _ := dig(t, values, "repoServer", "volumes").([]any)
	for _, v := range vols {
		name := v.(map[string]any)["name"].(string)
		if kv := byName(t, ps["volumes"], name); !reflect.DeepEqual(normalize(t, v), normalize(t, kv)) {
			t.Errorf("Helm volume %s differs from kustomize: %v vs %v", name, v, kv)
		}
	}
	for _, m := range kc["volumeMounts"].([]any) {
		name := m.(map[string]any)["name"].(string)
		if name == "plugins" {
			continue // provided by the chart
		}
		if byName(t, vols, name) == nil {
			t.Errorf("Helm values mount %s but repoServer.volumes does not define it", name)
		}
	}
}

// readHelmValues is deploy/helm/values.yaml, decoded.
func readHelmValues(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile("helm/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(b, &values); err != nil {
		t.Fatal(err)
	}
	return values
}

// normalize round-trips through YAML so numbers compare equal regardless of decoder.
func normalize(t *testing.T, v any) any {
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := yaml.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func toStrings(v any) []string { return sidecar.Strings(v) }

func toInt(v any) int { return sidecar.Int(v) }

// TestReadmeInstallsWhatTheExamplesDo: README's kustomize snippet names the
// Argo CD the example overlays install (the reference version) and sets the
// namespace, as they do; its Helm instructions add the chart repository.
func TestReadmeInstallsWhatTheExamplesDo(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, want := range []string{
		"resources: [" + upstreamInstall + "]",
		"namespace: argocd ",
		"helm repo add argo https://argoproj.github.io/argo-helm\n",
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
	for _, ex := range []string{"argocd", "argocd-classic"} {
		k, err := os.ReadFile(filepath.Join("kustomize", "examples", ex, "kustomization.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(k), "\nnamespace: argocd\n") {
			t.Errorf("%s: no namespace: argocd", ex)
		}
	}
}
