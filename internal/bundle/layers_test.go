package bundle

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/olm-cmp/olm-cmp/internal/archive"
	"github.com/olm-cmp/olm-cmp/internal/bundle/bundletest"
)

// faultyRegistry is go-containerregistry's in-process registry behind a
// handler a test can make misbehave.
type faultyRegistry struct {
	host  string
	mu    sync.Mutex
	fault func(w http.ResponseWriter, r *http.Request) bool // true when it answered
	blobs []string                                          // blob GETs served, by path
}

func newFaultyRegistry(t *testing.T) *faultyRegistry {
	t.Helper()
	f := &faultyRegistry{}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		fault := f.fault
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
			f.blobs = append(f.blobs, r.URL.Path)
		}
		f.mu.Unlock()
		if fault != nil && fault(w, r) {
			return
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.host = strings.TrimPrefix(srv.URL, "http://")
	return f
}

func (f *faultyRegistry) set(fault func(w http.ResponseWriter, r *http.Request) bool) {
	f.mu.Lock()
	f.fault, f.blobs = fault, nil
	f.mu.Unlock()
}

func (f *faultyRegistry) blobGets() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.blobs)
}

// onBlob returns a fault that answers GETs of blob d with serve.
func onBlob(d v1.Hash, serve func(w http.ResponseWriter)) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/blobs/"+d.String()) {
			return false
		}
		serve(w)
		return true
	}
}

// storedLayer builds a gzip layer without compression, so two layers whose
// tars have the same length have blobs of the same size.
func storedLayer(t *testing.T, entries ...bundletest.Entry) (v1.Layer, []byte) {
	t.Helper()
	l := bundletest.Layer(t, entries...)
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(rc)
	stored, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }, tarball.WithCompressionLevel(gzip.NoCompression))
	if err != nil {
		t.Fatal(err)
	}
	rc, err = stored.Compressed()
	if err != nil {
		t.Fatal(err)
	}
	blob, _ := io.ReadAll(rc)
	return stored, blob
}

