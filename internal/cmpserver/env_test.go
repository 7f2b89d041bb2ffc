package cmpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/render"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// Every spec field must have a title and tooltip for the Argo CD UI: a new
// field cannot be silently left out of the announcement.
func TestEveryParamIsDocumented(t *testing.T) {
	ps := spec.Params()
	if len(ps) < 16 {
		t.Fatalf("only %d params", len(ps))
	}
	for _, p := range ps {
		if p.Title == "" || p.Tooltip == "" {
			t.Errorf("spec field %s has no title/tooltip in spec.paramDocs", p.Name)
		}
	}
}

func applyEnv(t *testing.T, base spec.Spec, vars ...string) (spec.Spec, error) {
	t.Helper()
	env, err := ParseEnv(vars)
	if err != nil {
		return base, err
	}
	return spec.ApplyOverrides(base, env.Overrides)
}

func TestParseEnvNaming(t *testing.T) {
	base := spec.Spec{Bundle: "b", Namespace: "file", Exclude: []string{"X"}}
	cases := []struct {
		vars []string
		want func(spec.Spec) bool
	}{
		{[]string{"ARGOCD_ENV_namespace=env"}, func(s spec.Spec) bool { return s.Namespace == "env" }},
		{[]string{"ARGOCD_ENV_NAMESPACE=env"}, func(s spec.Spec) bool { return s.Namespace == "env" }},
		{[]string{"ARGOCD_ENV_CERTIFICATE_PROVIDER=none"}, func(s spec.Spec) bool { return s.CertificateProvider == "none" }},
		{[]string{"ARGOCD_ENV_image-pull-secrets=a,b"}, func(s spec.Spec) bool { return strings.Join(s.ImagePullSecrets, "|") == "a|b" }},
		{[]string{`ARGOCD_ENV_exclude=["A/b","C"]`}, func(s spec.Spec) bool { return strings.Join(s.Exclude, "|") == "A/b|C" }},
		{[]string{`ARGOCD_ENV_images={"a/":"b/"}`}, func(s spec.Spec) bool { return s.Images["a/"] == "b/" }},
		{[]string{"ARGOCD_ENV_KEEP_CRDS=false"}, func(s spec.Spec) bool { return !s.KeepsCRDs() }},
		{[]string{"ARGOCD_ENV_authReaderBinding=true"}, func(s spec.Spec) bool { return s.AuthReaderBinding }},
		// "" is "not set": Argo CD drops empty env values, and users clear fields in the UI.
		{[]string{"ARGOCD_ENV_namespace="}, func(s spec.Spec) bool { return s.Namespace == "file" }},
		// Parameters beat env whatever the order of the variables.
		{[]string{`ARGOCD_APP_PARAMETERS=[{"name":"namespace","string":"param"}]`, "ARGOCD_ENV_namespace=env"}, func(s spec.Spec) bool { return s.Namespace == "param" }},
		// PARAM_* is the fallback without ARGOCD_APP_PARAMETERS.
		{[]string{"PARAM_NAMESPACE=p", "PARAM_WATCHNAMESPACES_1=y", "PARAM_WATCHNAMESPACES_0=x", "PARAM_IMAGES_QUAY_IO_=ignored"}, func(s spec.Spec) bool {
			return s.Namespace == "p" && strings.Join(s.WatchNamespaces, "|") == "x|y"
		}},
		{[]string{`ARGOCD_APP_PARAMETERS=[]`, "PARAM_NAMESPACE=p"}, func(s spec.Spec) bool { return s.Namespace == "file" }},
		// Unrelated variables are ignored.
		{[]string{"HOME=/x", "ARGOCD_APP_NAME=a", "ARGOCD_APP_REVISION=abc"}, func(s spec.Spec) bool { return s.Namespace == "file" }},
	}
	for _, c := range cases {
		got, err := applyEnv(t, base, c.vars...)
		if err != nil {
			t.Errorf("%v: %v", c.vars, err)
			continue
		}
		if !c.want(got) {
			t.Errorf("%v: got %+v", c.vars, got)
		}
	}
}

