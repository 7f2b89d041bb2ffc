package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
)

const demoCatalogText = `package greeter-operator from catalog ../../examples/demo-catalog, default channel stable

channel candidate: head greeter-operator.v0.3.0-rc.1
  VERSION     BUNDLE                        REPLACES                 SKIPS  SKIP RANGE
  0.2.0       greeter-operator.v0.2.0       -                        -      -
  0.3.0-rc.1  greeter-operator.v0.3.0-rc.1  greeter-operator.v0.2.0  -      -

channel stable: head greeter-operator.v0.2.0
  VERSION  BUNDLE                   REPLACES                 SKIPS  SKIP RANGE
  0.1.0    greeter-operator.v0.1.0  -                        -      -
  0.1.1    greeter-operator.v0.1.1  greeter-operator.v0.1.0  -      -               deprecated
  0.2.0    greeter-operator.v0.2.0  greeter-operator.v0.1.1  -      >=0.1.0 <0.2.0
`

func TestVersionsCatalogDir(t *testing.T) {
	out, stderr, code := runStatus(t, "versions", "--catalog", "../../examples/demo-catalog", "--package", "greeter-operator")
	if code != 0 || out != demoCatalogText {
		t.Errorf("exit %d, stderr %q, output:\n%s\nwant:\n%s", code, stderr, out, demoCatalogText)
	}
	out, _, code = runStatus(t, "versions", "--catalog", "../../examples/demo-catalog", "--package", "greeter-operator", "--channel", "stable", "-o", "json")
	var r packageReport
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	if r.Package != "greeter-operator" || r.DefaultChannel != "stable" || len(r.Channels) != 1 || r.Channels[0].Head != "greeter-operator.v0.2.0" {
		t.Fatalf("json: %+v", r)
	}
	e := r.Channels[0].Entries[2]
	if e.Version != "0.2.0" || e.Replaces != "greeter-operator.v0.1.1" || e.SkipRange != ">=0.1.0 <0.2.0" || e.Image != "quay.io/olm-cmp/greeter-operator-bundle:v0.2.0" ||
		strings.Join(e.Channels, ",") != "candidate,stable" || !r.Channels[0].Entries[1].Deprecated {
		t.Errorf("json entries: %+v", r.Channels[0].Entries)
	}
}

func TestVersionsCatalogImage(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	digest := bundletest.Push(t, host, "catalogs/demo", "v1", bundletest.CatalogImage(t, "../../examples/demo-catalog", "/configs"))
	out, stderr, code := runStatus(t, "versions", "--catalog", host+"/catalogs/demo:v1", "--package", "greeter-operator", "-o", "json", "--insecure-registry", host)
	var r packageReport
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 {
		t.Fatalf("exit %d, %v: %s", code, err, stderr)
	}
	if r.Image != host+"/catalogs/demo@"+digest || len(r.Channels) != 2 {
		t.Errorf("catalog image %q, %d channels", r.Image, len(r.Channels))
	}
	// The registry flags apply: a registry not allowed is refused.
	_, stderr, code = runStatus(t, "versions", "--catalog", host+"/catalogs/demo:v1", "--package", "greeter-operator", "--allowed-registries", "quay.io")
	if code != 1 || !strings.Contains(stderr, "registry not allowed") {
		t.Errorf("allow-list: exit %d, %s", code, stderr)
	}
}

func TestVersionsTags(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	for _, tag := range []string{"v0.10.0", "v0.2.0", "v0.9.1", "latest", "0.2", "v0.11.0-rc.1"} {
		bundletest.PushDir(t, host, "demo/greeter-bundle", tag, "../../examples/demo/bundle")
	}
	out, stderr, code := runStatus(t, "versions", host+"/demo/greeter-bundle:v0.2.0", "--insecure-registry", host)
	want := host + `/demo/greeter-bundle: 4 semantic version tags, 2 other tags
v0.2.0
v0.9.1
v0.10.0
v0.11.0-rc.1
other tags (not semantic versions):
0.2
latest
`
	if code != 0 || out != want {
		t.Errorf("exit %d, stderr %q, output:\n%s\nwant:\n%s", code, stderr, out, want)
	}
	out, _, code = runStatus(t, "versions", host+"/demo/greeter-bundle", "--insecure-registry", host, "-o", "json")
	var r tagsReport
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
	if r.Repository != host+"/demo/greeter-bundle" || len(r.Tags) != 4 || r.Tags[2] != (tagJSON{Name: "v0.10.0", Version: "0.10.0"}) || strings.Join(r.Other, ",") != "0.2,latest" {
		t.Errorf("json: %+v", r)
	}
}

// Every failure is one line on stderr and exit status 1, nothing on stdout.
func TestVersionsFailures(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{host + "/org/nothing", "--insecure-registry", host}, "error: repository " + host + "/org/nothing not found (the registry answered 404 to its tag list): check the repository's name, and that your credentials may read it (--registry-config)"},
		{[]string{"widget-bundle"}, "error: widget-bundle: not an image repository with its registry: give it as quay.io/org/widget-bundle (docker.io/org/widget-bundle for Docker Hub)"},
		{[]string{"../../examples/demo"}, "error: ../../examples/demo is a directory: versions REF lists the tags of a bundle image repository (quay.io/org/operator-bundle); for a catalog directory give --catalog ../../examples/demo --package P"},
		{[]string{"--catalog", "../../examples/demo-catalog", "--package", "nope"}, `error: catalog: package "nope" not found; the catalog's packages: greeter-operator`},
		{[]string{"--catalog", "../../examples/demo-catalog", "--package", "greeter-operator", "--channel", "fast"}, `error: --channel "fast": package "greeter-operator" has no such channel (channels: candidate, stable)`},
		{[]string{"--catalog", "../../examples/demo-catalog"}, "error: --catalog needs --package: the package whose versions to list"},
		{[]string{"--catalog", "../../examples/demo-catalog", "--package", "greeter-operator", "quay.io/x/y"}, "error: versions takes REF (a bundle repository) or --catalog with --package, not both"},
		{[]string{"quay.io/x/y", "--package", "p"}, "error: --package and --channel need --catalog"},
		{[]string{}, "error: versions takes one bundle repository (quay.io/org/operator-bundle), or --catalog C --package P"},
		{[]string{"quay.io/x/y", "-o", "yaml"}, `error: --output "yaml": use text or json`},
		{[]string{"--catalog", "./no-such-dir", "--package", "p"}, "error: --catalog ./no-such-dir: no such directory"},
	} {
		out, stderr, code := runStatus(t, append([]string{"versions"}, tc.args...)...)
		if code != 1 || out != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("versions %v: exit %d, stdout %q, stderr:\n%s\nwant it to start with:\n%s", tc.args, code, out, stderr, tc.want)
		}
	}
}
