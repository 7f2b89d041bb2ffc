package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/versions"
)

// What opm validate refuses and the channel tables alone would leave
// unsaid is said, in text and in -o json: a bundle in no channel, a default
// channel that is not one, a deprecation naming nothing, a replaces cycle
// below a head, an entry listed twice.
func TestVersionsCatalogProblems(t *testing.T) {
	dir := t.TempDir()
	fbc := `{"schema": "olm.package", "name": "p", "defaultChannel": "nope"}
{"schema": "olm.channel", "package": "p", "name": "s", "entries": [{"name": "p.v4", "replaces": "p.v4"}, {"name": "p.v5", "replaces": "p.v4"}, {"name": "p.v5", "replaces": "p.v4"}]}
{"schema": "olm.bundle", "package": "p", "name": "p.v4", "image": "example.com/p:4", "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "0.0.4"}}]}
{"schema": "olm.bundle", "package": "p", "name": "p.v5", "image": "example.com/p:5", "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "0.0.5"}}]}
{"schema": "olm.bundle", "package": "p", "name": "p.v9", "image": "example.com/p:9", "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "0.0.9"}}]}
{"schema": "olm.deprecations", "package": "p", "entries": [{"reference": {"schema": "olm.bundle", "name": "p.ghost"}, "message": "x"}]}
`
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(fbc), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runStatus(t, "versions", "--catalog", dir, "--package", "p")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"problem: bundles in no channel (so not shown below), which OLM cannot install: p.v9; opm validate refuses this catalog\n",
		`problem: default channel "nope" is not a channel of the package; opm validate refuses this catalog` + "\n",
		`problem: olm.deprecations names bundle "p.ghost", which the package does not have; opm validate refuses this catalog` + "\n",
		"channel s: head p.v5, but lists more than once: p.v5; a cycle in the replaces chain from head p.v5 (p.v4 -> p.v4); opm validate refuses this channel\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	out, stderr, code = runStatus(t, "versions", "--catalog", dir, "--package", "p", "-o", "json")
	var r versions.PackageReport
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("exit %d: %s%s", code, stderr, out)
	}
	if len(r.Problems) != 3 || len(r.Channels) != 1 || !strings.Contains(r.Channels[0].Problem, "a cycle in the replaces chain") || r.Channels[0].Head != "p.v5" {
		t.Errorf("json: problems %q, channels %+v", r.Problems, r.Channels)
	}
	// The demo catalog is one opm accepts: no problem, no "problems" key.
	out, _, _ = runStatus(t, "versions", "--catalog", "../../examples/demo-catalog", "--package", "greeter-operator", "-o", "json")
	if strings.Contains(out, "problem") {
		t.Errorf("demo catalog: %s", out)
	}
}

// A flag value or path of any length is repeated cut, on one line.
func TestVersionsLongValuesCut(t *testing.T) {
	long := strings.Repeat("a", 100_000)
	for _, args := range [][]string{
		{"--catalog", "../../examples/demo-catalog", "--package", "greeter-operator", "-o", long},
		{"--catalog", "../../examples/demo-catalog", "--package", long},
		{"--catalog", "./" + long, "--package", "p"},
	} {
		out, stderr, code := runStatus(t, append([]string{"versions"}, args...)...)
		if code != 1 || out != "" || len(stderr) > 1000 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("versions %.80v: exit %d, %d bytes: %.300s", args, code, len(stderr), stderr)
		}
	}
}

// An empty REF is a missing one; a REF that is not a repository says what
// one is.
func TestVersionsRefWorded(t *testing.T) {
	for _, tc := range []struct{ ref, want string }{
		{"", "error: versions takes one bundle repository (quay.io/org/operator-bundle), or --catalog C --package P\n"},
		{"quay.io/Org/Bundle", `error: repository "quay.io/Org/Bundle" is not an image repository reference: a repository's path is lowercase: give quay.io/org/bundle` + "\n"},
	} {
		out, stderr, code := runStatus(t, "versions", tc.ref)
		if code != 1 || out != "" || stderr != tc.want {
			t.Errorf("versions %q: exit %d, stderr %q, want %q", tc.ref, code, stderr, tc.want)
		}
	}
}