func TestParseEnvErrors(t *testing.T) {
	base := spec.Spec{Bundle: "b", Namespace: "file"}
	for vars, want := range map[string]string{
		"ARGOCD_ENV_namespaces=x":                                    `plugin env ARGOCD_ENV_namespaces: unknown spec field "namespaces"`,
		`ARGOCD_APP_PARAMETERS=[{"name":"ns"}]`:                      `parameter "ns": unknown spec field "ns"; known fields: bundle, catalog, package, channel, version, digest, namespace`,
		`ARGOCD_APP_PARAMETERS={`:                                    "ARGOCD_APP_PARAMETERS is not the JSON list Argo CD sends",
		`ARGOCD_APP_PARAMETERS=[{"name":"namespace","array":["a"]}]`: `parameter "namespace": namespace takes a single string: set the parameter's "string", not "array"`,
		`ARGOCD_ENV_images=a`:                                        `images: "a" is not key=value`,
		`ARGOCD_ENV_config=env: {}`:                                  `plugin env ARGOCD_ENV_config: config.env: expected a list of maps, got a map`,
		`ARGOCD_ENV_patches=[{"bogus": true}]`:                       `plugin env ARGOCD_ENV_patches: unknown field "patches[0].bogus": known fields are options, patch, path, target`,
	} {
		_, err := applyEnv(t, base, vars)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", vars, err, want)
		}
	}
}

func TestParseEnvAppFields(t *testing.T) {
	env, err := ParseEnv([]string{"ARGOCD_APP_NAME=app", "ARGOCD_APP_NAMESPACE=argocd", "ARGOCD_APP_PROJECT_NAME=p", "KUBE_API_VERSIONS=v1, apps/v1,,"})
	if err != nil {
		t.Fatal(err)
	}
	if env.AppName != "app" || env.AppNamespace != "argocd" || env.Project != "p" || strings.Join(env.APIVersions, "|") != "v1|apps/v1" {
		t.Errorf("%+v", env)
	}
	// Without KUBE_API_VERSIONS nothing is filtered (nil, not empty).
	env, _ = ParseEnv([]string{"KUBE_API_VERSIONS="})
	if env.APIVersions != nil {
		t.Errorf("APIVersions = %#v", env.APIVersions)
	}
}

// TestGenerateClassicMode runs the stock cmp-server's way: cwd = app path
// under $ARGOCD_CMP_WORKDIR/_cmp_server/<random>/, environment variables.
func TestGenerateClassicMode(t *testing.T) {
	root := filepath.Join(t.TempDir(), StockWorkDirName, "abc123")
	copyTree(t, repoDir, root)
	app := filepath.Join(root, "apps", "tiny")
	if got := StockRepoRoot(app); got != root {
		t.Fatalf("StockRepoRoot = %q", got)
	}
	var out, errOut bytes.Buffer
	environ := []string{"ARGOCD_APP_NAME=tiny", "ARGOCD_ENV_NAMESPACE=classic-ns", `ARGOCD_APP_PARAMETERS=[{"name":"imagePullSecrets","array":["p2"]}]`}
	if err := Generate(context.Background(), Fixed(&render.Renderer{}), app, environ, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "---\n") || !strings.Contains(out.String(), "namespace: classic-ns") || !strings.Contains(out.String(), "p2") {
		t.Errorf("output:\n%s", out.String())
	}

	// An error writes nothing to stdout.
	out.Reset()
	err := Generate(context.Background(), Fixed(&render.Renderer{}), app, []string{"ARGOCD_ENV_certificateProvider=bogus"}, &out, &errOut)
	if err == nil || out.Len() != 0 {
		t.Errorf("err=%v stdout=%q", err, out.String())
	}
	// A relative bundle outside the stock server's repository root is refused.
	os.WriteFile(filepath.Join(app, spec.FileName), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec: {bundle: ../../../../.., namespace: x}\n"), 0o644)
	if err := Generate(context.Background(), Fixed(&render.Renderer{}), app, nil, &out, &errOut); err == nil || out.Len() != 0 {
		t.Errorf("escaping bundle dir: err=%v", err)
	}
}

// TestGenerateClassicModeNamesNoServerPath: Argo CD shows generate's
// stderr to the user, so its errors name files as the repository does
// (apps/tiny/olm-cmp.yaml), never the cmp-server's work directory, as the
// native server's errors do.
func TestGenerateClassicModeNamesNoServerPath(t *testing.T) {
	root := filepath.Join(t.TempDir(), StockWorkDirName, "abc123")
	copyTree(t, repoDir, root)
	app := filepath.Join(root, "apps", "tiny")
	file := filepath.Join(app, spec.FileName)
	for _, tc := range []struct {
		doc, want string
		announce  bool // --announce reads the file too
	}{
		{"apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  namespace: [\n", "apps/tiny/olm-cmp.yaml: not valid YAML", true},
		{"apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ./missing\n  namespace: x\n", "apps/tiny/olm-cmp.yaml: line 4: spec.bundle", false},
	} {
		os.WriteFile(file, []byte(tc.doc), 0o644)
		var out, errOut bytes.Buffer
		err := Generate(context.Background(), Fixed(&render.Renderer{}), app, nil, &out, &errOut)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), root) {
			t.Errorf("generate: %v\nwant it to start with %q, without %s", err, tc.want, root)
		}
		err = AnnounceJSON(app, nil, &out)
		if tc.announce && (err == nil || !strings.HasPrefix(err.Error(), tc.want)) {
			t.Errorf("generate --announce: %v\nwant it to start with %q", err, tc.want)
		}
	}
}

