package e2e

import (
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/olm-cmp/olm-cmp/hack/sidecar"
)

// privateRegistry is go-containerregistry's registry behind HTTP basic auth, as a private
// registry is: every /v2/ request without the one user's credentials gets 401 and a Basic
// challenge, unless open is set (for a test's own anonymous pushes). It counts what it served
// to whom.
type privateRegistry struct {
	host, user, pass string
	open             atomic.Bool
	mu               sync.Mutex
	authed, refused  map[string]int // "METHOD path" -> count
}

func servePrivateRegistry(t *testing.T, user, pass string) *privateRegistry {
	t.Helper()
	r := &privateRegistry{user: user, pass: pass, authed: map[string]int{}, refused: map[string]int{}}
	reg := registry.New(registry.Logger(nilLogger()))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	r.host = l.Addr().String()
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		u, p, ok := req.BasicAuth()
		key := req.Method + " " + req.URL.Path
		r.mu.Lock()
		if r.open.Load() || ok && u == r.user && p == r.pass {
			r.authed[key]++
			r.mu.Unlock()
			reg.ServeHTTP(w, req)
			return
		}
		r.refused[key]++
		r.mu.Unlock()
		w.Header().Set("WWW-Authenticate", `Basic realm="olm-cmp e2e"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return r
}

// authRegistry is a private registry for user, and the switch that opens it to anyone.
func authRegistry(t *testing.T, user, password string) (host string, open *atomic.Bool) {
	r := servePrivateRegistry(t, user, password)
	return r.host, &r.open
}

// counts is how many GETs of path the registry served with the credentials, and refused.
func (r *privateRegistry) counts(path string) (authed, refused int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.authed["GET "+path] + r.authed["HEAD "+path], r.refused["GET "+path] + r.refused["HEAD "+path]
}

// TestArgoCDPrivateRegistry (argocd suite, Argo CD 3.6.1): a bundle in a registry that wants
// credentials, through the sidecar as deployed. First the optional Secret olm-cmp-registry is
// absent (the kubelet mounts an empty directory): the sidecar starts, the Application gets a
// ComparisonError naming the spec line, the registry's 401 and the registry config to give, and
// nothing is applied.
// Then the Secret is created (the kubelet writes it into the mounted volume): the next revision
// syncs and is Healthy, and the registry saw the bundle's manifest fetched with exactly the
// Secret's credentials, a proof they reached the pull.
func TestArgoCDPrivateRegistry(t *testing.T) {
	e := setup(t)
	bin := argoV3Bin()
	priv := servePrivateRegistry(t, "e2e-puller", "s3cret-"+fmt.Sprint(time.Now().UnixNano()))
	a := startArgoCD(t, e, bin, argoOptions{v3: true, sidecar: func(s *sidecar.Spec) {
		// the private registry is plain HTTP too: the same env, both registries
		s.SetEnv("OLM_CMP_INSECURE_REGISTRIES", envOf(s, "OLM_CMP_INSECURE_REGISTRIES")+","+priv.host)
	}})
	t.Cleanup(func() {
		_, _ = kubectl(t, "-n", "argocd", "delete", "application", "private", "--ignore-not-found", "--wait=false")
	})
	tiny := filepath.Join(e.repo, "internal", "cmpserver", "testdata", "repo", "bundles", "tiny")
	ref := priv.host + "/private/tiny"
	auth := crane.WithAuth(&authn.Basic{Username: priv.user, Password: priv.pass})
	pushBundle(t, tiny, ref+":v1", nil, auth)
	digest, err := crane.Digest(ref+":v1", auth)
	must(t, err)
	if _, err := crane.Digest(ref + ":v1"); err == nil {
		t.Fatal("the private registry served the bundle without credentials")
	}
	manifest := "/v2/private/tiny/manifests/v1"
	ownAuthed, ownRefused := priv.counts(manifest) // the test's own push and lookups

	dir := filepath.Join(a.git, "private")
	must(t, os.MkdirAll(dir, 0o755))
	spec := func(note string) {
		must(t, os.WriteFile(filepath.Join(dir, "olm-cmp.yaml"), []byte(fmt.Sprintf(
			"# %s\napiVersion: olm-cmp.dev/v1alpha1\nkind: OperatorBundle\nspec:\n  bundle: %s\n  version: v1\n  namespace: private\n", note, ref)), 0o644))
	}
	spec("no registry Secret yet")
	a.commit("private bundle")
	a.application("private", "", "private", "private")

	// ---- without credentials: a ComparisonError naming the refusal and the Secret
	want := []string{"code = Unauthenticated", "private/olm-cmp.yaml: line 5: spec.bundle", "registry " + priv.host + " answered 401 Unauthorized", "--registry-config"}
	msg := waitComparisonError(t, "private", want)
	t.Logf("private without the Secret: ComparisonError: %s", msg)
	if strings.Contains(msg, priv.pass) || strings.Contains(msg, base64.StdEncoding.EncodeToString([]byte(priv.user+":"+priv.pass))) {
		t.Errorf("the ComparisonError holds the credential: %s", msg)
	}
	if authed, refused := priv.counts(manifest); authed != ownAuthed || refused == ownRefused {
		t.Errorf("before the Secret: %s served with credentials %d times beyond the test's own (want 0), refused %d (want > 0)", manifest, authed-ownAuthed, refused-ownRefused)
	}
	if st := appStatus(t, "private"); st.Status.OperationState.Phase != "" {
		t.Errorf("private was synced without its bundle: operation %q", st.Status.OperationState.Phase)
	}

	// ---- the Secret appears, as `kubectl create secret docker-registry olm-cmp-registry` makes it
	dockerConfig := fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, priv.host, base64.StdEncoding.EncodeToString([]byte(priv.user+":"+priv.pass)))
	must(t, a.pod.SetSecret("olm-cmp-registry", map[string]string{".dockerconfigjson": dockerConfig}))
	spec("the registry Secret exists")
	rev2 := a.commit("private bundle, with credentials")
	start := time.Now()
	refresh(t, "private", "hard")
	waitApp(t, "private", rev2, 6*time.Minute)
	t.Logf("private with the Secret: Synced + Healthy at %.8s in %v", rev2, time.Since(start).Round(time.Second))
	authed, _ := priv.counts(manifest)
	byDigest, _ := priv.counts("/v2/private/tiny/manifests/" + digest)
	if authed == ownAuthed && byDigest == 0 {
		t.Errorf("after the Secret: no manifest of private/tiny was fetched with its credentials (by tag %d, by digest %d)", authed-ownAuthed, byDigest)
	}
	t.Logf("registry: private/tiny's manifest served with the Secret's credentials %d times by tag, %d by digest", authed-ownAuthed, byDigest)
	ann := strings.TrimSpace(string(mustKubectl(t, "-n", "private", "get", "deploy", "-o", `jsonpath={.items[*].metadata.annotations.olm-cmp\.dev/source}`)))
	if !strings.Contains(ann, ref) {
		t.Errorf("live Deployment's olm-cmp.dev/source = %q, want the private image", ann)
	}
}

// envOf is the value of the container's env variable name, "" when unset.
func envOf(s *sidecar.Spec, name string) string {
	env, _ := s.Container["env"].([]any)
	for _, e := range env {
		if em, _ := e.(map[string]any); em["name"] == name {
			v, _ := em["value"].(string)
			return v
		}
	}
	return ""
}
