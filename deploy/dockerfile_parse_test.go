package deploy_test

import (
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
)

// dockerImage is what the Dockerfile's final stage puts in the image: the
// files it copies (destination -> source, the build stage's output named as
// in the Dockerfile) and its config. Tests read it from the Dockerfile, so
// the image they assemble cannot drift from it.
type dockerImage struct {
	BuildLine  string            // the `RUN CGO_ENABLED=0 … go build …` of the build stage
	BuildOut   string            // that build's -o: the directory (ending in "/") it writes each command's binary to
	Files      map[string]string // final stage: destination -> source (build context or build output)
	FromBuild  map[string]bool   // destinations copied --from the build stage
	User       string
	Env        map[string]string
	Entrypoint []string
	Cmd        []string
}

// parseDockerfile reads ../Dockerfile's instructions this project uses
// (FROM, COPY, RUN, USER, ENV, ENTRYPOINT, CMD; exec-form JSON arrays);
// anything else in the final stage fails the test, so a new instruction is
// not silently left out of the comparison.
func parseDockerfile(t *testing.T) *dockerImage {
	t.Helper()
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	img := &dockerImage{Files: map[string]string{}, FromBuild: map[string]bool{}, Env: map[string]string{}}
	stage := 0
	for n, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		instr, rest, _ := strings.Cut(line, " ")
		exec := func() []string {
			var v []string
			if err := json.Unmarshal([]byte(rest), &v); err != nil {
				t.Fatalf("Dockerfile:%d: %s must be a JSON array: %v", n+1, instr, err)
			}
			return v
		}
		switch strings.ToUpper(instr) {
		case "FROM":
			stage++
			img.Files, img.FromBuild = map[string]string{}, map[string]bool{}
		case "RUN":
			if strings.HasPrefix(rest, "CGO_ENABLED=0 ") && strings.Contains(rest, " go build ") {
				img.BuildLine = rest
				f := strings.Fields(rest)
				for i := range f[:len(f)-1] {
					if f[i] == "-o" {
						img.BuildOut = f[i+1]
					}
				}
			} else if stage > 1 {
				t.Fatalf("Dockerfile:%d: RUN in the final stage: the OCI build (hack/ociimage) has no shell", n+1)
			}
		case "COPY":
			if stage < 2 {
				continue // the build stage's sources
			}
			f := strings.Fields(rest)
			from := false
			if strings.HasPrefix(f[0], "--from=") {
				from, f = true, f[1:]
			}
			if len(f) != 2 {
				t.Fatalf("Dockerfile:%d: COPY of one file expected: %s", n+1, line)
			}
			img.Files[f[1]] = f[0]
			img.FromBuild[f[1]] = from
		case "USER":
			img.User = rest
		case "ENV":
			k, v, _ := strings.Cut(rest, "=")
			img.Env[k] = v
		case "ENTRYPOINT":
			img.Entrypoint = exec()
		case "CMD":
			img.Cmd = exec()
		case "WORKDIR", "ARG":
			if stage > 1 && strings.ToUpper(instr) == "WORKDIR" {
				t.Fatalf("Dockerfile:%d: WORKDIR in the final stage is not compared", n+1)
			}
		default:
			t.Fatalf("Dockerfile:%d: instruction %s not understood by this test", n+1, instr)
		}
	}
	if img.BuildLine == "" || !strings.HasSuffix(img.BuildOut, "/") {
		t.Fatal("Dockerfile: no `RUN CGO_ENABLED=0 ... go build -o DIR/ ...` line (olm-cmp and olm-cmp-check, one build)")
	}
	return img
}

var built struct {
	once sync.Once
	dir  string // the build step's -o: every binary it writes
	err  error
	out  []byte
}

// TestMain removes the binary built once for the package's tests.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range []string{built.dir, ociBuilt.dir} {
		if d != "" {
			os.RemoveAll(d)
		}
	}
	os.Exit(code)
}