func TestAnnounceJSON(t *testing.T) {
	var out bytes.Buffer
	if err := AnnounceJSON(filepath.Join(repoDir, "apps/tiny"), []string{"ARGOCD_ENV_version=9"}, &out); err != nil {
		t.Fatal(err)
	}
	// Decoded with the JSON field names of Argo CD's ParameterAnnouncement.
	var as []struct {
		Name           string            `json:"name"`
		Title          string            `json:"title"`
		CollectionType string            `json:"collectionType"`
		ItemType       string            `json:"itemType"`
		String         string            `json:"string"`
		Array          []string          `json:"array"`
		Map            map[string]string `json:"map"`
	}
	if err := json.Unmarshal(out.Bytes(), &as); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range as {
		got[a.Name] = a.CollectionType + ":" + a.String + strings.Join(a.Array, ",")
	}
	for name, want := range map[string]string{"namespace": "string:tiny-system", "version": "string:9", "imagePullSecrets": "array:pull-secret", "images": "map:", "syncWaves": "string:"} {
		if got[name] != want {
			t.Errorf("%s = %q, want %q", name, got[name], want)
		}
	}
	// Invalid olm-cmp.yaml: the error says what to fix.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, spec.FileName), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec: {bundel: x}\n"), 0o644)
	if err := AnnounceJSON(dir, nil, &out); err == nil || !strings.Contains(err.Error(), `unknown field "spec.bundel"`) {
		t.Errorf("invalid file: %v", err)
	}
}

func TestPluginConfig(t *testing.T) {
	c, err := LoadPluginConfig("/nonexistent/plugin.yaml", false)
	if err != nil || c.SocketName() != "olm-cmp-v1.sock" {
		t.Fatalf("defaults: %v %v", c, err)
	}
	if _, err := LoadPluginConfig("/nonexistent/plugin.yaml", true); err == nil {
		t.Error("an explicit missing --config must fail")
	}
	// The repository's plugin.yaml names the same socket as the defaults.
	c, err = LoadPluginConfig("../../plugin.yaml", true)
	if err != nil {
		t.Fatal(err)
	}
	if c.SocketName() != "olm-cmp-v1.sock" {
		t.Errorf("plugin.yaml socket %s", c.SocketName())
	}
	p := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(p, []byte("apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata: {name: x}\nspec: {generate: {command: [a]}}\n"), 0o644)
	if c, err := LoadPluginConfig(p, true); err != nil || c.SocketName() != "x.sock" {
		t.Errorf("no version: %v %v", c, err)
	}
	os.WriteFile(p, []byte("kind: Deployment\n"), 0o644)
	if _, err := LoadPluginConfig(p, true); err == nil {
		t.Error("wrong kind accepted")
	}
}

func TestReceiveRepoProtocolErrors(t *testing.T) {
	// A stream whose first message is a chunk is a protocol error.
	r := &fakeStream{msgs: []any{[]byte("x")}}
	if _, err := receiveRepo(context.Background(), r, t.TempDir(), Limits{}, nil); err == nil || !strings.Contains(err.Error(), "first stream message must be the metadata") {
		t.Errorf("got %v", err)
	}
	// A declared size over the limit is refused before reading.
	r = &fakeStream{msgs: []any{int64(1 << 40)}}
	if _, err := receiveRepo(context.Background(), r, t.TempDir(), Limits{}, nil); err == nil || !strings.Contains(err.Error(), "over the") {
		t.Errorf("got %v", err)
	}
	// Not gzip.
	data := []byte("this is not a tarball")
	r = &fakeStream{msgs: []any{sum(data), data}}
	if _, err := receiveRepo(context.Background(), r, t.TempDir(), Limits{}, nil); err == nil || !strings.Contains(err.Error(), "not gzip") {
		t.Errorf("got %v", err)
	}
	// A receive error mid-stream is reported as such.
	r = &fakeStream{msgs: []any{"x", errors.New("connection reset")}}
	if _, err := receiveRepo(context.Background(), r, t.TempDir(), Limits{}, nil); err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("got %v", err)
	}
}

