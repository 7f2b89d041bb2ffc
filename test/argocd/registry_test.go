// Shared by test/argocd (Argo CD v2) and test/argocd-v3 (symlinked there).

package cmptest

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"sigs.k8s.io/yaml"
)

// testRegistry is go-containerregistry's in-memory registry on 127.0.0.1,
// behind a handler that counts what clients ask for.
type testRegistry struct {
	host string // 127.0.0.1:port

	mu     sync.Mutex
	counts map[string]int // "GET manifest olm/x:v1", "GET blob sha256:…", …
}

func startRegistry(t testing.TB) *testRegistry {
	t.Helper()
	r := &testRegistry{counts: map[string]int{}}
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.record(req)
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.host = strings.TrimPrefix(srv.URL, "http://")
	return r
}

func (r *testRegistry) record(req *http.Request) {
	// /v2/<repo>/manifests/<ref>, /v2/<repo>/blobs/<digest>, /v2/
	p := strings.TrimPrefix(req.URL.Path, "/v2/")
	key := req.Method + " other " + req.URL.Path
	if i := strings.LastIndex(p, "/manifests/"); i >= 0 {
		key = req.Method + " manifest " + p[:i] + ":" + p[i+len("/manifests/"):]
	} else if i := strings.LastIndex(p, "/blobs/"); i >= 0 && !strings.Contains(p, "/blobs/uploads") {
		key = req.Method + " blob " + p[i+len("/blobs/"):]
	}
	r.mu.Lock()
	r.counts[key]++
	r.mu.Unlock()
}

func (r *testRegistry) reset() {
	r.mu.Lock()
	r.counts = map[string]int{}
	r.mu.Unlock()
}

func (r *testRegistry) snapshot() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.counts))
	for k, v := range r.counts {
		out[k] = v
	}
	return out
}

// sum adds the counts whose key starts with prefix ("GET manifest ", "GET blob sha256:…").
func sum(counts map[string]int, prefix string) int {
	n := 0
	for k, v := range counts {
		if strings.HasPrefix(k, prefix) {
			n += v
		}
	}
	return n
}

func dump(counts map[string]int) string {
	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %4d  %s\n", counts[k], k)
	}
	return b.String()
}

// pushedBundle is a bundle directory pushed as an image.
type pushedBundle struct {
	Tag, Digest string // host/repo:tag, host/repo@sha256:…
	Layers      []string
	Config      string
}

// pushBundle pushes a registry+v1 bundle directory (manifests/, metadata/) as
// a one-layer image labelled like opm's bundle images.
func pushBundle(t testing.TB, host, repoTag, dir string) pushedBundle {
	t.Helper()
	layerTar, err := tarDir(dir, "manifests", "metadata")
	if err != nil {
		t.Fatal(err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{}
	if data, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml")); err == nil {
		var a struct {
			Annotations map[string]string `json:"annotations"`
		}
		if err := yaml.Unmarshal(data, &a); err == nil {
			labels = a.Annotations
		}
	}
	img, err = mutate.Config(img, v1.Config{Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(host+"/"+repoTag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	ls, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	pb := pushedBundle{Tag: ref.String(), Digest: ref.Context().Digest(d.String()).String(), Config: cfg.String()}
	for _, l := range ls {
		ld, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		pb.Layers = append(pb.Layers, ld.String())
	}
	return pb
}

// tarDir tars the named top-level subdirectories of dir, with directory entries.
func tarDir(dir string, subdirs ...string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, sub := range subdirs {
		err := filepath.Walk(filepath.Join(dir, sub), func(p string, info os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			hdr := &tar.Header{Name: filepath.ToSlash(rel), ModTime: time.Unix(0, 0), Mode: 0o644}
			switch {
			case info.IsDir():
				hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, hdr.Name+"/", 0o755
				return tw.WriteHeader(hdr)
			case info.Mode().IsRegular():
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(data))
				if err := tw.WriteHeader(hdr); err != nil {
					return err
				}
				_, err = tw.Write(data)
				return err
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// TestConcurrentPullsCollapse: 100 concurrent GenerateManifest calls (through
// the repo-server's code path) for one bundle image reach the registry for
// one manifest GET and one GET per blob, and all return the same output.
func TestConcurrentPullsCollapse(t *testing.T) {
	requireBinary(t)
	reg := startRegistry(t)
	pb := pushBundle(t, reg.host, "olm/greeter-bundle:v1", demoBundleDir())
	t.Logf("pushed %s = %s (layers %v, config %s)", pb.Tag, pb.Digest, pb.Layers, pb.Config)

	for _, ref := range []struct{ name, ref string }{{"tag", pb.Tag}, {"digest", pb.Digest}} {
		t.Run(ref.name, func(t *testing.T) {
			srv := startNative(t, "--insecure-registry", reg.host) // fresh: empty memory and disk caches
			t.Setenv("ARGOCD_PLUGINSOCKFILEPATH", srv.socketDir)
			r := newRepo(t)
			r.file("apps/img/olm-cmp.yaml", olmCmpYAML("greeter-operator",
				"bundle: "+ref.ref,
				"namespace: img-ns",
			))
			reg.reset()

			const n = 100
			outs := make([][]string, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					outs[i], _, errs[i] = argoGenerate(ctxTimeout(t, 2*time.Minute), GenRequest{
						RepoRoot: r.root, AppPath: "apps/img", AppName: fmt.Sprintf("img-%d", i),
						Plugin: &Plugin{Name: pluginCfg.pluginName()},
					})
				}()
			}
			close(start)
			wg.Wait()

			failed := 0
			for i, err := range errs {
				if err != nil {
					if failed < 3 {
						t.Errorf("call %d: %v", i, err)
					}
					failed++
				}
			}
			if failed > 0 {
				t.Fatalf("%d of %d calls failed", failed, n)
			}
			for i := 1; i < n; i++ {
				if strings.Join(outs[i], "\n") != strings.Join(outs[0], "\n") {
					t.Fatalf("call %d returned different manifests than call 0", i)
				}
			}
			objs := decodeManifests(t, outs[0])
			if _, ok := findObj(objs, "Deployment", "greeter-operator-controller"); !ok {
				t.Errorf("no operator Deployment in %v", kindsOf(objs))
			}

			counts := reg.snapshot()
			t.Logf("registry requests for %d concurrent calls:\n%s", n, dump(counts))
			if got := sum(counts, "GET manifest "); got != 1 {
				t.Errorf("manifest GETs: %d, want exactly 1", got)
			}
			for _, l := range pb.Layers {
				if got := sum(counts, "GET blob "+l); got != 1 {
					t.Errorf("GETs of layer %s: %d, want exactly 1", l, got)
				}
			}
			if got := sum(counts, "GET blob "+pb.Config); got > 1 {
				t.Errorf("GETs of the config blob: %d, want at most 1", got)
			}
			if got, want := sum(counts, "GET blob "), sum(counts, "GET blob "+pb.Config)+len(pb.Layers); got != want {
				t.Errorf("blob GETs: %d, want %d (each layer once, the config at most once)", got, want)
			}
		})
	}
}
