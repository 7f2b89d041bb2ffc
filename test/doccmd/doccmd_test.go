// Package doccmd checks that the commands README.md and docs/*.md show a
// user still work: each one that needs no network and no cluster is run from
// the repository root with a freshly built olm-cmp first on PATH, and must
// exit 0.
package doccmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
	"github.com/olm-cmp/olm-cmp/internal/demoregistry"
	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// minCommands is how many commands the docs hold that this test can run
// (README's "Try it" block alone has more): fewer means the extraction
// broke, and the test would pass without checking anything.
const minCommands = 8

const root = "../.."

// command is one shell command found in a document.
type command struct {
	file string
	line int
	text string
	// synopsis: another line of its block has placeholders, so the block
	// shows usage (olm-cmp generate there runs in the plugin's directory).
	synopsis bool
}

func (c command) String() string { return fmt.Sprintf("%s:%d: %s", c.file, c.line, c.text) }

func TestDocCommands(t *testing.T) {
	bin := t.TempDir()
	// olm-cmp and, beside it, the olm-cmp-check it runs, as installed.
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "./cmd/olm-cmp", "./cmd/olm-cmp-check")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building olm-cmp: %v\n%s", err, out)
	}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append([]string{filepath.Join(root, "README.md")}, docs...)
	var cmds []command
	for _, d := range docs {
		cmds = append(cmds, extract(t, d)...)
	}
	// README's offline registry walk runs against the demo registry it
	// tells the user to start, here in-process on a port of its own.
	demoHost, _ := bundletest.NewRegistry(t)
	if _, err := demoregistry.Populate(demoHost, root); err != nil {
		t.Fatal(err)
	}
	demo := strings.NewReplacer(demoRegistry, demoHost, demoDir, filepath.Join(t.TempDir(), "greeter"))
	env := append(os.Environ(),
		"OLM_CMP_INSECURE_REGISTRIES="+demoHost,
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"OLM_CMP_CACHE_DIR="+t.TempDir(),
		"GOBIN="+t.TempDir(), // make install's directory: never the user's
	)
	ran, checked := 0, 0
	for _, c := range cmds {
		why := skipReason(c.text)
		if c.synopsis && why == "" {
			why = "its block is a synopsis (another line has placeholders)"
		}
		if why != "" && strings.HasPrefix(c.text, "olm-cmp ") {
			// What cannot run can still be checked: its subcommand and
			// every flag it names exist.
			checked++
			t.Run(fmt.Sprintf("%s:%d/flags", c.file, c.line), func(t *testing.T) { checkSynopsis(t, filepath.Join(bin, "olm-cmp"), c) })
		}
		if why != "" {
			t.Logf("skipped %s\n    because %s", c, why)
			continue
		}
		ran++
		t.Run(fmt.Sprintf("%s:%d", c.file, c.line), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			sh := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", demo.Replace(c.text))
			sh.Dir = root
			sh.Env = env
			var stderr bytes.Buffer
			sh.Stdout, sh.Stderr = nil, &stderr
			err := sh.Run()
			var exit *exec.ExitError
			if errors.As(err, &exit) && exit.ExitCode() == 1 && strings.HasPrefix(c.text, "olm-cmp diff ") && !strings.Contains(c.text, "|") {
				// diff's documented status for "the renders differ" (docs/diff.md)
				err = nil
			}
			if errors.As(err, &exit) && exit.ExitCode() == 2 && strings.HasPrefix(c.text, "olm-cmp upgrade ") && !strings.Contains(c.text, "|") {
				// upgrade's documented status for "an upgrade is available" (docs/upgrade.md)
				err = nil
			}
			if err != nil {
				t.Errorf("%s\nfailed: %v\n%s", c, err, tail(stderr.String()))
			}
		})
	}
	t.Logf("ran %d of the %d commands found; checked the subcommand and flags of %d more", ran, len(cmds), checked)
	if ran < minCommands {
		t.Errorf("ran %d commands, want at least %d: did the extraction of fenced blocks break?", ran, minCommands)
	}
}

