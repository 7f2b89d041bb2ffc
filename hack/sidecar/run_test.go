package sidecar

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// TestVolumesAsTheKubeletWritesThem: Prepare lays the kustomize example's
// volumes out as the kubelet does (the shipped trust ConfigMap as files
// through ..data, the absent optional Secret as an empty directory, the
// emptyDirs writable by anyone); SetSecret then creates the Secret's files
// and a second SetSecret swaps them, leaving one data directory; a user's
// ConfigMap replaces the shipped one; a volume of a missing non-optional
// ConfigMap is refused, as the pod would never start. Nothing is run.
func TestVolumesAsTheKubeletWritesThem(t *testing.T) {
	s, err := FromKustomize("../../deploy", "argocd")
	if err != nil {
		t.Fatal(err)
	}
	root, vols := t.TempDir(), t.TempDir()
	p, err := Prepare(s, Options{Root: root, Volumes: vols, Image: v1.Config{Entrypoint: []string{"/usr/local/bin/olm-cmp"}}})
	if err != nil {
		t.Fatal(err)
	}
	read := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(p.HostPath(path))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got, want := read("/etc/olm-cmp/trust/trust.yaml"), s.ConfigMaps["olm-cmp-trust"]["trust.yaml"]; got != want || !strings.Contains(got, "kind: TrustPolicy") {
		t.Errorf("trust.yaml in the volume differs from the shipped ConfigMap")
	}
	if target, err := os.Readlink(p.HostPath("/etc/olm-cmp/trust/trust.yaml")); err != nil || target != "..data/trust.yaml" {
		t.Errorf("trust.yaml is not a link through ..data: %q %v", target, err)
	}
	reg := p.HostPath("/etc/olm-cmp/registry")
	if ents, err := os.ReadDir(reg); err != nil || len(ents) != 0 {
		t.Errorf("the absent optional Secret's volume is not an empty directory: %v %v", ents, err)
	}
	if fi, err := os.Stat(p.HostPath("/tmp")); err != nil || fi.Mode().Perm() != 0o777 {
		t.Errorf("the /tmp emptyDir: %v %v", fi, err)
	}
	if p.SocketDir() != filepath.Join(vols, "plugins") || p.HTTPAddr() != "127.0.0.1:8080" {
		t.Errorf("socket dir %s, http addr %s", p.SocketDir(), p.HTTPAddr())
	}
	script := p.Argv[len(p.Argv)-2]
	for _, want := range []string{"mount -o remount,bind,ro '" + root + "'", "setpriv --no-new-privs", "chroot --userspec=999:999",
		"'HOME=/var/cache/olm-cmp'", "'--registry-config=/etc/olm-cmp/registry/config.json'"} {
		if !strings.Contains(script, want) {
			t.Errorf("the wrapper script lacks %q:\n%s", want, script)
		}
	}

	for _, creds := range []string{`{"auths":{"a":{}}}`, `{"auths":{"b":{}}}`} {
		if err := p.SetSecret("olm-cmp-registry", map[string]string{".dockerconfigjson": creds, "other": "x"}); err != nil {
			t.Fatal(err)
		}
		if got := read("/etc/olm-cmp/registry/config.json"); got != creds {
			t.Errorf("config.json %q, want %q", got, creds)
		}
		ents, _ := os.ReadDir(reg)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		// the item's path only (not the key "other"), ..data, one data directory
		if len(names) != 3 || !strings.HasPrefix(names[0], "..2") || names[1] != "..data" || names[2] != "config.json" {
			t.Errorf("registry volume holds %v", names)
		}
	}

	p2, err := Prepare(s, Options{Root: root, Volumes: t.TempDir(), ConfigMaps: map[string]map[string]string{"olm-cmp-trust": {"trust.yaml": "mine"}},
		Image: v1.Config{Entrypoint: []string{"/x"}}})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p2.HostPath("/etc/olm-cmp/trust/trust.yaml")); err != nil || string(b) != "mine" {
		t.Errorf("the user's ConfigMap does not replace the shipped one: %q %v", b, err)
	}
	if _, err := os.Stat(p2.HostPath("/etc/olm-cmp/trust/redhat-release3.pub")); err == nil {
		t.Errorf("a file of the shipped ConfigMap survives the user's")
	}

	s.AddVolume("extra", "/etc/olm-cmp/extra", map[string]any{"configMap": map[string]any{"name": "missing"}}, true)
	_, err = Prepare(s, Options{Root: root, Volumes: t.TempDir(), Image: v1.Config{Entrypoint: []string{"/x"}}})
	if err == nil || !strings.Contains(err.Error(), "ConfigMap missing does not exist and is not optional") {
		t.Errorf("a missing non-optional ConfigMap: %v", err)
	}
}
