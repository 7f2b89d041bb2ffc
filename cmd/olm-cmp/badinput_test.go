package main

// The bad-input corpus (issue 8): every way a user's repository, spec or
// registry can be wrong, run through the real CLI. Each case asserts the
// exact error (one line, naming the file, field or object and the fix), a
// failing exit, nothing on stdout, and a bounded time.
//
// Static cases live in test/testdata/bad/<case>/: the files there are laid
// over a copy of examples/demo (olm-cmp.yaml, bundle/, extra manifests; a
// file "remove" lists paths to delete), and error.txt holds the expected
// error, with $DIR for the case's directory. Cases that need a symlink, a
// FIFO, tens of megabytes or a registry are built below at run time; nothing
// big is committed. `go test -run TestBadInput -update` rewrites error.txt
// files (review every change: each must read as a clear, actionable line).
//
// internal/cmpserver's TestBadInputThroughThePlugin streams the same static
// cases to the plugin and expects the same messages, with paths relative to
// the repository; it adds what only the stream and the plugin's env and
// parameters can get wrong.

import (
	"archive/tar"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/olm-cmp/olm-cmp/internal/badinput"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/output"
)

var update = flag.Bool("update", false, "rewrite test/testdata/bad/*/error.txt")

const badDir = "../../test/testdata/bad"

// caseTimeout bounds every case: a stall, a bomb or a hang fails the test
// instead of the CI run.
const caseTimeout = 30 * time.Second

type badCase struct {
	name string
	// setup prepares dir (a copy of examples/demo) and returns extra CLI
	// arguments; nil for static cases.
	setup func(t *testing.T, dir string) []string
	// want is the expected error for runtime cases ($DIR, $HOST replaced).
	want string
	// contains, when set, is checked instead of an exact match (errors that
	// embed ports or digests).
	contains []string
}

func TestBadInput(t *testing.T) {
	var cases []badCase
	for _, c := range badinput.Cases(t, badDir) {
		cases = append(cases, badCase{name: c.Name})
	}
	cases = append(cases, runtimeCases(t)...)
	if len(cases) < 40 {
		t.Errorf("%d cases; the corpus promises at least 40", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "app")
			var args []string
			static := c.setup == nil
			if static {
				badinput.Case{Name: c.name, Dir: filepath.Join(badDir, c.name)}.Prepare(t, "../../examples/demo", dir)
			} else {
				badinput.CopyDir(t, "../../examples/demo", dir)
				args = c.setup(t, dir)
			}
			start := time.Now()
			done := make(chan struct{})
			var out, stderr string
			var err error
			go func() {
				defer close(done)
				out, stderr, err = run(t, append([]string{"render", dir, "--timeout", "20s"}, args...)...)
			}()
			select {
			case <-done:
			case <-time.After(caseTimeout):
				t.Fatalf("no answer within %s", caseTimeout)
			}
			if err == nil {
				t.Fatalf("rendered (%d bytes) instead of failing", len(out))
			}
			if out != "" {
				t.Errorf("a failed render wrote to stdout: %.200q", out)
			}
			msg := strings.ReplaceAll(err.Error(), dir, "$DIR")
			msg = strings.ReplaceAll(msg, filepath.Dir(dir), "$TMP")
			// One line per problem: several problems of one bundle are
			// reported at once, each on its own line, none indented.
			for _, line := range strings.Split(msg, "\n") {
				if line == "" || strings.TrimLeft(line, " \t") != line {
					t.Errorf("a problem spreads over several lines: %q", msg)
				}
			}
			// The bundle is named as the spec names it (./bundle), never
			// as the directory it resolved to.
			if strings.Contains(msg, "$DIR/bundle") || strings.Contains(msg, "$TMP/") {
				t.Errorf("the error names a resolved local path: %s", msg)
			}
			if strings.Contains(msg, "panic") || strings.Contains(msg, "runtime error") || strings.Contains(msg, "goroutine") {
				t.Errorf("the error reads like a crash: %s", msg)
			}
			_ = stderr
			switch {
			case static:
				golden := filepath.Join(badDir, c.name, "error.txt")
				if *update {
					os.WriteFile(golden, []byte(msg+"\n"), 0o644)
					return
				}
				want, rerr := os.ReadFile(golden)
				if rerr != nil {
					t.Fatalf("%v (run with -update to create it)", rerr)
				}
				if msg != strings.TrimSuffix(string(want), "\n") {
					t.Errorf("error:\n  %s\nwant:\n  %s", msg, want)
				}
			case len(c.contains) > 0:
				for _, w := range c.contains {
					if !strings.Contains(msg, w) {
						t.Errorf("error %q lacks %q", msg, w)
					}
				}
			default:
				if msg != c.want {
					t.Errorf("error:\n  %s\nwant:\n  %s", msg, c.want)
				}
			}
			if d := time.Since(start); d > caseTimeout {
				t.Errorf("took %s", d)
			}
		})
	}
}

