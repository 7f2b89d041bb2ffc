package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/versions"
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
	var r versions.PackageReport
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
	var r versions.PackageReport
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
	var r versions.TagsReport
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
	if r.Repository != host+"/demo/greeter-bundle" || len(r.Tags) != 4 || r.Tags[2] != (versions.ReportTag{Name: "v0.10.0", Version: "0.10.0"}) || strings.Join(r.Other, ",") != "0.2,latest" {
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

// A registry that stalls on the tag list, or answers it with a 10 MB
// error page, gives one bounded line within the registry timeout.
func TestVersionsHostileRegistry(t *testing.T) {
	fr := bundletest.NewFaultRegistry(t, bundletest.FaultOptions{})
	fr.PushDir(t, "demo/greeter-bundle", "v0.2.0", "../../examples/demo/bundle")
	tagList := bundletest.Where{Path: `/tags/list$`}

	fr.Inject(tagList, bundletest.Fault{Stall: true}, 0)
	start := time.Now()
	_, stderr, code := runStatus(t, "versions", fr.Host+"/demo/greeter-bundle", "--insecure-registry", fr.Host, "--registry-timeout", "1s")
	if code != 1 || !strings.Contains(stderr, "did not answer within 1s while") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stalled tag list: exit %d, %s", code, stderr)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("a stalled tag list took %s", d)
	}

	fr.Clear()
	fr.Inject(tagList, bundletest.Fault{Status: 500, BodySize: 10 << 20}, 0)
	_, stderr, code = runStatus(t, "versions", fr.Host+"/demo/greeter-bundle", "--insecure-registry", fr.Host)
	if code != 1 || !strings.Contains(stderr, "answered 500 Internal Server Error") || len(stderr) > 1000 || strings.Count(stderr, "\n") != 1 {
		t.Errorf("huge error page: exit %d, %d bytes: %.300s", code, len(stderr), stderr)
	}
}

// A catalog whose channels form a cycle, whose skipRange holds every
// version and whose names carry escape sequences and a megabyte: listed,
// with the problems said, in bounded, escaped output.
func TestVersionsHostileCatalog(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("n", 1<<20)
	fbc := `{"schema": "olm.package", "name": "p", "defaultChannel": "loop\u001b[2J"}
{"schema": "olm.channel", "package": "p", "name": "loop\u001b[2J", "entries": [{"name": "p.a", "replaces": "p.c"}, {"name": "p.b", "replaces": "p.a"}, {"name": "p.c", "replaces": "p.b", "skipRange": ">=0.0.0-0"}]}
{"schema": "olm.channel", "package": "p", "name": "wide", "entries": [{"name": "p.a"}, {"name": "` + long + `", "skips": ["p.a", "p.b"], "skipRange": "<99999.0.0"}]}
{"schema": "olm.bundle", "package": "p", "name": "p.a", "image": "example.com/a", "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "1.0.0"}}]}
{"schema": "olm.bundle", "package": "p", "name": "p.b", "image": "example.com/b", "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "1.1.0"}}]}
{"schema": "olm.bundle", "package": "p", "name": "p.c", "image": "example.com/c", "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "1.2.0"}}]}
{"schema": "olm.bundle", "package": "p", "name": "` + long + `", "image": "example.com/d", "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "2.0.0"}}]}
{"schema": "olm.deprecations", "package": "p", "entries": [{"reference": {"schema": "olm.package"}}, {"reference": {"schema": "olm.channel", "name": "wide"}}]}
`
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(fbc), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runStatus(t, "versions", "--catalog", dir, "--package", "p")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		`default channel loop\x1b[2J (deprecated)`,
		`channel loop\x1b[2J: no head: every entry is replaced or skipped by another (a cycle); opm validate refuses this channel`,
		"channel wide (deprecated): head " + strings.Repeat("n", 120) + "… (1048576 bytes)",
		"  1.2.0    p.c",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%.2000s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") || len(out) > 4000 {
		t.Errorf("output: %d bytes, raw escape %v", len(out), strings.Contains(out, "\x1b"))
	}
}