// Bundles of one version are told apart by their release in text as in
// -o json; a --channel naming no channel is refused, not read as "all";
// a channel or bundle with no name is a problem said.
func TestVersionsReleasesAndEmptyNames(t *testing.T) {
	dir := t.TempDir()
	b := func(name, version, extra string) string {
		return `{"schema": "olm.bundle", "package": "p", "name": "` + name + `", "image": "example.com/p", "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "` + version + `"` + extra + `}}]}` + "\n"
	}
	fbc := `{"schema": "olm.package", "name": "p", "defaultChannel": "s"}
{"schema": "olm.channel", "package": "p", "name": "s", "entries": [{"name": "p.r1"}, {"name": "p.r2", "replaces": "p.r1"}, {"name": "p.b3", "replaces": "p.r2"}]}
{"schema": "olm.channel", "package": "p", "name": "", "entries": [{"name": ""}]}
` + b("p.r1", "1.0.0", `, "release": "1"`) + b("p.r2", "1.0.0", `, "release": "2"`) + b("p.b3", "1.0.0+3", "") + b("", "0.0.1", "")
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(fbc), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runStatus(t, "versions", "--catalog", dir, "--package", "p", "--channel", "s")
	for _, want := range []string{
		"problem: objects with no name: a channel, a bundle (version 0.0.1); opm validate refuses this catalog\n",
		"  1.0.0 (release 1)  p.r1",
		"  1.0.0 (release 2)  p.r2",
		"  1.0.0+3            p.b3",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d %s; output lacks %q:\n%s", code, stderr, want, out)
		}
	}
	out, stderr, code = runStatus(t, "versions", "--catalog", dir, "--package", "p", "--channel", " , ")
	if code != 1 || out != "" || !strings.HasPrefix(stderr, `error: --channel " , " names no channel`) {
		t.Errorf("--channel ' , ': exit %d, %q, %s", code, stderr, out)
	}
}

