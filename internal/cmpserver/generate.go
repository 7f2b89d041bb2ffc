package cmpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/olm-cmp/olm-cmp/internal/echo"
	"github.com/olm-cmp/olm-cmp/internal/render"
)

// StockWorkDirName is the directory under $ARGOCD_CMP_WORKDIR where Argo
// CD's own cmp-server extracts each request's repository into a random
// subdirectory.
const StockWorkDirName = "_cmp_server"

// Generate is the classic mode: Argo CD's own cmp-server runs `olm-cmp
// generate` with the application directory as cwd and the plugin
// environment. It writes the YAML stream to stdout only when the whole render
// succeeded (a partial stream would be applied as is), and warnings and
// requirement findings to stderr (render.Result.Notes).
// One render per process: no render cache, so it calls the renderer itself,
// the one pick gives for the project asking (the repo-server's
// ARGOCD_APP_PROJECT_NAME: a tenancy policy's renderer for it, or refusal).
func Generate(ctx context.Context, pick func(project string) (*render.Renderer, error), dir string, environ []string, stdout, stderr io.Writer) error {
	env, err := ParseEnv(environ)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	root := StockRepoRoot(abs)
	req, notes, err := BuildRequest(abs, root, env)
	if err != nil {
		return repoRelative(root, err)
	}
	picked, err := pick(env.Project)
	if err != nil {
		return err
	}
	// The stream is all Generate writes: no JSON of every object (the
	// native server's reply), on a copy, since pick's renderer is shared.
	r := *picked
	r.YAMLOnly = true
	res, err := r.Render(ctx, req)
	if err != nil {
		return repoRelative(root, locateError(req, err))
	}
	for _, n := range notes {
		fmt.Fprintf(stderr, "warning: %s\n", echo.Text(n))
	}
	// A requirement finding under its own severity, as render and inspect
	// print it (never "error": the render succeeded); bundle content
	// escaped: nothing may act on a terminal.
	for _, n := range render.FoldRBACOnly(res.Notes(), "olm-cmp inspect prints each with its fix") {
		fmt.Fprintln(stderr, echo.Text(n.Printed()))
	}
	return res.WriteYAML(stdout)
}

// AnnounceJSON prints the parameter announcements as the JSON list Argo CD
// expects from a dynamic parameters command (plugin.yaml
// spec.parameters.dynamic), for the classic mode.
func AnnounceJSON(dir string, environ []string, stdout io.Writer) error {
	env, err := ParseEnv(environ)
	if err != nil {
		return err
	}
	as, err := Announce(dir, env)
	if err != nil {
		if abs, aerr := filepath.Abs(dir); aerr == nil {
			err = repoRelative(StockRepoRoot(abs), err)
		}
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(as); err != nil {
		return err
	}
	_, err = stdout.Write(buf.Bytes())
	return err
}

// repoRelative names files in err as the repository does, without root,
// the stock cmp-server's work directory for this request: Argo CD shows
// the plugin's stderr to the user, who should see neither the server's
// paths nor their random part. The native server does the same (clean).
// An empty root (outside that layout: a user's own machine) changes nothing.
func repoRelative(root string, err error) error {
	if root == "" || err == nil || !strings.Contains(err.Error(), root) {
		return err
	}
	msg := strings.ReplaceAll(err.Error(), root+string(filepath.Separator), "")
	return &fixedError{msg: strings.ReplaceAll(msg, root, "."), err: err}
}

// StockRepoRoot finds the repository root when running under Argo CD's own
// cmp-server: the directory just below .../_cmp_server/ that holds dir. It
// bounds relative bundle directories as the native server does; outside that
// layout it returns "" (the filesystem is trusted, as for the CLI).
func StockRepoRoot(dir string) string {
	for d := filepath.Clean(dir); ; {
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		if filepath.Base(parent) == StockWorkDirName {
			return d
		}
		d = parent
	}
}

// Fixed is Generate's pick without a tenancy policy: r, whoever asks.
func Fixed(r *render.Renderer) func(project string) (*render.Renderer, error) {
	return func(string) (*render.Renderer, error) { return r, nil }
}