// extract returns the commands of path's code blocks: every line of a
// fenced block in a shell language (sh, bash, shell); in an unnamed or
// console block, and in indented (4-space) code, the lines that start with
// a program a user runs (olm-cmp, make, kubectl, ...: see programs), since
// such blocks also hold diagrams and output. In a block that has "$ "
// prompts, only the prompted lines are commands. A line ending in "\"
// continues on the next.
func extract(t *testing.T, path string) []command {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(root, path)
	var (
		out     []command
		inFence bool
		shell   bool
		block   []command
	)
	flush := func() {
		prompted := slices.ContainsFunc(block, func(c command) bool { return strings.HasPrefix(c.text, "$ ") })
		synopsis := slices.ContainsFunc(block, func(c command) bool { return placeholderRE.MatchString(c.text) })
		for _, c := range block {
			c.synopsis = synopsis
			if prompted {
				if !strings.HasPrefix(c.text, "$ ") {
					continue
				}
				c.text = strings.TrimPrefix(c.text, "$ ")
			}
			out = append(out, c)
		}
		block = nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	var (
		pending *command
		anyLine bool // the block is in a shell language: every line is a command
	)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			if inFence {
				flush()
			} else {
				lang := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(trimmed, "```")))
				shell = lang == "" || lang == "sh" || lang == "bash" || lang == "shell" || lang == "console"
				anyLine = lang == "sh" || lang == "bash" || lang == "shell"
			}
			inFence = !inFence
			continue
		}
		indented := !inFence && strings.HasPrefix(line, "    ") && startsWithProgram(trimmed)
		if pending == nil && !indented && !(inFence && shell && (anyLine || startsWithProgram(trimmed))) {
			continue
		}
		if pending != nil {
			pending.text += " " + strings.TrimSuffix(trimmed, "\\")
		} else if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		} else {
			pending = &command{file: rel, line: n, text: strings.TrimSuffix(trimmed, "\\")}
		}
		if strings.HasSuffix(trimmed, "\\") {
			continue
		}
		pending.text = strings.TrimSpace(stripComment(pending.text))
		block = append(block, *pending)
		pending = nil
		if indented {
			flush()
		}
	}
	return out
}

// startsWithProgram reports whether line (maybe after a "$ " prompt and
// VAR=value assignments) starts with a program a user runs.
func startsWithProgram(line string) bool {
	words := strings.Fields(strings.TrimPrefix(line, "$ "))
	for len(words) > 0 && strings.Contains(words[0], "=") {
		words = words[1:]
	}
	if len(words) == 0 {
		return false
	}
	_, network := networkPrograms[words[0]]
	return network || words[0] == "olm-cmp" || words[0] == "make"
}

// stripComment drops a trailing "# comment" outside quotes.
func stripComment(s string) string {
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i]
		}
	}
	return s
}

// Programs that reach a cluster, a registry, a container daemon or the
// network whatever their arguments.
var networkPrograms = map[string]string{
	"kubectl": "needs a cluster", "helm": "needs a cluster or chart repository", "argocd": "needs an Argo CD server",
	"oc": "needs a cluster", "kind": "creates a cluster", "docker": "needs a container daemon or registry",
	"podman": "needs a container runtime or registry", "curl": "needs a server", "wget": "needs the network",
	"git": "may reach a remote", "go": "builds and tests belong to `make test`",
}

// demoRegistry and demoDir are what README's offline walk names: the
// registry `make demo-registry` serves, and the directory it writes a spec
// into. The test runs those commands against its own demo registry and
// directory.
const (
	demoRegistry = "localhost:5000"
	demoDir      = "/tmp/greeter"
)

// fastMakeTargets are the make targets quick and offline enough to run here.
var fastMakeTargets = map[string]bool{"demo": true, "build": true, "install": true}

// longRunning olm-cmp subcommands never exit on their own.
var longRunning = map[string]bool{"serve": true}

var (
	// A registry host: a first path segment with a dot or a port
	// (quay.io/..., registry.example.com:5000/...), or a URL.
	registryRE = regexp.MustCompile(`(^|[\s='"@])([a-z0-9-]+\.)+[a-z]{2,}(:\d+)?/|https?://`)
	// Synopsis placeholders: [DIR], <commit>, REF|DIR, an upper-case word.
	placeholderRE = regexp.MustCompile(`\[[^\]]*\]|<[a-z][^>]*>|\b[A-Z][A-Z_]*\|[A-Z]|(^|\s)[A-Z][A-Z0-9_]*(\s|$)|…|\.\.\.`)
	// Output to a file (a doc command must not change the checkout).
	redirectRE = regexp.MustCompile(`(^|[^0-9&])>\s*[^&/\s]|>\s*\./|>>`)
)

// skipReason says why a command cannot run here, or "" when it can.
func skipReason(cmd string) string {
	if placeholderRE.MatchString(cmd) {
		return "it is a synopsis with placeholders, not a command"
	}
	if redirectRE.MatchString(cmd) {
		return "it writes a file in the checkout"
	}
	if strings.Contains(cmd, "../shared") {
		if _, err := os.Stat(filepath.Join(root, "..", "shared")); err != nil {
			return "../shared (the reference data) is absent"
		}
	}
	if registryRE.MatchString(cmd) {
		return "it names a registry or URL"
	}
	for _, seg := range regexp.MustCompile(`\|\||&&|[|;]`).Split(cmd, -1) {
		words := strings.Fields(seg)
		for len(words) > 0 && strings.Contains(words[0], "=") { // VAR=value prefixes
			words = words[1:]
		}
		if len(words) == 0 {
			continue
		}
		if why, ok := networkPrograms[words[0]]; ok {
			return words[0] + " " + why
		}
		switch words[0] {
		case "make":
			if slices.ContainsFunc(words[1:], func(w string) bool { return strings.HasPrefix(w, "PREFIX=") }) {
				return "make install PREFIX=… writes outside the checkout"
			}
			for _, w := range words[1:] {
				if !strings.Contains(w, "=") && !strings.HasPrefix(w, "-") && !fastMakeTargets[w] {
					return "make " + w + " is not one of the quick offline targets"
				}
			}
		case "olm-cmp":
			if why := olmCmpNeedsNetwork(words[1:]); why != "" {
				return why
			}
		}
	}
	return ""
}

