package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
)

const demoBundle = "../../examples/demo/bundle"

// pinnedSpec writes an olm-cmp.yaml naming host's demo bundle at version.
func pinnedSpec(t *testing.T, host, version string) (dir, file string) {
	t.Helper()
	dir = t.TempDir()
	file = filepath.Join(dir, "olm-cmp.yaml")
	doc := "apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nmetadata:\n  name: greeter\nspec:\n  bundle: " + host + "/demo/greeter-bundle\n  version: " + version + "  # bump me\n  namespace: greeter-system\n"
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, file
}

func setVersion(t *testing.T, file, from, to string) {
	t.Helper()
	data, _ := os.ReadFile(file)
	if !strings.Contains(string(data), "version: "+from) {
		t.Fatalf("%s has no version %s:\n%s", file, from, data)
	}
	os.WriteFile(file, []byte(strings.Replace(string(data), "version: "+from, "version: "+to, 1)), 0o644)
}

// TestPinBumpAndMovedTag: resolve --write keeps spec.version and pins
// spec.digest beside it; a bump of the version alone, and a tag pushed
// again, are errors naming both digests and the fix, never a render of
// either image.
func TestPinBumpAndMovedTag(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	old := bundletest.PushDemoVersion(t, host, demoBundle, "0.10.2", "greeter-operator.v0.10.1")
	newer := bundletest.PushDemoVersion(t, host, demoBundle, "0.11.0", "greeter-operator.v0.10.2")
	dir, file := pinnedSpec(t, host, "v0.10.2")
	repo := host + "/demo/greeter-bundle"

	out, stderr, code := runStatus(t, "resolve", dir, "--write", "--insecure-registry", host)
	if code != 0 || !strings.Contains(out, "pinned "+file) {
		t.Fatalf("resolve --write: %d\n%s%s", code, out, stderr)
	}
	written, _ := os.ReadFile(file)
	want := "  bundle: " + repo + "\n  version: v0.10.2  # bump me\n  digest: \"" + old + "\"\n  namespace: greeter-system\n"
	if !strings.HasSuffix(string(written), want) {
		t.Fatalf("pinned file:\n%s\nwant it to end with:\n%s", written, want)
	}

	// The bump: one line changed, the pin left behind.
	setVersion(t, file, "v0.10.2", "v0.11.0")
	_, stderr, code = runStatus(t, "render", dir, "--insecure-registry", host)
	wantErr := "spec.version is v0.11.0 but spec.digest pins 0.10.2 (" + old + "); " + repo + ":v0.11.0 is 0.11.0 (" + newer + "): run olm-cmp resolve --write to pin it, or delete the digest line"
	if code == 0 || !strings.Contains(stderr, wantErr) {
		t.Errorf("render of a bumped version with the old pin: status %d, stderr:\n%s\nwant:\n%s", code, stderr, wantErr)
	}
	// resolve --write pins the bump; the render follows.
	if out, stderr, code := runStatus(t, "resolve", dir, "--write", "--insecure-registry", host); code != 0 {
		t.Fatalf("resolve --write after the bump: %d\n%s%s", code, out, stderr)
	}
	if got, _ := os.ReadFile(file); !strings.Contains(string(got), "digest: \""+newer+"\"") || strings.Count(string(got), "digest:") != 1 {
		t.Errorf("the pin did not move to %s:\n%s", newer, got)
	}
	if out, stderr, code := runStatus(t, "render", dir, "--insecure-registry", host); code != 0 || !strings.Contains(out, "greeter-operator@0.11.0") {
		t.Errorf("render after resolve --write: %d\n%s", code, stderr)
	}

	// The tag moved: 0.11.0 pushed again with other content.
	moved := bundletest.PushDemoVersion(t, host, demoBundle, "0.11.0", "greeter-operator.v0.10.1")
	_, stderr, code = runStatus(t, "render", dir, "--insecure-registry", host)
	wantErr = "spec.digest pins " + newer + " (0.11.0), but the tag " + repo + ":v0.11.0 now points to " + moved + " (0.11.0 too): the tag moved since it was pinned; review the new image (olm-cmp diff --to-bundle " + repo + ":v0.11.0), then run olm-cmp resolve --write to pin it, or delete the version line to keep the pinned one"
	if code == 0 || !strings.Contains(stderr, wantErr) {
		t.Errorf("render after the tag moved: status %d, stderr:\n%s\nwant:\n%s", code, stderr, wantErr)
	}
}