// A bundle in thousands of one-entry channels would make -o json repeat
// every channel name in every channel (the square of a 450 KB catalog:
// 520 MB, 1.4 GB of memory): refused, before the report is built, with
// what to do; the text table and a narrower --channel still answer.
func TestVersionsJSONReportBounded(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(`{"schema": "olm.package", "name": "p", "defaultChannel": "c0"}
{"schema": "olm.bundle", "package": "p", "name": "p.v1", "image": "example.com/p", "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "1.0.0"}}]}
`)
	for i := range 5000 {
		fmt.Fprintf(&b, `{"schema": "olm.channel", "package": "p", "name": "c%d", "entries": [{"name": "p.v1"}]}`+"\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runStatus(t, "versions", "--catalog", dir, "--package", "p", "-o", "json")
	if code != 1 || out != "" || !strings.HasPrefix(stderr, `error: the -o json report of package "p" would be over 128 MiB`) {
		t.Errorf("exit %d, %d bytes of output, %s", code, len(out), stderr)
	}
	out, stderr, code = runStatus(t, "versions", "--catalog", dir, "--package", "p", "-o", "json", "--channel", "c1,c2")
	var r versions.PackageReport
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || len(r.Channels) != 2 || len(r.Channels[0].Entries[0].Channels) != 5000 {
		t.Errorf("--channel c1,c2: exit %d %s", code, stderr)
	}
	if _, stderr, code = runStatus(t, "versions", "--catalog", dir, "--package", "p"); code != 0 {
		t.Errorf("text: exit %d %s", code, stderr)
	}
}

// A catalog image answers from its per-package index what its directory
// answers from one pass: the same channels, problems and deprecations,
// byte for byte, run after run.
func TestVersionsImageAsDirectory(t *testing.T) {
	dir := t.TempDir()
	fbc := `{"schema": "olm.package", "name": "p", "defaultChannel": "s"}
{"schema": "olm.channel", "package": "p", "name": "s", "entries": [{"name": "p.v1"}, {"name": "p.v2", "replaces": "p.v1", "skipRange": "<0.0.2"}, {"name": "p.v3", "skips": ["p.v2"]}]}
{"schema": "olm.channel", "package": "p", "name": "b", "entries": [{"name": "p.v2"}, {"name": "p.v3", "replaces": "p.v2"}]}
{"schema": "olm.bundle", "package": "p", "name": "p.v1", "image": "example.com/p:1", "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "0.0.1"}}]}
{"schema": "olm.bundle", "package": "p", "name": "p.v2", "image": "example.com/p:2", "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "0.0.2"}}]}
{"schema": "olm.bundle", "package": "p", "name": "p.v3", "image": "example.com/p:3", "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "0.0.3"}}]}
{"schema": "olm.bundle", "package": "p", "name": "p.v9", "image": "example.com/p:9", "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "0.0.9"}}]}
{"schema": "olm.deprecations", "package": "p", "entries": [{"reference": {"schema": "olm.bundle", "name": "p.v2"}, "message": "x"}, {"reference": {"schema": "olm.bundle", "name": "p.ghost"}, "message": "x"}, {"reference": {"schema": "olm.channel", "name": "b"}, "message": "x"}]}
{"schema": "olm.package", "name": "q", "defaultChannel": "s"}
`
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(fbc), 0o644); err != nil {
		t.Fatal(err)
	}
	host, _ := bundletest.NewRegistry(t)
	bundletest.Push(t, host, "catalogs/p", "v1", bundletest.CatalogImage(t, dir, "/configs"))
	fromDir, stderr, code := runStatus(t, "versions", "--catalog", dir, "--package", "p", "-o", "json")
	if code != 0 {
		t.Fatalf("directory: exit %d %s", code, stderr)
	}
	for range 3 {
		again, _, _ := runStatus(t, "versions", "--catalog", dir, "--package", "p", "-o", "json")
		if again != fromDir {
			t.Fatalf("directory: output differs between runs")
		}
	}
	fromImage, stderr, code := runStatus(t, "versions", "--catalog", host+"/catalogs/p:v1", "--package", "p", "-o", "json", "--insecure-registry", host)
	if code != 0 {
		t.Fatalf("image: exit %d %s", code, stderr)
	}
	var d, i versions.PackageReport
	if json.Unmarshal([]byte(fromDir), &d) != nil || json.Unmarshal([]byte(fromImage), &i) != nil {
		t.Fatalf("not JSON:\n%s\n%s", fromDir, fromImage)
	}
	d.Catalog, d.Image, i.Catalog, i.Image = "", "", "", ""
	dj, _ := json.Marshal(d)
	ij, _ := json.Marshal(i)
	if string(dj) != string(ij) || len(d.Problems) != 2 || !strings.Contains(d.Channels[1].Problem, "stranded") {
		t.Errorf("directory and image differ or miss a problem:\n%s\n%s", dj, ij)
	}
}

// A package or channel asked for in the wrong case names the right one:
// a catalog's package list shows 20 of its hundreds.
func TestVersionsWrongCase(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--package", "Greeter-Operator"}, `error: catalog: package "Greeter-Operator" not found (package names are case-sensitive: did you mean "greeter-operator"?)` + "\n"},
		{[]string{"--package", "greeter-operator", "--channel", "Stable"}, `error: --channel "Stable": package "greeter-operator" has no such channel (channel names are case-sensitive: did you mean "stable"?)` + "\n"},
	} {
		out, stderr, code := runStatus(t, append([]string{"versions", "--catalog", "../../examples/demo-catalog"}, tc.args...)...)
		if code != 1 || out != "" || stderr != tc.want {
			t.Errorf("%v: exit %d, %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
}

// A package with no channels says so, listed or filtered.
func TestVersionsNoChannels(t *testing.T) {
	dir := t.TempDir()
	fbc := `{"schema": "olm.package", "name": "p", "defaultChannel": "s"}
{"schema": "olm.bundle", "package": "p", "name": "p.v1", "image": "example.com/p", "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "0.0.1"}}]}
`
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(fbc), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := runStatus(t, "versions", "--catalog", dir, "--package", "p")
	if code != 0 || !strings.Contains(out, "problem: the package has no channels; opm validate refuses this catalog\n") || !strings.Contains(out, "which OLM cannot install: p.v1;") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	_, stderr, code := runStatus(t, "versions", "--catalog", dir, "--package", "p", "--channel", "s")
	if want := `error: --channel "s": package "p" has no channels at all; opm validate refuses this catalog` + "\n"; code != 1 || stderr != want {
		t.Errorf("--channel s: exit %d, %q", code, stderr)
	}
}

// A failed tag list says it failed reading the tag list, not "getting an
// access token" (what the registry transport called any request it did
// not know).
func TestVersionsTagListStepNamed(t *testing.T) {
	fr := bundletest.NewFaultRegistry(t, bundletest.FaultOptions{})
	fr.PushDir(t, "demo/greeter-bundle", "v0.2.0", "../../examples/demo/bundle")
	fr.Inject(bundletest.Where{Path: `/tags/list$`}, bundletest.Fault{Status: 500}, 0)
	_, stderr, code := runStatus(t, "versions", fr.Host+"/demo/greeter-bundle", "--insecure-registry", fr.Host)
	if code != 1 || !strings.Contains(stderr, "answered 500 Internal Server Error while reading the tag list") || strings.Contains(stderr, "access token") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
