package deploy_test

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDockerfileBuildIsStatic runs the Dockerfile's own `go build` step (taken from the
// Dockerfile, so flags cannot drift) and checks the binary runs on distroless/static: no ELF
// interpreter, no shared-library dependencies, CGO disabled, trimmed paths. There is no Docker
// engine here, so the image itself is not built.
func TestDockerfileBuildIsStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary: skipped with -short")
	}
	img := parseDockerfile(t)
	if img.User != "999:999" || img.Env["HOME"] != "/tmp" || img.Files["/home/argocd/cmp-server/config/plugin.yaml"] != "plugin.yaml" ||
		!img.FromBuild["/usr/local/bin/olm-cmp"] || img.Files["/usr/local/bin/olm-cmp"] != img.BuildOut {
		t.Errorf("Dockerfile: user %q, env %v, files %v", img.User, img.Env, img.Files)
	}
	// The deployments' args start with the subcommand (serve): the image's
	// entrypoint is the binary alone, serve its default command.
	if strings.Join(img.Entrypoint, " ") != "/usr/local/bin/olm-cmp" || strings.Join(img.Cmd, " ") != "serve" {
		t.Errorf("Dockerfile: ENTRYPOINT %q CMD %q, want [/usr/local/bin/olm-cmp] [serve]", img.Entrypoint, img.Cmd)
	}
	out := dockerfileBinary(t)

	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("binary has an ELF interpreter (dynamically linked): distroless/static has no libc")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("binary needs shared libraries %v", libs)
	}
	bi, err := buildinfo.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" {
		t.Errorf("build settings CGO_ENABLED=%q -trimpath=%q", settings["CGO_ENABLED"], settings["-trimpath"])
	}
	v, err := exec.Command(out, "version").Output()
	if err != nil {
		t.Fatalf("olm-cmp version: %v", err)
	}
	if !bytes.Contains(v, []byte(testVersion)) {
		t.Errorf("version not stamped: %s", v)
	}
}

// testVersion is what dockerfileBinary stamps as ${VERSION}.
const testVersion = "v0.0.0-test"

// dockerfileBinary runs the Dockerfile's own `go build` step (taken from the
// Dockerfile, so flags cannot drift) once per test process and returns the
// binary.
func dockerfileBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary: skipped with -short")
	}
	built.once.Do(func() {
		img := parseDockerfile(t)
		if built.dir, built.err = os.MkdirTemp("", "olm-cmp-deploy"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "olm-cmp")
		cmdline := strings.ReplaceAll(img.BuildLine, img.BuildOut, built.path)
		cmdline = strings.ReplaceAll(cmdline, "${VERSION}", testVersion)
		cmd := exec.Command("sh", "-c", cmdline)
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
		built.out, built.err = cmd.CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("%s: %v\n%s", parseDockerfile(t).BuildLine, built.err, built.out)
	}
	return built.path
}
