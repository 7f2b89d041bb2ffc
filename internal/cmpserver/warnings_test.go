package cmpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/engine"
	"github.com/olm-cmp/olm-cmp/internal/render"
)

// hostileWarningRepo is the test repository with the tiny bundle's CSV
// annotated with console plugins whose name holds a clear-screen ESC
// sequence and a newline: the requirements report quotes it in a warning.
func hostileWarningRepo(t *testing.T, root string) {
	copyTree(t, repoDir, root)
	csv := filepath.Join(root, "bundles/tiny/manifests/tiny-operator.clusterserviceversion.yaml")
	data, err := os.ReadFile(csv)
	if err != nil {
		t.Fatal(err)
	}
	hostile := strings.Replace(string(data), "  annotations:\n", "  annotations:\n    console.openshift.io/plugins: \"\\e[2J\\nwarning: forged\"\n", 1)
	if hostile == string(data) {
		t.Fatal("the tiny CSV has no annotations to extend")
	}
	os.WriteFile(csv, []byte(hostile), 0o644)
}

const escapedPlugins = `console plugins \x1b[2J\nwarning: forged;`

// TestClassicModeEscapesWarnings: generate prints each warning on one
// line of stderr with bundle content's control characters escaped.
func TestClassicModeEscapesWarnings(t *testing.T) {
	root := filepath.Join(t.TempDir(), StockWorkDirName, "abc123")
	hostileWarningRepo(t, root)
	var out, errOut bytes.Buffer
	if err := Generate(context.Background(), Fixed(&render.Renderer{}), filepath.Join(root, "apps", "tiny"), nil, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(errOut.String(), "\x1b") || strings.Contains(errOut.String(), "\nwarning: forged") || !strings.Contains(errOut.String(), escapedPlugins) {
		t.Errorf("stderr: %q", errOut.String())
	}
}

// TestPluginLogEscapesWarnings: the plugin logs a render's warnings with
// their control characters escaped (the JSON log would escape them anyway;
// a text log would not).
func TestPluginLogEscapesWarnings(t *testing.T) {
	root := t.TempDir()
	hostileWarningRepo(t, root)
	ts := startServer(t, engine.NewEngine(engine.EngineOptions{}))
	if _, err := ts.generate(ctxT(t), t, call{tgz: tgzOf(t, root), appRelPath: "apps/tiny"}); err != nil {
		t.Fatal(err)
	}
	// In the JSON log, the escaped backslash of \x1b is \\x1b.
	if logs := ts.logs.String(); !strings.Contains(logs, `console plugins \\x1b[2J\\nwarning: forged;`) || strings.Contains(logs, `\u001b`) {
		t.Errorf("log: %s", grepLines(logs, "console plugins"))
	}
}

// TestSeverityWordsOfARender: the demo renders (its webhooks need
// cert-manager, which vanilla Kubernetes lacks). generate prints the
// finding as "required:", and the plugin logs it at warn level with
// severity "required", the word render and inspect use: nothing says error
// about a render that succeeded.
func TestSeverityWordsOfARender(t *testing.T) {
	root := t.TempDir()
	copyTree(t, "../../examples/demo", filepath.Join(root, "apps", "demo"))
	const line = "required: certificates:cert-manager.io/v1 (from CSV webhookdefinitions"

	var out, errOut bytes.Buffer
	if err := Generate(context.Background(), Fixed(&render.Renderer{}), filepath.Join(root, "apps", "demo"), nil, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(errOut.String(), line) || strings.Contains(strings.ToLower(errOut.String()), "error") {
		t.Errorf("generate stderr: %q", errOut.String())
	}

	ts := startServer(t, engine.NewEngine(engine.EngineOptions{}))
	if _, err := ts.generate(ctxT(t), t, call{tgz: tgzOf(t, root), appRelPath: "apps/demo"}); err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, l := range strings.Split(ts.logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) != nil {
			continue
		}
		if rec["level"] == "ERROR" || rec["severity"] == "error" {
			t.Errorf("a successful render logged %s", l)
		}
		if rec["msg"] == "render warning" && rec["severity"] == "required" && strings.HasPrefix(rec["warning"].(string), "requirement certificates:cert-manager.io/v1 ") {
			found = rec["level"] == "WARN"
		}
	}
	if !found {
		t.Errorf("no render warning of severity required for cert-manager at warn level:\n%s", grepLines(ts.logs.String(), "render warning"))
	}
}
