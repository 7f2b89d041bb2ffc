// Package bundletest runs an in-process OCI registry and pushes bundle
// images to it, for tests of every package that loads bundles from images
// (bundle, render, the plugin server, e2e).
//
//	host, reqs := bundletest.NewRegistry(t)
//	digest := bundletest.PushDir(t, host, "operators/widget", "v1", "testdata/widget")
//	loader := &bundle.ImageLoader{Insecure: []string{host}, CacheDir: t.TempDir()}
//	origin, _ := loader.Resolve(ctx, host+"/operators/widget:v1")
//
// The registry listens on 127.0.0.1 over plain HTTP, so loaders must list
// host in ImageLoader.Insecure. It stops when the test ends.
package bundletest

import (
	"archive/tar"
	"bytes"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Request is one HTTP request the registry served.
type Request struct{ Method, Path string }

// Counter records the requests a test registry served. Safe for concurrent use.
type Counter struct {
	mu   sync.Mutex
	reqs []Request
}

func (c *Counter) add(r Request) {
	c.mu.Lock()
	c.reqs = append(c.reqs, r)
	c.mu.Unlock()
}

// Requests returns a copy of the requests served so far.
func (c *Counter) Requests() []Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.reqs)
}

// Total is the number of requests served.
func (c *Counter) Total() int { return len(c.Requests()) }

// Manifests counts manifest requests (GET or HEAD /v2/<repo>/manifests/<ref>).
func (c *Counter) Manifests() int {
	return c.Count(func(r Request) bool { return strings.Contains(r.Path, "/manifests/") })
}

// BlobGets counts blob downloads (GET /v2/<repo>/blobs/<digest>): one pull
// of a one-layer image is two (config and layer).
func (c *Counter) BlobGets() int {
	return c.Count(func(r Request) bool { return r.Method == http.MethodGet && strings.Contains(r.Path, "/blobs/") })
}

// Count counts the requests match accepts.
func (c *Counter) Count(match func(Request) bool) int {
	n := 0
	for _, r := range c.Requests() {
		if match(r) {
			n++
		}
	}
	return n
}

// Reset forgets the requests served so far (e.g. those of a push).
func (c *Counter) Reset() {
	c.mu.Lock()
	c.reqs = nil
	c.mu.Unlock()
}

// NewRegistry starts go-containerregistry's in-memory registry on
// 127.0.0.1 and returns its host:port and a request counter.
func NewRegistry(t testing.TB) (host string, requests *Counter) {
	t.Helper()
	requests = &Counter{}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.add(Request{Method: r.Method, Path: r.URL.Path})
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), requests
}

// NewAuthRegistry is NewRegistry behind HTTP basic authentication with the
// given credentials. Push and PushDir to it authenticate by themselves.
func NewAuthRegistry(t testing.TB, user, password string) (host string, requests *Counter) {
	t.Helper()
	requests = &Counter{}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.add(Request{Method: r.Method, Path: r.URL.Path})
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="bundletest"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	host = strings.TrimPrefix(srv.URL, "http://")
	credentials.Store(host, &authn.Basic{Username: user, Password: password})
	t.Cleanup(func() { credentials.Delete(host) })
	return host, requests
}

// credentials maps the hosts of NewAuthRegistry to their login, for Push.
var credentials sync.Map

// PushDir pushes the bundle in dir (its manifests/ and metadata/) as a
// one-layer image to host/repo:tag and returns the manifest digest. The image
// is deterministic: pushing the same files gives the same digest.
func PushDir(t testing.TB, host, repo, tag, dir string) string {
	t.Helper()
	return Push(t, host, repo, tag, ImageFromDir(t, dir))
}