// TestPinInReference: a reference written repo:tag@sha256:… (what resolve
// --write wrote before spec.digest) is checked the same way, and resolve
// --write moves it to spec.version and spec.digest.
func TestPinInReference(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	old := bundletest.PushDemoVersion(t, host, demoBundle, "0.10.2", "greeter-operator.v0.10.1")
	repo := host + "/demo/greeter-bundle"
	dir := t.TempDir()
	file := filepath.Join(dir, "olm-cmp.yaml")
	os.WriteFile(file, []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: "+repo+":v0.10.2@"+old+"\n  namespace: greeter-system\n"), 0o644)
	if _, stderr, code := runStatus(t, "render", dir, "--insecure-registry", host); code != 0 {
		t.Fatalf("render of a tag@digest that still agree: %d %s", code, stderr)
	}
	moved := bundletest.PushDemoVersion(t, host, demoBundle, "0.10.2", "greeter-operator.v0.10.0")
	_, stderr, code := runStatus(t, "render", dir, "--insecure-registry", host)
	wantErr := "spec.bundle pins " + old + " (0.10.2), but the tag " + repo + ":v0.10.2 now points to " + moved + " (0.10.2 too): the tag moved since it was pinned; review the new image (olm-cmp diff --to-bundle " + repo + ":v0.10.2), then run olm-cmp resolve --write to pin it, or drop the tag (" + repo + "@" + old + ") to keep the pinned one"
	if code == 0 || !strings.Contains(stderr, wantErr) {
		t.Errorf("moved tag in the reference: status %d\n%s\nwant:\n%s", code, stderr, wantErr)
	}
	if out, stderr, code := runStatus(t, "resolve", dir, "--write", "--insecure-registry", host); code != 0 {
		t.Fatalf("resolve --write: %d\n%s%s", code, out, stderr)
	}
	got, _ := os.ReadFile(file)
	if want := "spec:\n  bundle: " + repo + "\n  version: \"v0.10.2\"\n  digest: \"" + moved + "\"\n  namespace: greeter-system\n"; !strings.HasSuffix(string(got), want) {
		t.Errorf("resolve --write of a tag@digest reference:\n%s\nwant it to end with:\n%s", got, want)
	}
}

// TestPinAndVersionParameter: the plugin's version parameter (here through
// generate, the classic mode) and a pinned olm-cmp.yaml agree when the
// version is the pinned one, and refuse each other clearly when not.
func TestPinAndVersionParameter(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	old := bundletest.PushDemoVersion(t, host, demoBundle, "0.10.2", "greeter-operator.v0.10.1")
	newer := bundletest.PushDemoVersion(t, host, demoBundle, "0.11.0", "greeter-operator.v0.10.2")
	t.Setenv("OLM_CMP_INSECURE_REGISTRIES", host)
	for _, form := range []struct{ name, spec string }{
		{"spec.digest", "  bundle: " + host + "/demo/greeter-bundle\n  version: v0.10.2\n  digest: " + old + "\n"},
		{"tag@digest", "  bundle: " + host + "/demo/greeter-bundle:v0.10.2@" + old + "\n"},
		{"digest alone", "  bundle: " + host + "/demo/greeter-bundle@" + old + "\n"},
	} {
		t.Run(form.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n"+form.spec+"  namespace: greeter-system\n"), 0o644)
			t.Setenv("ARGOCD_APP_PARAMETERS", `[{"name":"version","string":"v0.10.2"}]`)
			if out, stderr, err := run(t, "generate", dir); err != nil || !strings.Contains(out, "greeter-operator@0.10.2") {
				t.Errorf("version parameter equal to the pin: %v\n%s", err, stderr)
			}
			t.Setenv("ARGOCD_APP_PARAMETERS", `[{"name":"version","string":"v0.11.0"}]`)
			out, _, err := run(t, "generate", dir)
			want := "spec.version is v0.11.0 but " + map[bool]string{true: "spec.digest", false: "spec.bundle"}[form.name == "spec.digest"] + " pins 0.10.2 (" + old + "); " + host + "/demo/greeter-bundle:v0.11.0 is 0.11.0 (" + newer + ")"
			if form.name == "tag@digest" {
				want = "spec.version is v0.11.0 but spec.bundle \"" + host + "/demo/greeter-bundle:v0.10.2@" + old + "\" is pinned to its tag v0.10.2"
			}
			if err == nil || out != "" || !strings.Contains(err.Error(), want) {
				t.Errorf("version parameter other than the pin: %v\nwant: %s", err, want)
			}
			// resolve --write would pin the file's version again: the fix
			// is the digest parameter beside the version, or one pin.
			if form.name == "spec.digest" {
				fix := `: the version parameter (or plugin env) replaced spec.version "v0.10.2" of olm-cmp.yaml, whose spec.digest pins that version: give the digest parameter "` + newer + `" beside it, or delete spec.digest from olm-cmp.yaml to pin in one place`
				if err == nil || !strings.HasSuffix(err.Error(), fix) {
					t.Errorf("the fix of a version parameter against a pinned file: %v\nwant it to end with: %s", err, fix)
				}
				// An ApplicationSet element's digest left behind by a bump of
				// its version, the file unpinned.
				unpinned := t.TempDir()
				os.WriteFile(filepath.Join(unpinned, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: "+host+"/demo/greeter-bundle\n  namespace: greeter-system\n"), 0o644)
				t.Setenv("ARGOCD_APP_PARAMETERS", `[{"name":"version","string":"v0.11.0"},{"name":"digest","string":"`+old+`"}]`)
				_, _, err := run(t, "generate", unpinned)
				fix = `: the digest parameter (or plugin env) sets spec.digest: give it "` + newer + `", the image of version v0.11.0 today (after reviewing it), or leave it empty`
				if err == nil || !strings.HasSuffix(err.Error(), fix) {
					t.Errorf("the fix of a stale digest parameter: %v\nwant it to end with: %s", err, fix)
				}
			}
			// The ApplicationSet way: version and digest parameters together.
			t.Setenv("ARGOCD_APP_PARAMETERS", `[{"name":"version","string":"v0.11.0"},{"name":"digest","string":"`+newer+`"}]`)
			out, stderr, err := run(t, "generate", dir)
			if form.name == "spec.digest" && (err != nil || !strings.Contains(out, "greeter-operator@0.11.0")) {
				t.Errorf("version and digest parameters: %v\n%s", err, stderr)
			}
		})
	}
}

// TestResolveWritesThroughSymlink: a symlinked olm-cmp.yaml (one spec shared
// by several directories) is pinned in its target; the link stays a link.
func TestResolveWritesThroughSymlink(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	d := bundletest.PushDemoVersion(t, host, demoBundle, "0.10.2", "greeter-operator.v0.10.1")
	shared, target := pinnedSpec(t, host, "v0.10.2")
	os.WriteFile(target, []byte(strings.ReplaceAll(mustRead(t, target), "\n", "\r\n")), 0o644)
	dir := t.TempDir()
	link := filepath.Join(dir, "olm-cmp.yaml")
	if err := os.Symlink(filepath.Join(shared, "olm-cmp.yaml"), link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	out, stderr, code := runStatus(t, "resolve", dir, "--write", "--insecure-registry", host)
	if code != 0 || !strings.Contains(out, "pinned "+link+" (in "+target) {
		t.Fatalf("resolve --write through a link: %d\n%s%s", code, out, stderr)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced by a file")
	}
	got := mustRead(t, target)
	if !strings.Contains(got, "  digest: \""+d+"\"\r\n") || strings.Count(got, "\n") != strings.Count(got, "\r\n") {
		t.Errorf("target not pinned, or line endings mixed:\n%q", got)
	}
}

func mustRead(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// catalogOf writes a file-based catalog in dir/catalog listing host's demo
// bundle at each version (tag v<version>).
func catalogOf(t *testing.T, host, dir string, versions ...string) string {
	t.Helper()
	cat := filepath.Join(dir, "catalog")
	os.MkdirAll(cat, 0o755)
	fbc := `{"schema": "olm.package", "name": "greeter-operator"}` + "\n"
	entries := []string{}
	for _, v := range versions {
		entries = append(entries, `{"name": "g.v`+v+`"}`)
		fbc += `{"schema": "olm.bundle", "name": "g.v` + v + `", "package": "greeter-operator", "image": "` + host + `/demo/greeter-bundle:v` + v + `", "properties": [{"type": "olm.package", "value": {"packageName": "greeter-operator", "version": "` + v + `"}}]}` + "\n"
	}
	fbc += `{"schema": "olm.channel", "name": "stable", "package": "greeter-operator", "entries": [` + strings.Join(entries, ", ") + `]}` + "\n"
	if err := os.WriteFile(filepath.Join(cat, "catalog.json"), []byte(fbc), 0o644); err != nil {
		t.Fatal(err)
	}
	return cat
}

// TestPinCatalog: with a catalog, spec.digest pins the bundle the catalog
// chooses; a bumped version with the old pin is refused, and a catalog
// image written catalog:tag@sha256:… whose tag moved is refused too.
func TestPinCatalog(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	old := bundletest.PushDemoVersion(t, host, demoBundle, "0.10.2", "greeter-operator.v0.10.1")
	newer := bundletest.PushDemoVersion(t, host, demoBundle, "0.11.0", "greeter-operator.v0.10.2")
	dir := t.TempDir()
	catalogOf(t, host, dir, "0.10.2", "0.11.0")
	file := filepath.Join(dir, "olm-cmp.yaml")
	os.WriteFile(file, []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  catalog: ./catalog\n  package: greeter-operator\n  version: 0.10.x\n  namespace: demo\n"), 0o644)
	if out, stderr, code := runStatus(t, "resolve", dir, "--write", "--insecure-registry", host); code != 0 {
		t.Fatalf("resolve --write: %d\n%s%s", code, out, stderr)
	}
	if got := mustRead(t, file); !strings.Contains(got, "  version: 0.10.2\n  digest: \""+old+"\"\n") {
		t.Fatalf("catalog spec not pinned:\n%s", got)
	}
	setVersion(t, file, "0.10.2", "0.11.0")
	_, stderr, code := runStatus(t, "render", dir, "--insecure-registry", host)
	want := `spec.version "0.11.0" chose 0.11.0 but spec.digest pins 0.10.2 (` + old + `); spec.catalog "./catalog" gives 0.11.0 as ` + host + `/demo/greeter-bundle@` + newer + `: run olm-cmp resolve --write to pin it, or delete the digest line`
	if code == 0 || !strings.Contains(stderr, want) {
		t.Errorf("catalog bump with the old pin: %d\n%s\nwant:\n%s", code, stderr, want)
	}

	// A catalog image pinned in its reference, whose tag then moves.
	catDigest := bundletest.Push(t, host, "demo/catalog", "latest", bundletest.CatalogImage(t, filepath.Join(dir, "catalog"), "/configs"))
	ref := host + "/demo/catalog:latest@" + catDigest
	os.WriteFile(file, []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  catalog: "+ref+"\n  package: greeter-operator\n  namespace: demo\n"), 0o644)
	if _, stderr, code := runStatus(t, "render", dir, "--insecure-registry", host); code != 0 {
		t.Fatalf("render of a catalog pinned in its reference: %d %s", code, stderr)
	}
	moved := bundletest.Push(t, host, "demo/catalog", "latest", bundletest.CatalogImage(t, catalogOf(t, host, t.TempDir(), "0.10.2"), "/configs"))
	_, stderr, code = runStatus(t, "render", dir, "--insecure-registry", host)
	want = `spec.catalog "` + ref + `": the tag latest now points to ` + moved + `, not the pinned ` + catDigest + `: run olm-cmp resolve --write (it pins the chosen bundle in spec.digest and lets the catalog's tag move), or drop the tag (` + host + `/demo/catalog@` + catDigest + `) to keep this catalog`
	if code == 0 || !strings.Contains(stderr, want) {
		t.Errorf("moved catalog tag: %d\n%s\nwant:\n%s", code, stderr, want)
	}
	if out, stderr, code := runStatus(t, "resolve", dir, "--write", "--insecure-registry", host); code != 0 {
		t.Fatalf("resolve --write: %d\n%s%s", code, out, stderr)
	}
	if got := mustRead(t, file); !strings.Contains(got, "  catalog: "+host+"/demo/catalog:latest\n  package: greeter-operator\n  version: \"0.10.2\"\n  digest: \""+old+"\"\n") {
		t.Errorf("resolve --write of a tag@digest catalog:\n%s", got)
	}
}

// TestSpecFlagsReplaceWhatTheyMust: a spec flag that the spec's shape
// cannot take as is replaces what it makes meaningless, and says so.
func TestSpecFlagsReplaceWhatTheyMust(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	old := bundletest.PushDemoVersion(t, host, demoBundle, "0.10.2", "greeter-operator.v0.10.1")
	bundletest.PushDemoVersion(t, host, demoBundle, "0.11.0", "greeter-operator.v0.10.2")
	repo := host + "/demo/greeter-bundle"
	pinned := "  bundle: " + repo + "\n  version: v0.10.2\n  digest: " + old + "\n  namespace: greeter-system\n  watchNamespaces: [greeter-system]\n"
	catalogSpec := "  catalog: ./catalog\n  package: greeter-operator\n  version: 0.10.x\n  namespace: greeter-system\n"
	for _, tc := range []struct {
		name, spec string
		args       []string
		// warn are the warning lines; want is in stdout.
		warn []string
		want string
	}{
		{"-n moves the watched install namespace", pinned, []string{"-n", "moved"},
			[]string{`warning: -n moved: spec.watchNamespaces[0] "greeter-system" was the install namespace and becomes "moved" too (give --watch-namespace to choose otherwise)`},
			"namespace: moved"},
		{"--version on a pinned spec drops the pin", pinned, []string{"--version", "v0.11.0"},
			[]string{"warning: --version v0.11.0: spec.digest " + old + " pinned the spec's own bundle and is not used"},
			"greeter-operator@0.11.0"},
		{"--version on a tag@digest reference", "  bundle: " + repo + ":v0.10.2@" + old + "\n  namespace: greeter-system\n", []string{"--version", "v0.11.0"},
			[]string{`warning: --version v0.11.0 replaces the tag or digest of spec.bundle "` + repo + ":v0.10.2@" + old + `"`},
			"greeter-operator@0.11.0"},
		{"--bundle on a catalog spec drops the catalog", catalogSpec, []string{"--bundle", repo + ":v0.11.0"},
			[]string{`warning: --bundle ` + repo + `:v0.11.0 replaces the catalog: spec.catalog "./catalog", spec.package "greeter-operator", spec.channel "" and the version range "0.10.x" are not used`},
			"greeter-operator@0.11.0"},
		{"--bundle with its own tag drops spec.version", pinned, []string{"--bundle", repo + ":v0.11.0"},
			[]string{`warning: --bundle ` + repo + `:v0.11.0 has its own tag or digest: spec.version "v0.10.2" is not used`, "warning: --bundle " + repo + ":v0.11.0: spec.digest " + old + " pinned the spec's own bundle and is not used"},
			"greeter-operator@0.11.0"},
		{"--catalog on a bundle spec drops the bundle", pinned, []string{"--catalog", "./catalog", "--package", "greeter-operator"},
			[]string{`warning: --catalog ./catalog replaces the bundle: spec.bundle "` + repo + `" is not used`, `warning: --catalog ./catalog: spec.version "v0.10.2" was the image's tag and is not used (the newest version is chosen; give --version for a range)`},
			"greeter-operator@0.11.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			catalogOf(t, host, dir, "0.10.2", "0.11.0")
			os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n"+tc.spec), 0o644)
			wd, _ := os.Getwd()
			os.Chdir(dir) // --catalog ./catalog is relative to the working directory
			defer os.Chdir(wd)
			out, stderr, code := runStatus(t, append([]string{"render", dir, "--insecure-registry", host}, tc.args...)...)
			if code != 0 || !strings.Contains(out, tc.want) {
				t.Fatalf("status %d, want %q in the output\n%s", code, tc.want, stderr)
			}
			if slices.Contains(tc.args, "-n") && strings.Contains(out, "greeter-system") {
				t.Errorf("-n left objects in the old install namespace:\n%s", out)
			}
			for _, w := range tc.warn {
				if !strings.Contains(stderr, w+"\n") {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestPinWithUpgradeFrom: spec.digest pins TO's bundle, never the bundle of
// spec.upgradeFrom, which is resolved by its own tag.
func TestPinWithUpgradeFrom(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	bundletest.PushDemoVersion(t, host, demoBundle, "0.10.2", "greeter-operator.v0.10.1")
	newer := bundletest.PushDemoVersion(t, host, demoBundle, "0.11.0", "greeter-operator.v0.10.2")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: "+host+"/demo/greeter-bundle\n  version: v0.11.0\n  digest: "+newer+"\n  upgradeFrom: v0.10.2\n  namespace: greeter-system\n"), 0o644)
	if out, stderr, code := runStatus(t, "render", dir, "--insecure-registry", host); code != 0 || !strings.Contains(out, "greeter-operator@0.11.0") {
		t.Errorf("pinned spec with upgradeFrom: %d\n%s", code, stderr)
	}
}

// TestCatalogFlagIsRelativeToTheWorkingDirectory: --catalog ./DIR is where
// the shell completed it, as --bundle ./DIR and init --catalog are, not
// beside DIR/olm-cmp.yaml.
func TestCatalogFlagIsRelativeToTheWorkingDirectory(t *testing.T) {
	host, _ := bundletest.NewRegistry(t)
	bundletest.PushDemoVersion(t, host, demoBundle, "0.10.2", "greeter-operator.v0.10.1")
	work := t.TempDir()
	catalogOf(t, host, work, "0.10.2")
	dir := t.TempDir() // the spec, elsewhere
	os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ./bundle\n  namespace: greeter-system\n"), 0o644)
	wd, _ := os.Getwd()
	os.Chdir(work)
	defer os.Chdir(wd)
	out, stderr, code := runStatus(t, "render", dir, "--insecure-registry", host, "--catalog", "./catalog", "--package", "greeter-operator")
	if code != 0 || !strings.Contains(out, "greeter-operator@0.10.2") {
		t.Errorf("render --catalog ./catalog from the catalog's parent: status %d\n%s", code, stderr)
	}
	if _, stderr, code := runStatus(t, "render", dir, "--catalog", "./missing", "--package", "greeter-operator"); code == 0 || !strings.Contains(stderr, "--catalog ./missing: no such directory (a path is relative to the working directory)") {
		t.Errorf("render --catalog ./missing: status %d\n%s", code, stderr)
	}
}
