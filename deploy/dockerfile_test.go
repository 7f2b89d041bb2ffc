package deploy_test

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	df, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := string(df)
	for _, want := range []string{"FROM golang:1.26 AS build", "FROM gcr.io/distroless/static:nonroot", "USER 999:999",
		"COPY plugin.yaml /home/argocd/cmp-server/config/plugin.yaml", `ENTRYPOINT ["/usr/local/bin/olm-cmp", "serve"]`} {
		if !strings.Contains(text, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	m := regexp.MustCompile(`(?m)^RUN (CGO_ENABLED=0 .*go build .*)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("Dockerfile: no `RUN CGO_ENABLED=0 ... go build ...` line")
	}
	out := filepath.Join(t.TempDir(), "olm-cmp")
	cmdline := strings.ReplaceAll(m[1], "/out/olm-cmp", out)
	cmdline = strings.ReplaceAll(cmdline, "${VERSION}", "test")
	cmd := exec.Command("sh", "-c", cmdline)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmdline, err, b)
	}

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
	if !bytes.Contains(v, []byte("test")) {
		t.Errorf("version not stamped: %s", v)
	}
}
