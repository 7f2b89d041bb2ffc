// Shared by test/argocd (Argo CD v2) and test/argocd-v3 (symlinked there).

package cmptest

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestNative drives `olm-cmp serve` through the repo-server's own code path.
func TestNative(t *testing.T) {
	start := func(t *testing.T, flags ...string) string { return startNative(t, flags...).socketDir }
	t.Setenv("ARGOCD_PLUGINSOCKFILEPATH", start(t))
	runSuite(t, "native", start)
}

// TestClassic drives Argo CD's own argocd-cmp-server, configured with our
// plugin.yaml (so it forks `olm-cmp generate`), through the same code path.
func TestClassic(t *testing.T) {
	start := func(t *testing.T, flags ...string) string { return startClassic(t, flags...) }
	t.Setenv("ARGOCD_PLUGINSOCKFILEPATH", start(t))
	runSuite(t, "classic", start)
}

// startFunc starts a plugin server with extra olm-cmp flags (serve flags, or
// generate flags in plugin.yaml) and returns its socket dir.
type startFunc func(t *testing.T, flags ...string) string

// TestNativeMatchesClassic: both modes must hand the repo-server the same objects.
func TestNativeMatchesClassic(t *testing.T) {
	repo := greeterRepo(t)
	native := startNative(t)
	classic := startClassic(t)
	reqs := map[string]GenRequest{
		"file only": {RepoRoot: repo, AppPath: "apps/greeter", AppName: "greeter", Plugin: &Plugin{Name: pluginCfg.pluginName()}},
		"env and params": {RepoRoot: repo, AppPath: "apps/greeter", AppName: "greeter", Plugin: &Plugin{
			Name:   pluginCfg.pluginName(),
			Env:    [][2]string{{"namespace", "env-ns"}, {"imagePullSecrets", "env-a,env-b"}},
			Params: []Param{{Name: "namespace", String: strp("param-ns")}},
		}},
	}
	t.Run("ParametersAnnouncement", func(t *testing.T) {
		if len(pluginCfg.Spec.Parameters) == 0 {
			t.Skip("plugin.yaml declares no spec.parameters")
		}
		req := reqs["file only"]
		t.Setenv("ARGOCD_PLUGINSOCKFILEPATH", native.socketDir)
		n, err := argoAnnounce(ctxTimeout(t, time.Minute), req)
		if err != nil {
			t.Fatalf("native: %v", err)
		}
		t.Setenv("ARGOCD_PLUGINSOCKFILEPATH", classic)
		c, err := argoAnnounce(ctxTimeout(t, time.Minute), req)
		if err != nil {
			t.Fatalf("classic: %v", err)
		}
		if !reflect.DeepEqual(n, c) {
			t.Errorf("announcements differ\nnative:  %+v\nclassic: %+v", n, c)
		}
	})
	for name, req := range reqs {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			t.Setenv("ARGOCD_PLUGINSOCKFILEPATH", native.socketDir)
			n, _, err := argoGenerate(ctxTimeout(t, time.Minute), req)
			if err != nil {
				t.Fatalf("native: %v", err)
			}
			t.Setenv("ARGOCD_PLUGINSOCKFILEPATH", classic)
			c, _, err := argoGenerate(ctxTimeout(t, time.Minute), req)
			if err != nil {
				t.Fatalf("classic: %v", err)
			}
			if !slices.Equal(n, c) {
				t.Errorf("native and classic manifests differ\nnative:  %v\nclassic: %v", kindsOf(decodeManifests(t, n)), kindsOf(decodeManifests(t, c)))
				for i := range min(len(n), len(c)) {
					if n[i] != c[i] {
						t.Errorf("first difference at manifest %d:\nnative:  %s\nclassic: %s", i, n[i], c[i])
						break
					}
				}
			}
		})
	}
}