// TestNamespaceOverrideMovesWatchedNamespace: a namespace parameter or
// plugin env entry moves a watched namespace that was the file's install
// namespace with it (the CLI's -n does the same), with a warning: left
// behind, its Roles would go to a namespace nothing creates. A
// watchNamespaces override of its own is taken as given.
func TestNamespaceOverrideMovesWatchedNamespace(t *testing.T) {
	app := t.TempDir()
	os.WriteFile(filepath.Join(app, spec.FileName), []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: ./bundle\n  namespace: old\n  watchNamespaces: [old, other]\n"), 0o644)
	for _, tc := range []struct {
		environ []string
		watch   []string
		notes   int
	}{
		{[]string{"ARGOCD_ENV_NAMESPACE=new"}, []string{"new", "other"}, 1},
		{[]string{`ARGOCD_APP_PARAMETERS=[{"name":"namespace","string":"new"}]`}, []string{"new", "other"}, 1},
		{[]string{`ARGOCD_APP_PARAMETERS=[{"name":"namespace","string":"new"},{"name":"watchNamespaces","array":["old"]}]`}, []string{"old"}, 0},
		{[]string{`ARGOCD_APP_PARAMETERS=[{"name":"namespace","string":"old"}]`}, []string{"old", "other"}, 0},
	} {
		env, err := ParseEnv(tc.environ)
		if err != nil {
			t.Fatal(err)
		}
		req, notes, err := BuildRequest(app, "", env)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(req.Spec.WatchNamespaces, tc.watch) || len(notes) != tc.notes {
			t.Errorf("%v: watchNamespaces %v, notes %q; want %v and %d notes", tc.environ, req.Spec.WatchNamespaces, notes, tc.watch, tc.notes)
		}
		if tc.notes == 1 && notes[0] != `the namespace parameter (or plugin env) "new": spec.watchNamespaces[0] "old" was the install namespace and becomes "new" too (give watchNamespaces to choose otherwise)` {
			t.Errorf("note: %s", notes[0])
		}
	}
}

// TestBundleOverrideOnACatalogSpec: a bundle parameter on a catalog spec
// (or a catalog parameter on a bundle spec) replaces what it makes
// meaningless, with a warning, as the CLI's --bundle and --catalog do: an
// empty parameter means "not set", so the user could not clear the other
// field, and the render failed with "both set".
func TestBundleOverrideOnACatalogSpec(t *testing.T) {
	app := t.TempDir()
	file := filepath.Join(app, spec.FileName)
	build := func(doc, params string) (spec.Spec, []string) {
		t.Helper()
		os.WriteFile(file, []byte("apiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n"+doc+"  namespace: ns\n"), 0o644)
		env, err := ParseEnv([]string{"ARGOCD_APP_PARAMETERS=" + params})
		if err != nil {
			t.Fatal(err)
		}
		req, notes, err := BuildRequest(app, "", env)
		if err != nil {
			t.Fatalf("%s: %v", params, err)
		}
		return req.Spec, notes
	}
	const digest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
	s, notes := build("  catalog: quay.io/x/catalog:latest\n  package: p\n  channel: stable\n  version: 1.x\n  digest: "+digest+"\n", `[{"name":"bundle","string":"quay.io/x/b:1.0"}]`)
	if s.Bundle != "quay.io/x/b:1.0" || s.Catalog != "" || s.Package != "" || s.Channel != "" || s.Version != "" || s.Digest != "" {
		t.Errorf("bundle parameter on a catalog spec: %+v", s)
	}
	want := []string{
		`the bundle parameter (or plugin env) "quay.io/x/b:1.0" replaces the catalog: spec.catalog "quay.io/x/catalog:latest", spec.package "p", spec.channel "stable" and the version range "1.x" are not used`,
		`the bundle parameter (or plugin env) "quay.io/x/b:1.0": spec.digest ` + digest + ` pinned the catalog's choice and is not used`,
	}
	if !slices.Equal(notes, want) {
		t.Errorf("notes:\n%q\nwant:\n%q", notes, want)
	}
	s, notes = build("  bundle: quay.io/x/b\n  version: \"1.0\"\n", `[{"name":"catalog","string":"quay.io/x/catalog:latest"},{"name":"package","string":"p"}]`)
	if s.Bundle != "" || s.Catalog != "quay.io/x/catalog:latest" || s.Version != "" || len(notes) != 1 {
		t.Errorf("catalog parameter on a bundle spec: %+v %q", s, notes)
	}
	// A version given with it is kept.
	s, _ = build("  bundle: quay.io/x/b\n  version: \"1.0\"\n", `[{"name":"catalog","string":"quay.io/x/catalog:latest"},{"name":"package","string":"p"},{"name":"version","string":"2.x"}]`)
	if s.Version != "2.x" {
		t.Errorf("version parameter beside catalog: %q", s.Version)
	}
}