func digestOf(t *testing.T, l v1.Layer) v1.Hash {
	t.Helper()
	d, err := l.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// loadFails loads ref and checks that it fails with want (errors.Is), names
// the digest, returns no bundle, and leaves nothing in the cache or beside it.
func loadFails(t *testing.T, l *ImageLoader, ref string, want error, digest string) error {
	t.Helper()
	ctx := context.Background()
	o, err := l.Resolve(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Load(ctx, o)
	if err == nil || b != nil {
		t.Fatalf("Load succeeded: %v", b)
	}
	t.Logf("Load error: %v", err)
	if want != nil && !errors.Is(err, want) {
		t.Errorf("Load error %q, want %q", err, want)
	}
	if !strings.Contains(err.Error(), digest) {
		t.Errorf("error %q does not name %s", err, digest)
	}
	if strings.Contains(err.Error(), "annotations.yaml") {
		t.Errorf("error %q blames the bundle for the layer", err)
	}
	var files []string
	filepath.WalkDir(filepath.Dir(l.CacheDir), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 0 {
		t.Errorf("files left behind: %v", files)
	}
	return err
}

func cachingLoader(t *testing.T, host string) *ImageLoader {
	return &ImageLoader{CacheDir: filepath.Join(t.TempDir(), "cache"), Insecure: []string{host}}
}

// TestLayerOfSameSizeUnderPinnedDigest: a registry serving another layer of
// the same size under the pinned digest gets nothing rendered or cached.
func TestLayerOfSameSizeUnderPinnedDigest(t *testing.T) {
	reg := newFaultyRegistry(t)
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\ndata:\n  image: %s\n"
	good, _ := storedLayer(t, bundletest.File("manifests/extra.yaml", fmt.Sprintf(cm, "good.io/operator")))
	_, evil := storedLayer(t, bundletest.File("manifests/extra.yaml", fmt.Sprintf(cm, "evil.io/pwned!!")))
	if size, _ := good.Size(); size != int64(len(evil)) {
		t.Fatalf("layers of %d and %d bytes: the test needs the same size", size, len(evil))
	}
	img := bundletest.Image(t, bundletest.Layer(t, bundletest.DirEntries(t, "testdata/good")...), good)
	bundletest.Push(t, reg.host, "tampered", "v1", img)
	d := digestOf(t, good)
	reg.set(onBlob(d, func(w http.ResponseWriter) { w.Write(evil) }))
	err := loadFails(t, cachingLoader(t, reg.host), reg.host+"/tampered:v1", errLayerDigest, d.String())
	if !strings.Contains(err.Error(), "layer 2 of 2") {
		t.Errorf("error %q does not say which layer", err)
	}
}

// TestLayerConnectionReset: a connection reset in the middle of a layer blob
// fails the load and caches nothing; once the fault is gone, a second load
// succeeds.
func TestLayerConnectionReset(t *testing.T) {
	reg := newFaultyRegistry(t)
	layer := bundletest.Layer(t, bundletest.DirEntries(t, "testdata/good")...)
	bundletest.Push(t, reg.host, "reset", "v1", bundletest.Image(t, layer))
	rc, err := layer.Compressed()
	if err != nil {
		t.Fatal(err)
	}
	blob, _ := io.ReadAll(rc)
	d := digestOf(t, layer)
	reg.set(onBlob(d, func(w http.ResponseWriter) {
		w.Header().Set("Content-Length", fmt.Sprint(len(blob)))
		w.WriteHeader(http.StatusOK)
		w.Write(blob[:len(blob)/2])
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetLinger(0) // close with a reset, not a clean FIN
		}
		conn.Close()
	}))
	l := cachingLoader(t, reg.host)
	loadFails(t, l, reg.host+"/reset:v1", nil, d.String())

	reg.set(nil)
	o, err := l.Resolve(context.Background(), reg.host+"/reset:v1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Load(context.Background(), o)
	if err != nil {
		t.Fatalf("second load: %v", err)
	}
	want, err := loadDir("testdata/good", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameBundle(t, b, want)
}

// TestLayerNotATar: a layer blob that is no tar in any compression is
// reported as such, not as a bundle without metadata.
func TestLayerNotATar(t *testing.T) {
	reg := newFaultyRegistry(t)
	junk := static.NewLayer([]byte("this is not a tarball, just some text"), types.DockerLayer)
	bundletest.Push(t, reg.host, "junk", "v1", bundletest.Image(t, junk))
	err := loadFails(t, cachingLoader(t, reg.host), reg.host+"/junk:v1", archive.ErrNotTar, digestOf(t, junk).String())
	if !strings.Contains(err.Error(), "layer 1 of 1") {
		t.Errorf("error %q does not say which layer", err)
	}
}

// rawManifest is a manifest pushed as is.
type rawManifest struct {
	data      []byte
	mediaType types.MediaType
}

func (r rawManifest) RawManifest() ([]byte, error)        { return r.data, nil }
func (r rawManifest) MediaType() (types.MediaType, error) { return r.mediaType, nil }

// pushEdited pushes img's manifest after edit, under host/repo:tag (img's
// blobs must be in the registry already).
func pushEdited(t *testing.T, host, repo, tag string, img v1.Image, edit func(*v1.Manifest)) {
	t.Helper()
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	m = m.DeepCopy()
	edit(m)
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.NewTag(host+"/"+repo+":"+tag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Put(ref, rawManifest{data, m.MediaType}); err != nil {
		t.Fatal(err)
	}
}

// TestLayerSizeLies: a manifest declaring a layer one byte shorter or
// longer than its blob fails the load.
func TestLayerSizeLies(t *testing.T) {
	reg := newFaultyRegistry(t)
	img := bundletest.ImageFromDir(t, "testdata/good")
	bundletest.Push(t, reg.host, "sizes", "honest", img)
	m, _ := img.Manifest()
	d := m.Layers[0].Digest
	for name, delta := range map[string]int64{"shorter": -1, "longer": 1} {
		t.Run(name, func(t *testing.T) {
			pushEdited(t, reg.host, "sizes", name, img, func(m *v1.Manifest) { m.Layers[0].Size += delta })
			loadFails(t, cachingLoader(t, reg.host), reg.host+"/sizes:"+name, nil, d.String())
		})
	}
}

// TestLayerCountCapped: an image of 20000 layers is refused on its
// manifest, before any blob is fetched.
func TestLayerCountCapped(t *testing.T) {
	reg := newFaultyRegistry(t)
	img := bundletest.ImageFromDir(t, "testdata/good")
	bundletest.Push(t, reg.host, "many", "one", img)
	pushEdited(t, reg.host, "many", "v1", img, func(m *v1.Manifest) {
		m.Layers = slices.Repeat(m.Layers[:1], 20000)
	})
	l := cachingLoader(t, reg.host)
	o, err := l.Resolve(context.Background(), reg.host+"/many:v1")
	if err != nil {
		t.Fatal(err)
	}
	reg.set(nil)
	start := time.Now()
	_, err = l.Load(context.Background(), o)
	elapsed := time.Since(start)
	t.Logf("20000 layers refused in %v: %v", elapsed, err)
	if err == nil || !strings.Contains(err.Error(), "20000 layers, over the limit of 128") || !strings.Contains(err.Error(), "MaxLayers") {
		t.Fatalf("Load error %v", err)
	}
	if n := reg.blobGets(); n != 0 {
		t.Errorf("%d blobs fetched before the refusal", n)
	}
	if elapsed > 30*time.Second {
		t.Errorf("took %v", elapsed)
	}
}

// TestOpaqueWhiteouts: an opaque whiteout empties its directory of what
// lower layers wrote, but not of what its own layer writes, before or
// after it; a plain whiteout removes one file of a lower layer.
func TestOpaqueWhiteouts(t *testing.T) {
	reg := newFaultyRegistry(t)
	cm := func(file, name string) bundletest.Entry {
		return bundletest.File(file, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "+name+"\n")
	}
	var manifests []bundletest.Entry
	for _, e := range bundletest.DirEntries(t, "testdata/good") {
		if strings.HasPrefix(e.Name, "manifests/") && e.Name != "manifests/" {
			manifests = append(manifests, e)
		}
	}
	img := bundletest.Image(t,
		bundletest.Layer(t, append(bundletest.DirEntries(t, "testdata/good"), cm("manifests/stale.yaml", "stale"), cm("manifests/gone.yaml", "gone"))...),
		bundletest.Layer(t, append([]bundletest.Entry{cm("manifests/before.yaml", "before"), {Name: "manifests/.wh..wh..opq"}}, append(manifests, cm("manifests/after.yaml", "after"), cm("manifests/later.yaml", "later"))...)...),
		bundletest.Layer(t, bundletest.Whiteout("manifests/later.yaml")),
	)
	bundletest.Push(t, reg.host, "opaque", "v1", img)
	l := cachingLoader(t, reg.host)
	o, err := l.Resolve(context.Background(), reg.host+"/opaque:v1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Load(context.Background(), o)
	if err != nil {
		t.Fatal(err) // metadata/ (not below the opaque directory) is kept
	}
	var files []string
	for _, obj := range b.Others {
		if !slices.Contains(files, obj.File) {
			files = append(files, obj.File)
		}
	}
	slices.Sort(files)
	want := []string{"manifests/after.yaml", "manifests/before.yaml", "manifests/config.json", "manifests/multi.yaml", "manifests/rbac-list.yaml"}
	if !slices.Equal(files, want) {
		t.Errorf("files %v\nwant %v", files, want)
	}
}

// TestLayerDiffIDChecked: a layer whose blob matches its digest but whose
// content is not what the image config's diff_id says fails the load.
func TestLayerDiffIDChecked(t *testing.T) {
	reg := newFaultyRegistry(t)
	img := bundletest.ImageFromDir(t, "testdata/good")
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	bundletest.Push(t, reg.host, "diffid", "honest", img)
	cfg = cfg.DeepCopy()
	cfg.RootFS.DiffIDs[0] = v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("0", 64)}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	blob := static.NewLayer(data, types.DockerConfigJSON)
	repo, err := name.NewRepository(reg.host+"/diffid", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteLayer(repo, blob); err != nil {
		t.Fatal(err)
	}
	pushEdited(t, reg.host, "diffid", "v1", img, func(m *v1.Manifest) {
		m.Config.Digest, m.Config.Size = digestOf(t, blob), int64(len(data))
	})
	m, _ := img.Manifest()
	loadFails(t, cachingLoader(t, reg.host), reg.host+"/diffid:v1", errDiffID, m.Layers[0].Digest.String())
}

// TestLayerCountOption: MaxLayers lowers the cap.
func TestLayerCountOption(t *testing.T) {
	reg := newFaultyRegistry(t)
	img := bundletest.Image(t, bundletest.Layer(t, bundletest.DirEntries(t, "testdata/good")...), bundletest.Layer(t, bundletest.File("manifests/x.yaml", "")))
	bundletest.Push(t, reg.host, "two", "v1", img)
	l := cachingLoader(t, reg.host)
	l.MaxLayers = 1
	o, err := l.Resolve(context.Background(), reg.host+"/two:v1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Load(context.Background(), o); err == nil || !strings.Contains(err.Error(), "2 layers, over the limit of 1") {
		t.Errorf("Load error %v", err)
	}
}