// TestNativeMatchesClassicLarge: the same for sail-operator (29 objects,
// 2.9 MB of CRDs: long descriptions, defaults, int-or-string fields), which
// the native server sends as JSON and the classic one as YAML. Needs ../shared.
func TestNativeMatchesClassicLarge(t *testing.T) {
	dir := filepath.Join(repoRoot, "..", "shared", "bundles", "sailoperator-1.30.3")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no %s (../shared missing)", dir)
	}
	r := newRepo(t)
	r.file("apps/sail/olm-cmp.yaml", olmCmpYAML("sail", "bundle: ./bundle", "namespace: sail-operator"))
	r.copyDir(dir, "apps/sail/bundle")
	req := GenRequest{RepoRoot: r.root, AppPath: "apps/sail", AppName: "sail", Plugin: &Plugin{Name: pluginCfg.pluginName()}}
	t.Setenv("ARGOCD_PLUGINSOCKFILEPATH", startNative(t).socketDir)
	n, _, err := argoGenerate(ctxTimeout(t, 2*time.Minute), req)
	if err != nil {
		t.Fatalf("native: %v", err)
	}
	t.Setenv("ARGOCD_PLUGINSOCKFILEPATH", startClassic(t))
	c, _, err := argoGenerate(ctxTimeout(t, 2*time.Minute), req)
	if err != nil {
		t.Fatalf("classic: %v", err)
	}
	if len(n) != len(c) || len(n) < 20 {
		t.Fatalf("native %d manifests, classic %d", len(n), len(c))
	}
	for i := range n {
		if n[i] != c[i] {
			t.Errorf("manifest %d differs:\nnative:  %.300s\nclassic: %.300s", i, n[i], c[i])
		}
	}
}

