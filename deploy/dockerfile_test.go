package deploy_test

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// TestDockerfileBuildIsStatic runs the Dockerfile's own `go build` step (taken from the
// Dockerfile, so flags cannot drift) and checks both binaries it copies into the image, olm-cmp
// and olm-cmp-check (which olm-cmp runs from beside itself), run on distroless/static: no ELF
// interpreter, no shared-library dependencies, CGO disabled, trimmed paths. There is no Docker
// engine here, so the image itself is not built.
func TestDockerfileBuildIsStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary: skipped with -short")
	}
	img := parseDockerfile(t)
	if img.User != "999:999" || img.Env["HOME"] != "/tmp" || img.Files["/home/argocd/cmp-server/config/plugin.yaml"] != "plugin.yaml" {
		t.Errorf("Dockerfile: user %q, env %v, files %v", img.User, img.Env, img.Files)
	}
	for _, name := range []string{"olm-cmp", "olm-cmp-check"} {
		if dst := "/usr/local/bin/" + name; !img.FromBuild[dst] || img.Files[dst] != img.BuildOut+name {
			t.Errorf("Dockerfile: %s is not the build step's %s%s: files %v", dst, img.BuildOut, name, img.Files)
		}
	}
	// The deployments' args start with the subcommand (serve): the image's
	// entrypoint is the binary alone, serve its default command.
	if strings.Join(img.Entrypoint, " ") != "/usr/local/bin/olm-cmp" || strings.Join(img.Cmd, " ") != "serve" {
		t.Errorf("Dockerfile: ENTRYPOINT %q CMD %q, want [/usr/local/bin/olm-cmp] [serve]", img.Entrypoint, img.Cmd)
	}
	for dst, src := range img.Files {
		if img.FromBuild[dst] {
			checkStatic(t, dockerfileBinary(t, path.Base(src)))
		}
	}
	v, err := exec.Command(dockerfileBinary(t, "olm-cmp"), "version").Output()
	if err != nil {
		t.Fatalf("olm-cmp version: %v", err)
	}
	if !bytes.Contains(v, []byte(testVersion)) {
		t.Errorf("version not stamped: %s", v)
	}
	checkHelperAnswers(t, exec.Command(dockerfileBinary(t, "olm-cmp-check")))
}

// checkStatic: bin runs where there is no libc (distroless/static): no ELF
// interpreter, no shared libraries, built with CGO off and -trimpath.
func checkStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has an ELF interpreter (dynamically linked): distroless/static has no libc", bin)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v", bin, libs)
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" {
		t.Errorf("%s: build settings CGO_ENABLED=%q -trimpath=%q", bin, settings["CGO_ENABLED"], settings["-trimpath"])
	}
}

// testVersion is what dockerfileBinary stamps as ${VERSION}.
const testVersion = "v0.0.0-test"

// dockerfileBinary runs the Dockerfile's own `go build` step (taken from the
// Dockerfile, so flags cannot drift) once per test process and returns the
// binary of that name it wrote.
func dockerfileBinary(t *testing.T, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary: skipped with -short")
	}
	built.once.Do(func() {
		img := parseDockerfile(t)
		if built.dir, built.err = os.MkdirTemp("", "olm-cmp-deploy"); built.err != nil {
			return
		}
		cmdline := strings.ReplaceAll(img.BuildLine, " -o "+img.BuildOut+" ", " -o "+built.dir+"/ ")
		cmdline = strings.ReplaceAll(cmdline, "${VERSION}", testVersion)
		cmd := exec.Command("sh", "-c", cmdline)
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
		built.out, built.err = cmd.CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("%s: %v\n%s", parseDockerfile(t).BuildLine, built.err, built.out)
	}
	return filepath.Join(built.dir, name)
}