// runtimeCases are the cases that cannot be committed as files.
func runtimeCases(t *testing.T) []badCase {
	write := func(t *testing.T, p string, data []byte) {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	specFor := func(t *testing.T, dir, bundleRef string) {
		write(t, filepath.Join(dir, "olm-cmp.yaml"), fmt.Appendf(nil, "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: greeter-operator}\nspec:\n  bundle: %s\n  namespace: greeter-system\n", bundleRef))
	}
	cases := []badCase{
		{name: "runtime/huge-spec-file", setup: func(t *testing.T, dir string) []string {
			write(t, filepath.Join(dir, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  namespace: x\n  bundle: ./bundle\n  exclude:\n"+strings.Repeat("  - Kind/name-that-is-long-enough\n", 400000)))
			return nil
		}, contains: []string{"$DIR/olm-cmp.yaml", "over the 1048576-byte limit"}},
		{name: "runtime/manifest-50MB", setup: func(t *testing.T, dir string) []string {
			write(t, filepath.Join(dir, "bundle", "manifests", "huge.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: huge}\ndata:\n  a: \""+strings.Repeat("x", 50<<20)+"\"\n"))
			return nil
		}, contains: []string{"manifests/huge.yaml", "over the 16777216-byte limit for one bundle file"}},
		{name: "runtime/extra-manifest-50MB", setup: func(t *testing.T, dir string) []string {
			write(t, filepath.Join(dir, "huge.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: huge}\ndata:\n  a: \""+strings.Repeat("x", 50<<20)+"\"\n"))
			return nil
		}, want: "extra manifest huge.yaml: 52428868 bytes: larger than the 8388608-byte limit for extra manifests"},
		{name: "runtime/million-scalars", setup: func(t *testing.T, dir string) []string {
			write(t, filepath.Join(dir, "many.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\nbinaryData:\n  x:\n"+strings.Repeat("  - 1\n", 600000)))
			return nil
		}, contains: []string{"extra manifest many.yaml", "YAML items"}},
		{name: "runtime/json-style-items", setup: func(t *testing.T, dir string) []string {
			// JSON is YAML: flow mappings with no ": " and no line break
			// (600,000 nodes in 1.8 MB) once went past the item count.
			write(t, filepath.Join(dir, "many.yaml"), []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"m"},"x":[`+strings.Repeat(`{"t":{"a":{"b":{"c":{"d":{"e":{"f":"1"}}}}}}},`, 40000)+`1]}`))
			return nil
		}, contains: []string{"extra manifest many.yaml", "YAML items"}},
		{name: "runtime/catalog-json-falls-back-to-yaml", setup: func(t *testing.T, dir string) []string {
			// Not JSON (a single-quoted key), so read as YAML: the item
			// count must catch JSON-style flow mappings (a 19 MB file of
			// them cost 1.1 GB).
			write(t, filepath.Join(dir, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: greeter-operator}\nspec:\n  catalog: ./catalog\n  package: greeter-operator\n  namespace: greeter-system\n"))
			write(t, filepath.Join(dir, "catalog", "catalog.json"), []byte(`{"schema":"olm.bundle","name":"b","package":"greeter-operator","properties":[`+strings.Repeat(`{"t":{"a":{"b":{"c":{"d":{"e":{"f":"1"}}}}}}},`, 40000)+`1], 'k': 1}`))
			return nil
		}, contains: []string{"catalog file catalog.json: document 1", "YAML items"}},
		{name: "runtime/catalog-bundle-name-1MB", setup: func(t *testing.T, dir string) []string {
			// Names a catalog repeats in a message are escaped and capped:
			// two bundles named alike once echoed 2 MB.
			write(t, filepath.Join(dir, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: greeter-operator}\nspec:\n  catalog: ./catalog\n  package: greeter-operator\n  namespace: greeter-system\n"))
			name := strings.Repeat("n", 1<<20) + `\u001b[2J` // JSON's escape of ESC
			var b strings.Builder
			b.WriteString(`{"schema": "olm.package", "name": "greeter-operator"}` + "\n")
			for _, v := range []string{"0.1.0", "0.2.0"} {
				fmt.Fprintf(&b, `{"schema": "olm.bundle", "name": "%s", "package": "greeter-operator", "image": "example.com/b", "properties": [{"type": "olm.package", "value": {"packageName": "greeter-operator", "version": %q}}]}`+"\n", name, v)
			}
			write(t, filepath.Join(dir, "catalog", "catalog.json"), []byte(b.String()))
			return nil
		}, want: `$DIR/olm-cmp.yaml: line 5: spec.catalog "./catalog": catalog: package "greeter-operator" has two bundles named "` + strings.Repeat("n", 120) + `"… (1048580 bytes) (version 0.1.0 at catalog.json document 2, version 0.2.0 at catalog.json document 3); opm validate refuses this catalog: give each bundle its own name`},
		{name: "runtime/extra-manifest-name-newline", setup: func(t *testing.T, dir string) []string {
			// A line break in a file name once ended the error line and
			// printed a forged one after it.
			write(t, filepath.Join(dir, "x\x1b[2J\nerror: forged.yaml"), []byte("not: [valid"))
			return nil
		}, want: `extra manifest x\x1b[2J\nerror: forged.yaml: document 1: yaml: line 1: did not find expected ',' or ']'`},
		{name: "runtime/bundle-file-name-newline", setup: func(t *testing.T, dir string) []string {
			write(t, filepath.Join(dir, "bundle", "manifests", "y\nerror: forged.yaml"), []byte("not: [valid"))
			return nil
		}, want: `$DIR/olm-cmp.yaml: line 8: spec.bundle "./bundle": manifests/y\nerror: forged.yaml: the file name holds a line break, an escape or another control or invisible character: rename the file`},
		{name: "runtime/catalog-yaml-hidden-document", setup: func(t *testing.T, dir string) []string {
			// "---" 64 KiB into a description line is no document start
			// (opm reads one bundle here): the hidden 9.0.0 was chosen.
			write(t, filepath.Join(dir, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: greeter-operator}\nspec:\n  catalog: ./catalog\n  package: greeter-operator\n  version: 9.0.0\n  namespace: greeter-system\n"))
			write(t, filepath.Join(dir, "catalog", "catalog.yaml"), []byte("schema: olm.package\nname: greeter-operator\n---\nschema: olm.bundle\nname: g.v1.0.0\npackage: greeter-operator\nimage: example.com/good\nproperties:\n- type: olm.package\n  value: {packageName: greeter-operator, version: 1.0.0}\n- type: olm.csv.metadata\n  value:\n    description: |\n"+
				"      "+strings.Repeat("x", 64<<10-6)+"--- {schema: olm.bundle, name: g.v9.0.0, package: greeter-operator, image: example.com/evil, properties: [{type: olm.package, value: {packageName: greeter-operator, version: 9.0.0}}]}\n"))
			return nil
		}, want: `$DIR/olm-cmp.yaml: line 5: spec.catalog "./catalog": catalog: no bundle of package "greeter-operator" in any channel matches version range "9.0.0" (versions: 1.0.0)`},
		{name: "runtime/catalog-indexignore-5000-patterns", setup: func(t *testing.T, dir string) []string {
			// Every catalog file is matched against every pattern.
			write(t, filepath.Join(dir, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: greeter-operator}\nspec:\n  catalog: ./catalog\n  package: greeter-operator\n  namespace: greeter-system\n"))
			write(t, filepath.Join(dir, "catalog", ".indexignore"), []byte(strings.Repeat("*a*b\n", 5000)))
			return nil
		}, want: `$DIR/olm-cmp.yaml: line 5: spec.catalog "./catalog": catalog file .indexignore: over 1000 patterns: not an .indexignore olm-cmp reads (opm's hold a few patterns)`},
		{name: "runtime/catalog-indexignore-fifo", setup: func(t *testing.T, dir string) []string {
			write(t, filepath.Join(dir, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: greeter-operator}\nspec:\n  catalog: ./catalog\n  package: greeter-operator\n  namespace: greeter-system\n"))
			os.MkdirAll(filepath.Join(dir, "catalog"), 0o755)
			if err := syscall.Mkfifo(filepath.Join(dir, "catalog", ".indexignore"), 0o644); err != nil {
				t.Skip(err)
			}
			return nil
		}, want: `$DIR/olm-cmp.yaml: line 5: spec.catalog "./catalog": catalog file .indexignore is not a regular file: remove it from the catalog directory`},
		{name: "runtime/catalog-json-33MB-object", setup: func(t *testing.T, dir string) []string {
			write(t, filepath.Join(dir, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: greeter-operator}\nspec:\n  catalog: ./catalog\n  package: greeter-operator\n  namespace: greeter-system\n"))
			write(t, filepath.Join(dir, "catalog", "catalog.json"), []byte(`{"schema": "olm.bundle", "name": "x", "package": "greeter-operator", "properties": [{"type": "olm.csv.metadata", "value": "`+strings.Repeat("x", 33<<20)+`"}]}`))
			return nil
		}, want: `$DIR/olm-cmp.yaml: line 5: spec.catalog "./catalog": catalog file catalog.json: document 1 is over 32 MiB: not a catalog object olm-cmp reads`},
		{name: "runtime/symlink-to-etc-passwd", setup: func(t *testing.T, dir string) []string {
			if err := os.Symlink("/etc/passwd", filepath.Join(dir, "bundle", "manifests", "passwd.yaml")); err != nil {
				t.Fatal(err)
			}
			return nil
		}, want: `$DIR/olm-cmp.yaml: line 8: spec.bundle "./bundle": reading manifests/passwd.yaml: a symbolic link that leads outside the bundle directory: copy the file into the bundle instead`},
		// Beside olm-cmp.yaml, a FIFO or a link to /dev/zero named like a
		// manifest was passed over without a word; it is never opened.
		{name: "runtime/fifo-beside-spec", setup: func(t *testing.T, dir string) []string {
			if err := syscall.Mkfifo(filepath.Join(dir, "x.yaml"), 0o644); err != nil {
				t.Skip("no FIFOs here:", err)
			}
			return nil
		}, want: "extra manifest x.yaml: a named pipe (FIFO), not a regular file: olm-cmp reads extra manifests from regular files only (it never opens anything else): put the file itself beside olm-cmp.yaml, or leave it out with spec.extraManifests: {exclude: [x.yaml]}"},
		{name: "runtime/link-to-dev-zero-beside-spec", setup: func(t *testing.T, dir string) []string {
			if err := os.Symlink("/dev/zero", filepath.Join(dir, "x.yaml")); err != nil {
				t.Fatal(err)
			}
			return nil
		}, want: "extra manifest x.yaml: a symbolic link, not a regular file: olm-cmp reads extra manifests from regular files only (it never opens anything else): put the file itself beside olm-cmp.yaml, or leave it out with spec.extraManifests: {exclude: [x.yaml]}"},
		{name: "runtime/fifo-in-bundle", setup: func(t *testing.T, dir string) []string {
			if err := syscall.Mkfifo(filepath.Join(dir, "bundle", "manifests", "pipe.yaml"), 0o644); err != nil {
				t.Skip("no FIFOs here:", err)
			}
			return nil
		}, contains: []string{"manifests/pipe.yaml", "not a regular file"}},
		// Unbounded echoes: a value comes back at most 120 characters long,
		// with its size, control characters escaped.
		{name: "runtime/namespace-200KB", setup: func(t *testing.T, dir string) []string {
			write(t, filepath.Join(dir, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ./bundle\n  namespace: "+strings.Repeat("n", 200000)+"\n"))
			return nil
		}, want: `$DIR/olm-cmp.yaml: line 5: spec.namespace "` + strings.Repeat("n", 120) + `"… (200000 bytes): not a valid namespace name: use lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters`},
		{name: "runtime/cluster-api-100KB", setup: func(t *testing.T, dir string) []string {
			write(t, filepath.Join(dir, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ./bundle\n  namespace: x\n  clusterAPIs: ["+strings.Repeat("c", 100000)+"]\n"))
			return nil
		}, want: `$DIR/olm-cmp.yaml: line 6: spec.clusterAPIs[0] "` + strings.Repeat("c", 120) + `"… (100000 bytes): not an API group: use group/version, e.g. monitoring.coreos.com/v1`},
		{name: "runtime/escape-sequence-in-namespace", setup: func(t *testing.T, dir string) []string {
			write(t, filepath.Join(dir, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ./bundle\n  namespace: \"x\\e[2J\\ny\"\n"))
			return nil
		}, contains: []string{`spec.namespace "x\x1b[2J\ny": `}},
		{name: "runtime/symlinked-bundle-leaves-dir", setup: func(t *testing.T, dir string) []string {
			outside := filepath.Join(filepath.Dir(dir), "outside")
			os.Rename(filepath.Join(dir, "bundle"), outside)
			if err := os.Symlink(outside, filepath.Join(dir, "bundle")); err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(dir, "bundle", "manifests", "greeter-operator.clusterserviceversion.yaml"))
			return nil
		}, contains: []string{"bundle"}},
		// An API list without apiextensions.k8s.io/v1 dropped the CRD and
		// kept its custom resources, exit 0; such a list is now refused as
		// partial before anything is dropped.
		{name: "runtime/crd-dropped-under-its-crs", setup: func(t *testing.T, dir string) []string {
			return []string{"--api-versions", "v1,apps/v1,rbac.authorization.k8s.io/v1,admissionregistration.k8s.io/v1,cert-manager.io/v1"}
		}, want: "--api-versions: the list looks partial: it lacks apiextensions.k8s.io/v1, which every cluster serves; give the cluster's whole list, as `kubectl api-versions` prints it (comma-separated: kubectl api-versions | paste -sd, -)"},
		// The CSV's alm-example, chosen by spec.examples, that its own CRD's
		// schema refuses (as LokiStack's lacks storage.secret.type).
		{name: "runtime/example-fails-its-schema", setup: func(t *testing.T, dir string) []string {
			csv := filepath.Join(dir, "bundle", "manifests", "greeter-operator.clusterserviceversion.yaml")
			data, err := os.ReadFile(csv)
			if err != nil {
				t.Fatal(err)
			}
			write(t, csv, []byte(strings.Replace(string(data), `"replicas": 1`, `"replicas": "one"`, 1)))
			return nil
		}, want: `Greeter greeter-system/hello: spec.replicas: must be of type integer: "string": fix the custom resource (the extra manifest, or with spec.patches); an alm-example is rendered only when spec.examples names its kind, so leave that kind out or add "Greeter/hello" to spec.exclude`},
	}

	// Pins (spec.digest) that the tag or the version no longer names, and a
	// partial API list: each would have rendered something else than the
	// spec says, with exit 0.
	pinSpec := func(t *testing.T, dir, host, version, digest string) {
		write(t, filepath.Join(dir, "olm-cmp.yaml"), fmt.Appendf(nil, "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: greeter-operator}\nspec:\n  bundle: %s/tiny\n  version: %s\n  digest: %s\n  namespace: greeter-system\n", host, version, digest))
	}
	cases = append(cases,
		badCase{name: "pin/tag-moved", contains: []string{"spec.digest pins sha256:", "(0.2.0), but the tag ", "/tiny:v1 now points to sha256:", "(0.2.0 too): the tag moved since it was pinned", "olm-cmp resolve --write"}, setup: func(t *testing.T, dir string) []string {
			host, _ := bundletest.NewRegistry(t)
			d1 := bundletest.PushDir(t, host, "tiny", "v1", filepath.Join(dir, "bundle"))
			csv := filepath.Join(dir, "bundle", "manifests", "greeter-operator.clusterserviceversion.yaml")
			data, _ := os.ReadFile(csv)
			write(t, csv, append(data, "# pushed again\n"...))
			bundletest.PushDir(t, host, "tiny", "v1", filepath.Join(dir, "bundle"))
			pinSpec(t, dir, host, "v1", d1)
			return []string{"--insecure-registry", host}
		}},
		badCase{name: "pin/version-bumped", contains: []string{"spec.version is v0.3.0 but spec.digest pins 0.2.0 (sha256:", "/tiny:v0.3.0 is 0.3.0 (sha256:", "run olm-cmp resolve --write to pin it, or delete the digest line"}, setup: func(t *testing.T, dir string) []string {
			host, _ := bundletest.NewRegistry(t)
			d1 := bundletest.PushDir(t, host, "tiny", "v0.2.0", filepath.Join(dir, "bundle"))
			csv := filepath.Join(dir, "bundle", "manifests", "greeter-operator.clusterserviceversion.yaml")
			data, _ := os.ReadFile(csv)
			write(t, csv, []byte(strings.Replace(string(data), "version: 0.2.0", "version: 0.3.0", 1)))
			bundletest.PushDir(t, host, "tiny", "v0.3.0", filepath.Join(dir, "bundle"))
			pinSpec(t, dir, host, "v0.3.0", d1)
			return []string{"--insecure-registry", host}
		}},
		badCase{name: "flags/partial-api-versions", want: "--api-versions: the list looks partial: it lacks rbac.authorization.k8s.io/v1, apiextensions.k8s.io/v1, admissionregistration.k8s.io/v1, which every cluster serves; give the cluster's whole list, as `kubectl api-versions` prints it (comma-separated: kubectl api-versions | paste -sd, -)", setup: func(t *testing.T, dir string) []string {
			return []string{"--api-versions", "v1,apps/v1"}
		}},
	)

	// The upgrade-safety check (spec.upgradeFrom): the bundle of
	// upgradeFrom is the demo with a CRD the check cannot judge (beyond its
	// limits, or a version without a schema). A finding says so, instead of
	// minutes of work or a crash.
	upgradeCase := func(name, crd string, want ...string) badCase {
		return badCase{name: "upgrade/" + name, contains: want, setup: func(t *testing.T, dir string) []string {
			fr := bundletest.NewFaultRegistry(t, bundletest.FaultOptions{})
			from := filepath.Join(t.TempDir(), "from")
			badinput.CopyDir(t, filepath.Join(dir, "bundle"), from)
			write(t, filepath.Join(from, "manifests", "greeter.example.com_greeters.yaml"), []byte(crd))
			fr.PushDir(t, "greeter", "v1", from)
			fr.PushDir(t, "greeter", "v2", filepath.Join(dir, "bundle"))
			write(t, filepath.Join(dir, "olm-cmp.yaml"), fmt.Appendf(nil, "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: greeter-operator}\nspec:\n  bundle: %s/greeter:v2\n  namespace: greeter-system\n  upgradeFrom: v1\n", fr.Host))
			return []string{"--insecure-registry", fr.Host}
		}}
	}
	cases = append(cases,
		upgradeCase("crd-180-versions", greeterCRD(180, 1, 0, false), "error: limits: CRD greeters.greeter.example.com: greeter-operator.v0.2.0 ships it with 180 versions; the upgrade-safety check accepts at most 32 (real CRDs: up to 12)", "remove upgradeFrom once you have judged it"),
		// Half the corpus's 100,000 properties and 400,000 enum values
		// (internal/safety's TestCRDIssueSizes has those): each case has
		// 20 s, on machines that may be loaded.
		upgradeCase("crd-50000-properties", greeterCRD(1, 50000, 0, false), "error: limits: CRD greeters.greeter.example.com: greeter-operator.v0.2.0 ships it with 50003 schema properties", "accepts at most 40000"),
		upgradeCase("crd-enum-200000-values", greeterCRD(1, 1, 200000, false), "error: limits: CRD greeters.greeter.example.com: greeter-operator.v0.2.0 ships it with an enum of 200000 values at .spec.mode in version v1alpha1; the upgrade-safety check accepts at most 1000"),
		upgradeCase("crd-version-without-schema", greeterCRD(2, 1, 0, true), "error: schema: CRD greeters.greeter.example.com version v2: greeter-operator.v0.2.0 ships this version without a schema (spec.versions[1].schema.openAPIV3Schema)"),
	)

	// The upgrade edge under OLM v1's default upgradeConstraintPolicy,
	// CatalogProvided: 0.2.0 replaces 0.1.0, never 0.0.1, so the upgrade
	// from 0.0.1 is refused, in one line that names both, the way forward
	// and SelfCertified.
	cases = append(cases, badCase{name: "upgrade/no-edge-catalog-provided",
		want: `$DIR/olm-cmp.yaml: line 7: spec.upgradeFrom "v0.0.1": no upgrade edge from greeter-operator.v0.0.1 to greeter-operator.v0.2.0: greeter-operator.v0.2.0 replaces greeter-operator.v0.1.0, skips (none) and has olm.skipRange (none), none of which includes greeter-operator.v0.0.1 (0.0.1); OLM v1's default upgradeConstraintPolicy, CatalogProvided, refuses it: first render a version whose CSV replaces or skips greeter-operator.v0.0.1 or has an olm.skipRange holding 0.0.1, or set spec.upgradeConstraintPolicy: SelfCertified once you have checked this upgrade yourself`,
		setup: func(t *testing.T, dir string) []string {
			host, _ := bundletest.NewRegistry(t)
			bundletest.PushDemoVersion(t, host, filepath.Join(dir, "bundle"), "0.0.1", "greeter-operator.v0.0.0")
			bundletest.PushDemoVersion(t, host, filepath.Join(dir, "bundle"), "0.2.0", "greeter-operator.v0.1.0")
			write(t, filepath.Join(dir, "olm-cmp.yaml"), fmt.Appendf(nil, "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: greeter-operator}\nspec:\n  bundle: %s/demo/greeter-bundle:v0.2.0\n  namespace: greeter-system\n  upgradeFrom: v0.0.1\n", host))
			return []string{"--insecure-registry", host}
		}})

	// spec.acknowledge under strict: an entry that names no finding of the
	// upgrade is an error (a stale one must not pass a later finding).
	cases = append(cases, badCase{name: "upgrade/acknowledge-matches-nothing-strict",
		contains: []string{`strict: spec.acknowledge[0] "existingFieldRemoval greeters.greeter.example.com v1alpha1 .spec.gone" matched no safety finding of this upgrade: remove it (it was for another bump, or the finding's rule, crd, version or path differ)`},
		setup: func(t *testing.T, dir string) []string {
			fr := bundletest.NewFaultRegistry(t, bundletest.FaultOptions{})
			fr.PushDir(t, "greeter", "v1", filepath.Join(dir, "bundle"))
			fr.PushDir(t, "greeter", "v2", filepath.Join(dir, "bundle"))
			write(t, filepath.Join(dir, "olm-cmp.yaml"), fmt.Appendf(nil, "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata: {name: greeter-operator}\nspec:\n  bundle: %s/greeter:v2\n  namespace: greeter-system\n  upgradeFrom: v1\n  strict: true\n  acknowledge:\n  - {rule: existingFieldRemoval, crd: greeters.greeter.example.com, version: v1alpha1, path: .spec.gone, reason: judged}\n", fr.Host))
			return []string{"--insecure-registry", fr.Host}
		}})

	// Registry faults: the demo bundle on a fault-injecting registry.
	type fault struct {
		name  string
		where bundletest.Where
		f     bundletest.Fault
		want  []string
		args  []string
	}
	tag := bundletest.Where{Path: bundletest.TagPath("v1")}
	for _, f := range []fault{
		{"401-with-www-authenticate", tag, bundletest.Fault{Status: 401, Header: http.Header{"Www-Authenticate": {`Basic realm="registry"`}}}, []string{"401 Unauthorized", "log in to the registry"}, nil},
		{"401-without-www-authenticate", tag, bundletest.Fault{Status: 401}, []string{"401 Unauthorized"}, nil},
		{"403", tag, bundletest.Fault{Status: 403}, []string{"403 Forbidden"}, nil},
		{"404-tag", tag, bundletest.Fault{Status: 404}, []string{"404 Not Found", "check the image reference"}, nil},
		{"429-retry-after", tag, bundletest.Fault{Status: 429, Header: http.Header{"Retry-After": {"3600"}}}, []string{"429", "wait"}, nil},
		{"500", tag, bundletest.Fault{Status: 500}, []string{"500 Internal Server Error"}, nil},
		{"connection-reset", tag, bundletest.Fault{Reset: true}, []string{"closed the connection"}, nil},
		{"stall", tag, bundletest.Fault{Stall: true}, []string{"did not answer within 300ms", "--registry-timeout"}, []string{"--registry-timeout", "300ms"}},
		{"manifest-digest-mismatch", bundletest.Where{Path: bundletest.ManifestsPath + "sha256:"}, bundletest.Fault{Tamper: func(b []byte) []byte { return append(b, ' ') }}, []string{"sha256"}, nil},
		{"layer-reset-midway", bundletest.Where{Path: `/blobs/sha256:`}, bundletest.Fault{Reset: true, AfterBytes: 10}, []string{"closed the connection while fetching blob sha256:"}, nil},
	} {
		cases = append(cases, badCase{name: "registry/" + f.name, contains: f.want, setup: func(t *testing.T, dir string) []string {
			fr := bundletest.NewFaultRegistry(t, bundletest.FaultOptions{})
			fr.PushDir(t, "tiny", "v1", filepath.Join(dir, "bundle"))
			fr.Inject(f.where, f.f, -1)
			specFor(t, dir, fr.Host+"/tiny:v1")
			return append([]string{"--insecure-registry", fr.Host}, f.args...)
		}})
	}

	// Hostile images: layers no honest bundle builder writes.
	layerCase := func(name string, want []string, entries ...bundletest.Entry) badCase {
		return badCase{name: "image/" + name, contains: want, setup: func(t *testing.T, dir string) []string {
			fr := bundletest.NewFaultRegistry(t, bundletest.FaultOptions{})
			fr.Push(t, "evil", "v1", bundletest.Image(t, bundletest.Layer(t, entries...)))
			specFor(t, dir, fr.Host+"/evil:v1")
			return []string{"--insecure-registry", fr.Host}
		}}
	}
	ann := bundletest.File("metadata/annotations.yaml", "annotations:\n  operators.operatorframework.io.bundle.package.v1: evil\n")
	cases = append(cases,
		layerCase("dotdot-entry", []string{"../escape"}, ann, bundletest.File("../escape", "x")),
		layerCase("absolute-entry", []string{"/etc/evil"}, ann, bundletest.File("/etc/evil", "x")),
		layerCase("escaping-symlink", []string{"manifests/link.yaml"}, ann, bundletest.Symlink("manifests/link.yaml", "../../../etc/passwd")),
		layerCase("hard-link", []string{"manifests/hard.yaml"}, ann, bundletest.File("manifests/a.yaml", "x"), bundletest.Entry{Name: "manifests/hard.yaml", Type: tar.TypeLink, Linkname: "manifests/a.yaml"}),
		layerCase("no-manifests-dir", []string{"manifests"}, ann),
		badCase{name: "image/layer-not-gzip", contains: []string{"layer"}, setup: func(t *testing.T, dir string) []string {
			fr := bundletest.NewFaultRegistry(t, bundletest.FaultOptions{})
			fr.Push(t, "junk", "v1", bundletest.Image(t, static.NewLayer([]byte("this is not a tarball at all"), types.DockerLayer)))
			specFor(t, dir, fr.Host+"/junk:v1")
			return []string{"--insecure-registry", fr.Host}
		}},
		badCase{name: "image/allow-list", contains: []string{"registry not allowed", "--allowed-registries"}, setup: func(t *testing.T, dir string) []string {
			specFor(t, dir, "evil.example.com/operators/evil-bundle:v1")
			return []string{"--allowed-registries", "quay.io"}
		}},
	)
	return cases
}

// greeterCRD is the demo's CRD (JSON) with the given number of served
// versions, props string properties in spec, and with enum > 0 spec.mode
// with an enum of that many values; with noSchema its last version has no
// schema.
func greeterCRD(versions, props, enum int, noSchema bool) string {
	var b strings.Builder
	b.WriteString(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"greeters.greeter.example.com"},"spec":{"group":"greeter.example.com","names":{"kind":"Greeter","listKind":"GreeterList","plural":"greeters","singular":"greeter"},"scope":"Namespaced","versions":[`)
	for v := range versions {
		if v > 0 {
			b.WriteString(",")
		}
		name := "v1alpha1"
		if v > 0 {
			name = fmt.Sprintf("v%d", v+1)
		}
		fmt.Fprintf(&b, `{"name":%q,"served":true,"storage":%t`, name, v == 0)
		if noSchema && v == versions-1 {
			b.WriteString("}")
			continue
		}
		b.WriteString(`,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{`)
		for i := range props {
			fmt.Fprintf(&b, `"f%d":{"type":"string"},`, i)
		}
		b.WriteString(`"mode":{"type":"string"`)
		if enum > 0 {
			b.WriteString(`,"enum":[`)
			for e := range enum {
				if e > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, `"m%d"`, e)
			}
			b.WriteString("]")
		}
		b.WriteString(`}}}}}}}`)
	}
	b.WriteString(`]}}`)
	return b.String()
}

// TestBadInputInit is the corpus for olm-cmp init: every case fails with
// its one-line message, prints nothing on stdout, and leaves the target
// directory exactly as it was (no spec, no temporary file).
func TestBadInputInit(t *testing.T) {
	demo := mustAbs(t, "../../examples/demo/bundle")
	brokenBundle := func(t *testing.T, edit func(dir string)) string {
		b := filepath.Join(t.TempDir(), "bundle")
		badinput.CopyDir(t, demo, b)
		edit(b)
		return b
	}
	for _, c := range []struct {
		name string
		// setup returns the init arguments (after -d DIR) and the expected
		// error ($DIR: the target directory); the target is empty unless
		// setup writes into it.
		setup    func(t *testing.T, dir string) (args []string, want string)
		contains bool
	}{
		{"bundle-dir-missing", func(t *testing.T, dir string) ([]string, string) {
			return []string{"./no-such-bundle"}, "./no-such-bundle: no such directory: give a bundle directory (holding manifests/ and metadata/) or an image reference"
		}, false},
		{"bundle-is-a-file", func(t *testing.T, dir string) ([]string, string) {
			f := filepath.Join(t.TempDir(), "bundle.yaml")
			os.WriteFile(f, []byte("x: 1\n"), 0o644)
			return []string{f}, f + ": not a directory: give a bundle directory (holding manifests/ and metadata/) or an image reference"
		}, false},
		{"target-missing", func(t *testing.T, dir string) ([]string, string) {
			return []string{demo, "-d", filepath.Join(dir, "apps", "x")}, "--dir $DIR/apps/x: no such directory: create it first (mkdir -p $DIR/apps/x)"
		}, false},
		{"target-is-a-file", func(t *testing.T, dir string) ([]string, string) {
			os.WriteFile(filepath.Join(dir, "f"), nil, 0o644)
			return []string{demo, "-d", filepath.Join(dir, "f")}, "--dir $DIR/f: not a directory: give the directory to write olm-cmp.yaml into"
		}, false},
		{"target-unwritable", func(t *testing.T, dir string) ([]string, string) {
			ro := filepath.Join(dir, "ro")
			os.Mkdir(ro, 0o555)
			if f, err := os.CreateTemp(ro, "probe"); err == nil {
				f.Close()
				os.Remove(f.Name())
				t.Skip("running with permission to write anywhere (root)")
			}
			return []string{demo, "-d", ro}, "cannot write in $DIR/ro (permission denied): give -d a directory you can write to"
		}, false},
		{"bundle-csv-broken", func(t *testing.T, dir string) ([]string, string) {
			b := brokenBundle(t, func(b string) {
				os.WriteFile(filepath.Join(b, "manifests", "greeter-operator.clusterserviceversion.yaml"), []byte("apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata: [\n"), 0o644)
			})
			return []string{b}, b + ": manifests/greeter-operator.clusterserviceversion.yaml: document 1: yaml: line 3: did not find expected node content"
		}, true},
		{"bundle-file-broken", func(t *testing.T, dir string) ([]string, string) {
			b := brokenBundle(t, func(b string) {
				os.WriteFile(filepath.Join(b, "manifests", "junk.yaml"), []byte("kind: [\n"), 0o644)
			})
			return []string{b}, b + ": manifests/junk.yaml: document 1: yaml: line 1: did not find expected node content; if the operator does not need the objects of manifests/junk.yaml, skip the file: spec.excludeFiles: [manifests/junk.yaml] (or use another bundle version); with init: --exclude-file manifests/junk.yaml"
		}, false},
		{"bundle-without-metadata", func(t *testing.T, dir string) ([]string, string) {
			b := brokenBundle(t, func(b string) { os.RemoveAll(filepath.Join(b, "metadata")) })
			return []string{b}, b + ": metadata/annotations.yaml not found: a registry+v1 bundle needs it to name its package"
		}, false},
		{"spec-exists", func(t *testing.T, dir string) ([]string, string) {
			os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), []byte("# mine\n"), 0o644)
			return []string{demo}, "$DIR/olm-cmp.yaml exists: init never overwrites a spec; give --force to replace it, or -d another directory"
		}, false},
		{"spec-is-a-symlink", func(t *testing.T, dir string) ([]string, string) {
			shared := filepath.Join(t.TempDir(), "shared.yaml")
			os.WriteFile(shared, []byte("# shared\n"), 0o644)
			os.Symlink(shared, filepath.Join(dir, "olm-cmp.yaml"))
			return []string{demo, "--force"}, "$DIR/olm-cmp.yaml is a symbolic link: init does not write through it (what it leads to may be shared): remove the link first"
		}, false},
		{"spec-yml-beside", func(t *testing.T, dir string) ([]string, string) {
			os.WriteFile(filepath.Join(dir, "olm-cmp.yml"), []byte("# old\n"), 0o644)
			return []string{demo}, "$DIR/olm-cmp.yml exists: olm-cmp reads olm-cmp.yaml (and would read olm-cmp.yml as an extra manifest): rename or remove it first"
		}, false},
		{"extra-manifest-broken", func(t *testing.T, dir string) ([]string, string) {
			os.WriteFile(filepath.Join(dir, "cr.yaml"), []byte("kind: [\n"), 0o644)
			return []string{demo}, "extra manifest cr.yaml: document 1: yaml: line 1: did not find expected node content"
		}, false},
		{"catalog-without-package", func(t *testing.T, dir string) ([]string, string) {
			return []string{"--catalog", "./catalog"}, "--catalog needs --package: the package to install from the catalog"
		}, false},
		{"package-without-catalog", func(t *testing.T, dir string) ([]string, string) {
			return []string{demo, "--package", "p"}, "--package and --channel need --catalog"
		}, false},
		{"bundle-and-catalog", func(t *testing.T, dir string) ([]string, string) {
			return []string{demo, "--catalog", "./catalog", "--package", "p"}, "give either a bundle (" + demo + ") or --catalog, not both"
		}, false},
		{"version-with-a-directory", func(t *testing.T, dir string) ([]string, string) {
			return []string{demo, "--version", "1.0"}, `--version "1.0": only a bundle image or a catalog takes a version; "` + demo + `" is a directory`
		}, false},
		{"namespace-invalid", func(t *testing.T, dir string) ([]string, string) {
			return []string{demo, "-n", "Bad_NS\x1b[2J"}, `--namespace "Bad_NS\x1b[2J": not a namespace name: use at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit`
		}, false},
		{"registry-404", func(t *testing.T, dir string) ([]string, string) {
			fr := bundletest.NewFaultRegistry(t, bundletest.FaultOptions{})
			fr.PushDir(t, "tiny", "v1", demo)
			fr.Inject(bundletest.Where{Path: bundletest.TagPath("v1")}, bundletest.Fault{Status: 404}, -1)
			return []string{fr.Host + "/tiny:v1", "--insecure-registry", fr.Host}, "404 Not Found"
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args, want := c.setup(t, dir)
			before := snapshot(t, dir)
			out, _, err := run(t, append([]string{"init", "-d", dir, "--timeout", "20s"}, args...)...)
			if err == nil {
				t.Fatalf("init succeeded: %s", out)
			}
			if out != "" {
				t.Errorf("stdout: %q", out)
			}
			msg := strings.ReplaceAll(err.Error(), dir, "$DIR")
			for _, line := range strings.Split(msg, "\n") {
				if line == "" || strings.TrimLeft(line, " \t") != line {
					t.Errorf("a problem spreads over several lines: %q", msg)
				}
			}
			if strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine") {
				t.Errorf("reads like a crash: %s", msg)
			}
			if c.contains && !strings.Contains(msg, want) || !c.contains && msg != want {
				t.Errorf("error:\n  %s\nwant:\n  %s", msg, want)
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("the target directory changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// snapshot lists a directory tree with each file's content (a symbolic
// link as its target), for comparing before and after.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			fmt.Fprintf(&b, "%s -> %s; ", rel, target)
		case d.Type().IsRegular():
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&b, "%s %q; ", rel, data)
		default:
			fmt.Fprintf(&b, "%s/; ", rel)
		}
		return nil
	})
	return b.String()
}

// TestBadInputOutputDir is the corpus for render --output-dir: objects a
// repository may hold that once made the directory differ from stdout. Each
// case renders to stdout, then into a directory, and must give one file per
// object (no object written over another), each within the file-name bound,
// holding together exactly the objects of stdout.
func TestBadInputOutputDir(t *testing.T) {
	crd := func(group, plural, kind, listKind string) string {
		return fmt.Sprintf("---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: %s.%s}\nspec:\n  group: %s\n  names: {kind: %s, listKind: %s, plural: %s, singular: %s}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}\n",
			plural, group, group, kind, listKind, plural, plural)
	}
	cr := func(group, kind, name, ns string) string {
		s := fmt.Sprintf("---\napiVersion: %s/v1\nkind: %s\nmetadata:\n  name: %s\n", group, kind, name)
		if ns != "" {
			s += "  namespace: " + ns + "\n"
		}
		return s
	}
	longKind := "K" + strings.Repeat("k", 62)
	for _, c := range []struct {
		name, extra string
	}{
		// Widget w of two API groups in one namespace are numbered; the
		// number 1 was a third object's own name, written over (21 files
		// for 22 objects).
		{"numbered-name-is-another-objects", crd("a.example.com", "widgets", "Widget", "WidgetList") + crd("b.example.com", "widgets", "Widget", "WidgetList") +
			cr("a.example.com", "Widget", "w-greeter-system-1", "greeter-system") + cr("a.example.com", "Widget", "w", "greeter-system") + cr("b.example.com", "Widget", "w", "greeter-system")},
		// 63-character kind, 200-character name, two 63-character
		// namespaces: "file name too long", the render refused.
		{"name-too-long-for-a-filesystem", crd("c.example.com", strings.ToLower(longKind), longKind, "Ks") +
			cr("c.example.com", longKind, strings.Repeat("n", 200), strings.Repeat("a", 63)) + cr("c.example.com", longKind, strings.Repeat("n", 200), strings.Repeat("b", 63))},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "app")
			badinput.CopyDir(t, "../../examples/demo", dir)
			if err := os.WriteFile(filepath.Join(dir, "hostile.yaml"), []byte(c.extra), 0o644); err != nil {
				t.Fatal(err)
			}
			stream, _, err := run(t, "render", dir)
			if err != nil {
				t.Fatalf("stdout render: %v", err)
			}
			want := yamlObjects(t, stream)
			out := filepath.Join(t.TempDir(), "out")
			if _, _, err := run(t, "render", dir, "--output-dir", out); err != nil {
				t.Fatalf("--output-dir: %v", err)
			}
			entries, err := os.ReadDir(out)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			files := 0
			for _, e := range entries {
				if e.Name() == output.Marker {
					continue
				}
				files++
				if len(e.Name()) > output.MaxFileName {
					t.Errorf("%d-byte file name: %s", len(e.Name()), e.Name())
				}
				data, err := os.ReadFile(filepath.Join(out, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, yamlObjects(t, string(data))...)
			}
			if files != len(want) {
				t.Errorf("%d files for %d objects", files, len(want))
			}
			if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
				t.Errorf("the files hold other objects than stdout:\n%q\n%q", got, want)
			}
		})
	}
}

// TestBadInputUpgrade is the corpus for upgrade and diff --apps-from: a
// repository's Git config and Argo CD manifests written in ways git and
// Kubernetes read one way and a line-by-line reader another. Each case
// gives the exit status and a line of the output it must hold, and no
// file may change unless the case writes.
func TestBadInputUpgrade(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	bundletest.PushDemoVersion(t, host, "../../examples/demo/bundle", "0.1.0", "x")
	bundletest.PushDemoVersion(t, host, "../../examples/demo/bundle", "0.2.0", "greeter-operator.v0.1.0")
	spec := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata:\n  name: greeter\nspec:\n  bundle: " + host + "/demo/greeter-bundle\n  version: v0.2.0\n  namespace: greeter-system\n"
	app := func(source string) string {
		return "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: g}\nspec:\n" + source
	}
	source := func(version string) string {
		return "  source:\n    repoURL: https://github.com/org/gitops.git\n    path: g\n    plugin:\n      parameters:\n      - name: version\n        string: " + version + "\n"
	}
	dupWant := `Application g (app.yaml:1) may render g, but its key "spec.source" appears twice (lines 5 and 12): Kubernetes refuses such a manifest and other readers keep the last one, so upgrade cannot tell which one Argo CD reads: remove one of them`
	for _, c := range []struct {
		name, gitConfig, app string
		args                 []string
		status               int
		want                 string
	}{
		// The Application is this repository's (git reads the remote's URL
		// without the comment; from two quoted pieces): its v0.1.0 is what
		// renders today, not olm-cmp.yaml's v0.2.0.
		{"git-config-comment-after-url", "[remote \"origin\"]\n\turl = https://github.com/org/gitops.git ; the main remote\n", app(source("v0.1.0")), []string{"upgrade"}, 2, "  current     v0.1.0\n  where       Application g (app.yaml:1), parameter version\n"},
		{"git-config-url-continued", "[remote \"origin\"]\n\turl = \"https://github.com/\"\\\n\"org/gitops.git\"\n", app(source("v0.1.0")), []string{"upgrade"}, 2, "  current     v0.1.0\n  where       Application g (app.yaml:1), parameter version\n"},
		// source: twice: the last block is the one Kubernetes' readers
		// keep; upgrade --write edited the first.
		{"application-source-twice-write", "", app(source("v0.1.0") + source("v0.2.0")), []string{"upgrade", "--write"}, 1, dupWant},
		{"application-source-twice-diff", "", app(source("v0.1.0") + source("v0.2.0")), []string{"diff", "g", "g", "--apps-from", "app.yaml"}, diffRenderError, dupWant},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			os.MkdirAll(filepath.Join(root, ".git"), 0o755)
			os.MkdirAll(filepath.Join(root, "g"), 0o755)
			writeFile(t, filepath.Join(root, ".git", "config"), []byte(c.gitConfig))
			writeFile(t, filepath.Join(root, "g", "olm-cmp.yaml"), []byte(spec))
			writeFile(t, filepath.Join(root, "app.yaml"), []byte(c.app))
			before := snapshot(t, root)
			t.Chdir(root)
			args := c.args
			if args[0] == "upgrade" {
				args = append(args, "g")
			}
			out, stderr, code := runStatus(t, append(args, "--insecure-registry", host)...)
			if code != c.status || !strings.Contains(out+stderr, c.want) {
				t.Errorf("status %d, want %d and %q:\n%s%s", code, c.status, c.want, out, stderr)
			}
			if after := snapshot(t, root); after != before {
				t.Errorf("files changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}
