package output

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/render"
)

// Two renders of the same input name their files the same; names that
// would clash (same kind and name in two namespaces, a name only case
// tells apart, characters filesystems refuse) stay distinct and safe.
func TestObjectFileNames(t *testing.T) {
	obj := func(apiVersion, kind, ns, name, wave string) string {
		js, _ := json.Marshal(map[string]any{"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"name": name, "namespace": ns, "annotations": map[string]string{"argocd.argoproj.io/sync-wave": wave}}})
		return string(js)
	}
	res := &render.Result{JSON: []string{
		obj("v1", "Namespace", "", "a", "-4"),
		obj("rbac.authorization.k8s.io/v1", "Role", "ns1", "r", "-3"),
		obj("rbac.authorization.k8s.io/v1", "Role", "ns2", "r", "-3"),
		obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "system:Weird/Name", "-3"),
		obj("x.example.com/v1", "Thing", "", "Same", "7"),
		obj("y.example.com/v1", "Thing", "", "same", "7"),
		obj("v1", "ConfigMap", "n", strings.Repeat("l", 300), "0"),
		obj("v1", "ConfigMap", "n", "..", "0"),
	}}
	res.Manifests = make([]string, len(res.JSON))
	got := FileNames(res, "yaml")
	want := []string{
		"00-namespace-a.yaml",
		"01-role-r-ns1.yaml",
		"01-role-r-ns2.yaml",
		"01-clusterrole-system_weird_name.yaml",
		"03-thing-same-x.example.com.yaml",
		"03-thing-same-y.example.com.yaml",
		fitName("02-configmap-"+strings.Repeat("l", 300), MaxFileName-len(".yaml")) + ".yaml",
		"02-configmap-_.yaml",
	}
	if !slices.Equal(got, want) {
		t.Errorf("file names:\n got %q\nwant %q", got, want)
	}
	if again := FileNames(res, "yaml"); !slices.Equal(again, got) {
		t.Error("file names are not deterministic")
	}
	for _, n := range got {
		if len(n) > MaxFileName {
			t.Errorf("%d bytes: %s", len(n), n)
		}
	}
}

// TestObjectFileNamesNumberedClash: two objects whose qualified names are
// equal (one kind of two API groups, one name, one namespace) are
// numbered, and the number never lands on a third object's own name: that
// object was written over (16 files for 17 objects, exit 0).
func TestObjectFileNamesNumberedClash(t *testing.T) {
	obj := func(apiVersion, kind, ns, name string) string {
		js, _ := json.Marshal(map[string]any{"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"name": name, "namespace": ns}})
		return string(js)
	}
	res := &render.Result{JSON: []string{
		obj("a.example.com/v1", "Widget", "ns1", "w-ns1-1"),
		obj("a.example.com/v1", "Widget", "ns1", "w"),
		obj("b.example.com/v1", "Widget", "ns1", "w"),
		obj("c.example.com/v1", "Widget", "ns1", "w"),
		obj("a.example.com/v1", "Widget", "ns1", "w-ns1-3"),
	}}
	res.Manifests = make([]string, len(res.JSON))
	got := FileNames(res, "yaml")
	want := []string{"00-widget-w-ns1-1.yaml", "00-widget-w-ns1-2.yaml", "00-widget-w-ns1-4.yaml", "00-widget-w-ns1-5.yaml", "00-widget-w-ns1-3.yaml"}
	if !slices.Equal(got, want) {
		t.Errorf("file names:\n got %q\nwant %q", got, want)
	}
	if n := len(slices.Compact(slices.Sorted(slices.Values(got)))); n != len(got) {
		t.Errorf("%d names for %d objects: %q", n, len(got), got)
	}
}

// TestObjectFileNamesFitEveryFilesystem: a 63-character kind, a
// 200-character name and two 63-character namespaces made a 286-byte name
// ("file name too long"), and the render was refused. Names over the bound
// keep their start and a hash of the whole: distinct, within the bound.
func TestObjectFileNamesFitEveryFilesystem(t *testing.T) {
	kind := "K" + strings.Repeat("k", 62)
	name := strings.Repeat("n", 200)
	var objs []string
	for _, ns := range []string{strings.Repeat("a", 63), strings.Repeat("b", 63)} {
		js, _ := json.Marshal(map[string]any{"apiVersion": "x.example.com/v1", "kind": kind, "metadata": map[string]any{"name": name, "namespace": ns}})
		objs = append(objs, string(js))
	}
	res := &render.Result{JSON: objs, Manifests: make([]string, len(objs))}
	got := FileNames(res, "json")
	if got[0] == got[1] {
		t.Fatalf("one name for two objects: %s", got[0])
	}
	for _, n := range got {
		if len(n) > MaxFileName || !strings.HasPrefix(n, "00-"+strings.ToLower(kind)+"-nnn") || !strings.HasSuffix(n, ".json") {
			t.Errorf("%d bytes: %s", len(n), n)
		}
	}
}

// Where directories cannot be swapped in one step (not Linux, or a
// filesystem without RENAME_EXCHANGE), the old render is moved aside and
// the new one renamed into place: the same result, nothing left behind.
func TestReplaceDirWithoutExchange(t *testing.T) {
	exchangeDirs = func(_, _ string) error { return errors.ErrUnsupported }
	t.Cleanup(func() { exchangeDirs = exchange })
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	for i, content := range []string{"old", "new"} {
		tmp, err := os.MkdirTemp(parent, ".out.tmp-")
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(tmp, content), nil, 0o644)
		if err := replaceDir(tmp, dir); err != nil {
			t.Fatalf("replace %d: %v", i, err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "new" {
		t.Errorf("out holds %v, want only the new render", entries)
	}
	if all, _ := os.ReadDir(parent); len(all) != 1 {
		t.Errorf("left behind beside out: %v", all)
	}
}