// Push pushes img to host/repo:tag and returns its digest.
func Push(t testing.TB, host, repo, tag string, img v1.Image) string {
	t.Helper()
	ref, err := name.NewTag(host+"/"+repo+":"+tag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	var opts []remote.Option
	if c, ok := credentials.Load(host); ok {
		opts = append(opts, remote.WithAuth(c.(authn.Authenticator)))
	}
	if err := remote.Write(ref, img, opts...); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// ImageFromDir builds a one-layer image of dir's manifests/ and metadata/.
func ImageFromDir(t testing.TB, dir string) v1.Image {
	t.Helper()
	return Image(t, Layer(t, DirEntries(t, dir)...))
}

// Image stacks layers, first at the bottom, on an empty image.
func Image(t testing.TB, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// Entry is one layer tar entry. Type defaults to a regular file (or a
// directory when Name ends in "/").
type Entry struct {
	Name     string
	Body     []byte
	Type     byte
	Linkname string
}

// File is a regular file entry.
func File(name, body string) Entry { return Entry{Name: name, Body: []byte(body)} }

// Whiteout is an entry deleting name from the layers below.
func Whiteout(name string) Entry {
	return Entry{Name: path.Join(path.Dir(name), ".wh."+path.Base(name))}
}

// Symlink is a symbolic link entry.
func Symlink(name, target string) Entry {
	return Entry{Name: name, Type: tar.TypeSymlink, Linkname: target}
}

// DirEntries returns the files of dir's manifests/ and metadata/, sorted,
// as layer entries (directories first, as image builders write them).
func DirEntries(t testing.TB, dir string) []Entry {
	t.Helper()
	// A missing directory is a broken test path, not an image without
	// manifests: fail here rather than push an empty image.
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("bundle directory %s: not a directory (%v)", dir, err)
	}
	var out []Entry
	for _, sub := range []string{"manifests", "metadata"} {
		err := filepath.WalkDir(filepath.Join(dir, sub), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				out = append(out, Entry{Name: rel + "/", Type: tar.TypeDir})
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out = append(out, Entry{Name: rel, Body: data})
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	return out
}

// TreeEntries returns every file below dir as layer entries named
// prefix + their path relative to dir, sorted, directories first, e.g.
// TreeEntries(t, "testdata/catalog", "configs/") for a catalog image.
func TreeEntries(t testing.TB, dir, prefix string) []Entry {
	t.Helper()
	var out []Entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := path.Join(prefix, filepath.ToSlash(rel))
		if d.IsDir() {
			if name != "." && name != "" {
				out = append(out, Entry{Name: name + "/", Type: tar.TypeDir})
			}
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, Entry{Name: name, Body: data})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// CatalogImage builds a catalog image: one layer holding the file-based
// catalog in dir under configsDir (e.g. "/configs"), and the image config
// label operators.operatorframework.io.index.configs.v1 naming it. Extra
// entries (say, an opm binary beside the catalog) go into the same layer.
func CatalogImage(t testing.TB, dir, configsDir string, extra ...Entry) v1.Image {
	t.Helper()
	entries := append(TreeEntries(t, dir, strings.Trim(configsDir, "/")+"/"), extra...)
	return WithLabels(t, Image(t, Layer(t, entries...)), map[string]string{
		"operators.operatorframework.io.index.configs.v1": configsDir,
	})
}

// WithLabels returns img with labels added to its config.
func WithLabels(t testing.TB, img v1.Image, labels map[string]string) v1.Image {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg := *cf.Config.DeepCopy()
	if cfg.Labels == nil {
		cfg.Labels = map[string]string{}
	}
	for k, v := range labels {
		cfg.Labels[k] = v
	}
	out, err := mutate.Config(img, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Layer builds a layer holding entries, in the given order.
func Layer(t testing.TB, entries ...Entry) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.Name, Typeflag: e.Type, Linkname: e.Linkname, Mode: 0o644, Format: tar.FormatPAX}
		switch {
		case h.Typeflag == 0 && strings.HasSuffix(e.Name, "/"):
			h.Typeflag = tar.TypeDir
		case h.Typeflag == 0:
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag == tar.TypeDir {
			h.Mode = 0o755
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.Body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(e.Body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}