// TestNativeWithoutDiscovery: a plugin.yaml without spec.discover tells Argo
// CD that discovery is not configured, which saves the second tarball of
// every refresh: an Application that names the plugin gets no
// MatchRepository call, and one that does not name it is not claimed.
func TestNativeWithoutDiscovery(t *testing.T) {
	repo := greeterRepo(t)
	cfg := filepath.Join(t.TempDir(), "plugin.yaml")
	if err := os.WriteFile(cfg, []byte(`apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: `+pluginCfg.Metadata.Name+`
spec:
  version: "`+pluginCfg.Spec.Version+`"
  generate:
    command: [olm-cmp, generate]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		config    string
		discovery bool
	}{{cfg, false}, {filepath.Join(repoRoot, "plugin.yaml"), true}} {
		t.Run(fmt.Sprintf("discovery=%v", c.discovery), func(t *testing.T) {
			native := startNative(t, "--config", c.config)
			t.Setenv("ARGOCD_PLUGINSOCKFILEPATH", native.socketDir)
			m, st, err := argoGenerate(ctxTimeout(t, time.Minute), GenRequest{RepoRoot: repo, AppPath: "apps/greeter", AppName: "greeter",
				Plugin: &Plugin{Name: pluginCfg.pluginName()}})
			if err != nil {
				t.Fatalf("named plugin: %v", err)
			}
			if st != "Plugin" {
				t.Errorf("source type %q", st)
			}
			checkGreeter(t, decodeManifests(t, m), "file-ns", []string{"file-secret"})
			if got := len(serverDurations(native.logs.String(), "MatchRepository", "greeter")); (got > 0) != c.discovery {
				t.Errorf("%d MatchRepository calls for a named plugin, want them only with discovery", got)
			}
			_, _, err = argoGenerate(ctxTimeout(t, time.Minute), GenRequest{RepoRoot: repo, AppPath: "apps/greeter", AppName: "greeter", Plugin: &Plugin{}})
			if (err == nil) != c.discovery {
				t.Errorf("unnamed plugin: %v", err)
			}
		})
	}
}

func runSuite(t *testing.T, mode string, start startFunc) {
	repo := greeterRepo(t)
	named := func() *Plugin { return &Plugin{Name: pluginCfg.pluginName()} }
	greeter := func(p *Plugin) GenRequest {
		return GenRequest{RepoRoot: repo, AppPath: "apps/greeter", AppName: "greeter", Plugin: p}
	}

	t.Run("NamedPlugin", func(t *testing.T) {
		m, st, err := argoGenerate(ctxTimeout(t, time.Minute), greeter(named()))
		if err != nil {
			t.Fatalf("GenerateManifests: %v", err)
		}
		if st != "Plugin" {
			t.Errorf("source type %q, want Plugin", st)
		}
		checkGreeter(t, decodeManifests(t, m), "file-ns", []string{"file-secret"})
	})

	t.Run("Discovery", func(t *testing.T) {
		// plugin: {} (no name): Argo CD tries every socket's MatchRepository.
		m, st, err := argoGenerate(ctxTimeout(t, time.Minute), greeter(&Plugin{}))
		if err != nil {
			t.Fatalf("GenerateManifests with an unnamed plugin: %v", err)
		}
		if st != "Plugin" {
			t.Errorf("source type %q, want Plugin", st)
		}
		checkGreeter(t, decodeManifests(t, m), "file-ns", []string{"file-secret"})

		// No plugin block at all: source-type detection asks the plugins first.
		m2, st, err := argoGenerate(ctxTimeout(t, time.Minute), greeter(nil))
		if err != nil {
			t.Fatalf("GenerateManifests without a plugin block: %v", err)
		}
		if st != "Plugin" {
			t.Errorf("source type %q, want Plugin (discovery by olm-cmp.yaml)", st)
		}
		if !slices.Equal(m, m2) {
			t.Errorf("auto-detected output differs from the unnamed plugin's")
		}
	})

	t.Run("DiscoveryDeclinesOtherApps", func(t *testing.T) {
		// apps/plain has no olm-cmp.yaml: MatchRepository must say no, so the
		// repo-server falls back to plain YAML.
		m, st, err := argoGenerate(ctxTimeout(t, time.Minute), GenRequest{RepoRoot: repo, AppPath: "apps/plain", AppName: "plain"})
		if err != nil {
			t.Fatalf("GenerateManifests: %v", err)
		}
		if st != "Directory" {
			t.Errorf("source type %q, want Directory: the plugin claimed an app without olm-cmp.yaml", st)
		}
		if objs := decodeManifests(t, m); len(objs) != 1 || objs[0].Kind != "ConfigMap" {
			t.Errorf("got %v, want the one ConfigMap", kindsOf(objs))
		}
	})

	t.Run("ParametersAnnouncement", func(t *testing.T) {
		if mode == "classic" && len(pluginCfg.Spec.Parameters) == 0 {
			t.Skip("plugin.yaml declares no spec.parameters: the stock server announces nothing")
		}
		anns, err := argoAnnounce(ctxTimeout(t, time.Minute), greeter(named()))
		if err != nil {
			t.Fatalf("GetParametersAnnouncement: %v", err)
		}
		checkAnnouncements(t, anns)
		// Unnamed plugin: the same through discovery.
		anns2, err := argoAnnounce(ctxTimeout(t, time.Minute), greeter(&Plugin{}))
		if err != nil {
			t.Fatalf("GetParametersAnnouncement (discovery): %v", err)
		}
		if !reflect.DeepEqual(anns, anns2) {
			t.Errorf("announcement differs between the named and the discovered plugin")
		}
	})

	t.Run("Precedence", func(t *testing.T) {
		cases := []struct {
			name    string
			plugin  *Plugin
			ns      string
			secrets []string
		}{
			{"file", named(), "file-ns", []string{"file-secret"}},
			{"env over file", &Plugin{Name: pluginCfg.pluginName(), Env: [][2]string{
				{"namespace", "env-ns"}, {"imagePullSecrets", "env-a,env-b"},
			}}, "env-ns", []string{"env-a", "env-b"}},
			{"params over env", &Plugin{Name: pluginCfg.pluginName(),
				Env: [][2]string{{"namespace", "env-ns"}, {"imagePullSecrets", "env-a,env-b"}},
				Params: []Param{
					{Name: "namespace", String: strp("param-ns")},
					{Name: "imagePullSecrets", Array: []string{"param-secret"}},
				}}, "param-ns", []string{"param-secret"}},
			{"params over file, env partial", &Plugin{Name: pluginCfg.pluginName(),
				Env:    [][2]string{{"namespace", "env-ns"}},
				Params: []Param{{Name: "imagePullSecrets", Array: []string{"param-secret"}}},
			}, "env-ns", []string{"param-secret"}},
			{"env with $ARGOCD_APP_NAME expansion", &Plugin{Name: pluginCfg.pluginName(),
				Env: [][2]string{{"namespace", "$ARGOCD_APP_NAME-system"}},
			}, "greeter-system", []string{"file-secret"}},
		}
		for _, c := range cases {
			t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
				m, _, err := argoGenerate(ctxTimeout(t, time.Minute), greeter(c.plugin))
				if err != nil {
					t.Fatalf("GenerateManifests: %v", err)
				}
				checkGreeter(t, decodeManifests(t, m), c.ns, c.secrets)
			})
		}
	})

	t.Run("BadParameterError", func(t *testing.T) {
		_, _, err := argoGenerate(ctxTimeout(t, time.Minute), greeter(&Plugin{Name: pluginCfg.pluginName(),
			Params: []Param{{Name: "nosuchfield", String: strp("x")}}}))
		if err == nil {
			t.Fatal("GenerateManifests accepted an unknown parameter")
		}
		if !strings.Contains(err.Error(), "nosuchfield") {
			t.Errorf("the error does not name the unknown parameter:\n%v", err)
		}
	})

	t.Run("BadBundleError", func(t *testing.T) {
		_, _, err := argoGenerate(ctxTimeout(t, time.Minute), GenRequest{
			RepoRoot: repo, AppPath: "apps/broken", AppName: "broken",
			Plugin: named(),
		})
		if err == nil {
			t.Fatal("GenerateManifests succeeded for a bundle without a ClusterServiceVersion")
		}
		// The user reads this in the Argo CD UI: it must say what is wrong.
		if !strings.Contains(err.Error(), "ClusterServiceVersion") {
			t.Errorf("the error the repo-server gets does not mention the missing ClusterServiceVersion:\n%v", err)
		}
		t.Logf("error as the repo-server reports it: %v", err)
	})

	t.Run("Deadline", func(t *testing.T) {
		testDeadline(t, mode, start, repo)
	})
}

// checkGreeter asserts the rendered demo bundle: the objects users need, in
// the namespace and with the pull secrets the effective spec asks for.
func checkGreeter(t *testing.T, objs []obj, ns string, secrets []string) {
	t.Helper()
	if len(objs) == 0 {
		t.Fatal("no manifests")
	}
	if o, ok := findObj(objs, "Namespace", ns); !ok {
		t.Errorf("no Namespace %q in %v", ns, kindsOf(objs))
	} else if o.APIVersion != "v1" {
		t.Errorf("Namespace apiVersion %q", o.APIVersion)
	}
	if o, ok := findObj(objs, "CustomResourceDefinition", "greeters.greeter.example.com"); !ok {
		t.Errorf("no CRD greeters.greeter.example.com in %v", kindsOf(objs))
	} else if o.Namespace != "" {
		t.Errorf("CRD has metadata.namespace %q", o.Namespace)
	}
	dep, ok := findObj(objs, "Deployment", "greeter-operator-controller")
	if !ok {
		t.Errorf("no Deployment greeter-operator-controller in %v", kindsOf(objs))
	} else if dep.Namespace != ns {
		t.Errorf("Deployment in namespace %q, want %q", dep.Namespace, ns)
	}
	if _, ok := findObj(objs, "Greeter", "from-git"); !ok {
		t.Errorf("the extra manifest (Greeter from-git) is missing from %v", kindsOf(objs))
	}
	if _, ok := findObj(objs, "ClusterServiceVersion", ""); ok {
		t.Errorf("the CSV itself must not be emitted")
	}
	var sas int
	for _, o := range objs {
		if o.Kind != "ServiceAccount" {
			continue
		}
		sas++
		if o.Namespace != ns {
			t.Errorf("ServiceAccount %s in namespace %q, want %q", o.Name, o.Namespace, ns)
		}
		var got []string
		if l, ok := o.Raw["imagePullSecrets"].([]any); ok {
			for _, s := range l {
				name, _ := path(s, "name").(string)
				got = append(got, name)
			}
		}
		if !slices.Equal(got, secrets) {
			t.Errorf("ServiceAccount %s imagePullSecrets %v, want %v", o.Name, got, secrets)
		}
	}
	if sas == 0 {
		t.Errorf("no ServiceAccount in %v", kindsOf(objs))
	}
	for _, o := range objs {
		if o.Namespace != "" && o.Namespace != ns {
			t.Errorf("%s is outside the install namespace %q", o, ns)
		}
	}
}

// specFields lists the JSON names of the main module's spec.Spec fields, read
// from its source (this module cannot import the main module).
func specFields(t *testing.T) []string {
	t.Helper()
	file := filepath.Join(repoRoot, "internal", "spec", "spec.go")
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Spec" {
			return true
		}
		for _, fld := range ts.Type.(*ast.StructType).Fields.List {
			if fld.Tag == nil {
				continue
			}
			tag, _ := strconv.Unquote(fld.Tag.Value)
			name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
			if name != "" && name != "-" {
				names = append(names, name)
			}
		}
		return false
	})
	if len(names) == 0 {
		t.Fatalf("found no Spec fields in %s", file)
	}
	return names
}

func checkAnnouncements(t *testing.T, anns []Announcement) {
	t.Helper()
	byName := map[string]Announcement{}
	var order []string
	for _, a := range anns {
		if _, dup := byName[a.Name]; dup {
			t.Errorf("parameter %q announced twice", a.Name)
		}
		byName[a.Name] = a
		order = append(order, a.Name)
	}
	t.Logf("announced: %v", order)
	for _, f := range specFields(t) {
		a, ok := byName[f]
		if !ok {
			t.Errorf("spec field %q is not announced", f)
			continue
		}
		if a.Title == "" || a.Tooltip == "" {
			t.Errorf("parameter %q has no title or tooltip: %+v", f, a)
		}
		switch a.CollectionType {
		case "", "string", "array", "map":
		default:
			t.Errorf("parameter %q: collectionType %q is not one Argo CD knows", f, a.CollectionType)
		}
	}
	// Current values come from apps/greeter/olm-cmp.yaml.
	if a := byName["namespace"]; a.String != "file-ns" {
		t.Errorf("namespace announced with value %q, want the file's file-ns", a.String)
	}
	if a := byName["bundle"]; a.String != "./bundle" {
		t.Errorf("bundle announced with value %q, want the file's ./bundle", a.String)
	}
	if a := byName["imagePullSecrets"]; a.CollectionType != "array" || !slices.Equal(a.Array, []string{"file-secret"}) {
		t.Errorf("imagePullSecrets announced as %s %v, want array [file-secret]", a.CollectionType, a.Array)
	}
	if a := byName["images"]; a.CollectionType != "map" {
		t.Errorf("images announced as collectionType %q, want map", a.CollectionType)
	}
}

// testDeadline: the bundle is an image on a registry that accepts the
// connection and never answers. The caller's deadline must end the call: in
// native mode with DeadlineExceeded and olm-cmp's own message, which shows the
// server itself gave up in time (a server that ignored the deadline leaves
// only the client's bare "context deadline exceeded"); in classic mode the
// forked olm-cmp generate must be gone. The plugin must go on serving other
// applications.
func testDeadline(t *testing.T, mode string, startServer startFunc, repo string) {
	var (
		mu        sync.Mutex
		requests  []string
		cancelled = make(chan string, 100)
		release   = make(chan struct{})
	)
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, r.Method+" "+r.URL.Path)
		mu.Unlock()
		select {
		case <-r.Context().Done():
			cancelled <- r.Method + " " + r.URL.Path
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); reg.Close() })
	host := strings.TrimPrefix(reg.URL, "http://")
	// A plain-HTTP registry must be opted in.
	t.Setenv("ARGOCD_PLUGINSOCKFILEPATH", startServer(t, "--insecure-registry", host))

	r := newRepo(t)
	r.file("apps/slow/olm-cmp.yaml", olmCmpYAML("slow",
		"bundle: "+host+"/olm/slow-bundle:v1",
		"namespace: slow-ns",
	))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	_, _, err := argoGenerate(ctx, GenRequest{RepoRoot: r.root, AppPath: "apps/slow", AppName: "slow",
		Plugin: &Plugin{Name: pluginCfg.pluginName()}})
	t.Logf("%s: returned after %v: %v", mode, time.Since(start).Round(time.Millisecond), err)
	if err == nil {
		t.Fatal("GenerateManifests succeeded against a registry that never answers")
	}
	mu.Lock()
	n := len(requests)
	mu.Unlock()
	if n == 0 {
		t.Fatalf("the plugin never reached the registry (so this test proves nothing); error: %v", err)
	}
	switch mode {
	case "native":
		if !isDeadline(err) {
			t.Errorf("error is not DeadlineExceeded: %v", err)
		} else if !strings.Contains(err.Error(), "olm-cmp") {
			t.Errorf("the DeadlineExceeded error is the client's own, not olm-cmp's: the server did not end the call at the caller's deadline: %v", err)
		}
	case "classic":
		// Argo CD's cmp-server kills `olm-cmp generate` at the deadline and
		// reports that in its own words (code Unknown, "signal: killed"); what
		// matters is that the process is gone, with its registry connection.
		select {
		case req := <-cancelled:
			t.Logf("classic: olm-cmp generate is gone; its registry request %s was abandoned", req)
		case <-time.After(30 * time.Second):
			t.Errorf("olm-cmp generate still waits on the registry 30s after the deadline")
		}
	}

	// The stuck registry must not stall other applications.
	m, _, err := argoGenerate(ctxTimeout(t, time.Minute), GenRequest{RepoRoot: repo, AppPath: "apps/greeter", AppName: "greeter",
		Plugin: &Plugin{Name: pluginCfg.pluginName()}})
	if err != nil {
		t.Fatalf("after the timed-out call, another app fails: %v", err)
	}
	checkGreeter(t, decodeManifests(t, m), "file-ns", []string{"file-secret"})

	if mode == "native" {
		select {
		case req := <-cancelled:
			t.Logf("native: the plugin abandoned its registry request %s", req)
		default:
			t.Logf("native: the plugin's registry request is still open after the call ended (a background pull, bounded by the server's own pull timeout)")
		}
	}
}