// olmCmpNeedsNetwork reports why an olm-cmp command would pull an image: it
// is a server, or a source directory it reads names an image bundle or
// catalog (the examples of real operators do).
func olmCmpNeedsNetwork(args []string) string {
	if len(args) > 0 && longRunning[args[0]] {
		return "olm-cmp " + args[0] + " runs until stopped"
	}
	// --bundle with a local directory replaces what the spec names (a
	// catalog included): the command reads no registry for the bundle.
	for i, a := range args {
		v, ok := strings.CutPrefix(a, "--bundle=")
		if !ok && a == "--bundle" && i+1 < len(args) {
			v, ok = args[i+1], true
		}
		if ok {
			if fi, err := os.Stat(filepath.Join(root, v)); err == nil && fi.IsDir() {
				return ""
			}
			return "--bundle " + v + " is an image"
		}
	}
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		dir := filepath.Join(root, a)
		if filepath.Base(a) == spec.FileName {
			dir = filepath.Dir(dir)
		}
		f, err := spec.Load(dir)
		if err != nil {
			continue // not a source directory: the command says what it is
		}
		for _, ref := range []string{f.Spec.Bundle, f.Spec.Catalog} {
			if ref != "" && !render.IsDirRef(ref) {
				return fmt.Sprintf("%s/%s pulls the image %s", a, spec.FileName, ref)
			}
		}
	}
	return ""
}

// flagRE finds the long and short flags a command line names.
var flagRE = regexp.MustCompile(`(?:^|\s|\[)(--[a-z][a-z0-9-]*|-[a-zA-Z])\b`)

// checkSynopsis checks that the olm-cmp subcommand of c exists and has
// every flag c names, from its --help.
func checkSynopsis(t *testing.T, olmCmp string, c command) {
	words := strings.Fields(c.text)
	if len(words) < 2 || strings.HasPrefix(words[1], "-") {
		return
	}
	help := exec.Command(olmCmp, words[1], "--help")
	help.Dir = root
	out, err := help.Output()
	if err != nil {
		t.Errorf("%s\nolm-cmp %s --help: %v", c, words[1], err)
		return
	}
	for _, m := range flagRE.FindAllStringSubmatch(strings.Split(c.text, " | ")[0], -1) {
		// A shorthand shows in the help as "-d, --dir".
		f := m[1]
		if !strings.Contains(string(out), f+" ") && !strings.Contains(string(out), f+"\n") && !strings.Contains(string(out), f+", --") {
			t.Errorf("%s\nolm-cmp %s has no flag %s", c, words[1], m[1])
		}
	}
}

func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}

// The rules above decide what runs: check them on the shapes docs use.
func TestSkipRules(t *testing.T) {
	for cmd, skip := range map[string]bool{
		"olm-cmp render examples/demo":                              false,
		"olm-cmp render examples/demo | grep -c 'kind: Deployment'": false,
		"make demo":                            false,
		"olm-cmp render examples/lws-operator": true, // names registry.redhat.io
		"olm-cmp inspect examples/lws-operator --bundle examples/demo/bundle": false, // a local bundle instead
		"olm-cmp render --bundle examples/demo/bundle -n demo":                false,
		"olm-cmp render [DIR]":                   true,
		"olm-cmp diff DIR --version V":           true,
		"olm-cmp inspect REF|DIR":                true,
		"olm-cmp serve":                          true,
		"olm-cmp inspect quay.io/org/bundle:1.0": true,
		"kubectl -n argocd port-forward deploy/argocd-repo-server 8081": true,
		"olm-cmp render examples/demo > out.yaml":                       true,
		"olm-cmp render examples/demo 2>&1 >/dev/null":                  false,
		"make test": true,
		"make image IMAGE=registry.example.com/olm-cmp:dev": true,
		"FOO=1 curl -s http://127.0.0.1:8081/v1/render":     true,
	} {
		if got := skipReason(cmd) != ""; got != skip {
			t.Errorf("%q: skipped = %v (%s), want %v", cmd, got, skipReason(cmd), skip)
		}
	}
	if got := stripComment(`olm-cmp render x  # a comment with 'quote`); got != "olm-cmp render x  " {
		t.Errorf("stripComment: %q", got)
	}
}
